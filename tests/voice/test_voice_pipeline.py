"""A voice turn end to end: audio -> Wyoming STT -> our agent + HTTP tool ->
Wyoming TTS -> audio, through Home Assistant's own `wyoming` integration and
Assist pipeline.

The servers are real Wyoming servers on 127.0.0.1 (the `wyoming` library).
The TTS really synthesises with espeak-ng. The STT cannot be a real
recogniser (no STT model can be fetched here): it synthesised the command with
espeak-ng itself when it started and transcribes the audio it is given only by
comparing it with that, sample for sample. The command audio the test sends is
espeak-ng speaking "What's the weather in Rome?", converted to 16 kHz 16-bit
mono, what a satellite streams. The model answers from the scripted
OpenAI-compatible server (captured real-server bodies and Qwen3-Coder XML).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from homeassistant.components import media_source, stt, tts
from homeassistant.components.assist_pipeline import (
    PipelineEvent,
    PipelineEventType,
    async_pipeline_from_audio_stream,
)
from homeassistant.core import Context
import pytest

from tests.kit import assert_rome_weather_ran, chat_log_deltas, question
from tests.markup import assert_clean
from tests.servers import (
    QWEN_THINK_AND_CALL,
    QWEN_THOUGHT,
    text_stream,
    transcript,
)

from .conftest import COMMAND, Voice
from .wyoming_servers import (
    espeak,
    parse_wav,
    spoken_command,
)

ANSWER = "In Rome it is sunny and 14 degrees."

SHORT = {
    "llama-cpp-python-bare-json": transcript("llama-cpp-python__weather_stream"),
    "qwen3-coder-xml+think": text_stream(*QWEN_THINK_AND_CALL),
}


async def run_voice_turn(voice: Voice, said: str = COMMAND) -> list[PipelineEvent]:
    """Stream espeak-ng saying `said` through the pipeline as a satellite
    does; return the events."""
    audio = await spoken_command(said)

    async def microphone() -> AsyncGenerator[bytes]:
        for start in range(0, len(audio), 2048):  # 64 ms chunks
            yield audio[start : start + 2048]

    events: list[PipelineEvent] = []
    await async_pipeline_from_audio_stream(
        voice.hass,
        context=Context(),
        event_callback=events.append,
        stt_metadata=stt.SpeechMetadata(
            language="en",
            format=stt.AudioFormats.WAV,
            codec=stt.AudioCodecs.PCM,
            bit_rate=stt.AudioBitRates.BITRATE_16,
            sample_rate=stt.AudioSampleRates.SAMPLERATE_16000,
            channel=stt.AudioChannels.CHANNEL_MONO,
        ),
        stt_stream=microphone(),
        pipeline_id=voice.pipeline.id,
        # WAV as the TTS makes it: no ffmpeg conversion.
        tts_audio_output={tts.ATTR_PREFERRED_FORMAT: "wav"},
    )
    return events


def assert_spoken_clean(text: str) -> None:
    """What reached TTS: no call markup, no thinking, no call JSON."""
    assert_clean(text, QWEN_THOUGHT, "get_weather")


def assert_turn(voice: Voice, events: list[PipelineEvent]) -> None:
    """The stages ran in order; the STT heard the command; the tool ran."""
    types = [e.type for e in events]
    assert PipelineEventType.ERROR not in types, [e.data for e in events]
    stages = [
        PipelineEventType.RUN_START,
        PipelineEventType.STT_START,
        PipelineEventType.STT_END,
        PipelineEventType.INTENT_START,
        PipelineEventType.INTENT_END,
        PipelineEventType.TTS_START,
        PipelineEventType.TTS_END,
        PipelineEventType.RUN_END,
    ]
    assert [t for t in types if t in stages] == stages
    stt_end = next(e for e in events if e.type is PipelineEventType.STT_END)
    assert stt_end.data == {"stt_output": {"text": COMMAND}}
    assert voice.stt.transcripts == [COMMAND]
    # The transcript is what the model was asked.
    assert question(voice.llm.requests[0]["messages"][-1]) == COMMAND

    assert_rome_weather_ran(chat_log_deltas(events), voice.tools)


async def assert_speech(voice: Voice, events: list[PipelineEvent]) -> bytes:
    """The TTS audio exists, is a WAV, and is what the TTS server spoke.

    It is read the way a media player gets it: the `tts-end` media id is
    resolved through HA's media source to a URL, which is fetched over HTTP.
    """
    end = next(e for e in events if e.type is PipelineEventType.TTS_END)
    assert end.data is not None
    output = end.data["tts_output"]
    assert output["mime_type"] == "audio/x-wav"
    media = await media_source.async_resolve_media(voice.hass, output["media_id"], None)
    assert media.url == output["url"]
    assert media.url.startswith("/api/tts_proxy/")
    response = await voice.http.get(media.url)
    assert response.status == 200
    assert response.content_type == "audio/x-wav"
    pcm = parse_wav(await response.read())
    assert (pcm.rate, pcm.width, pcm.channels) == (22050, 2, 1)
    assert pcm.seconds > 1.0
    assert any(pcm.audio[i] for i in range(0, len(pcm.audio), 97)), "silence"
    assert pcm.audio == b"".join(s.audio.audio for s in voice.tts.spoken)
    return pcm.audio


@pytest.mark.parametrize(
    ("tts_streaming", "first_round"),
    [
        (False, "llama-cpp-python-bare-json"),
        (False, "qwen3-coder-xml+think"),
        (True, "qwen3-coder-xml+think"),
    ],
    ids=[
        "tts-plain-bare-json",
        "tts-plain-qwen-xml+think",
        "tts-streaming-qwen-xml+think",
    ],
)
async def test_voice_turn_calls_the_tool_and_speaks_the_answer(
    voice: Voice,
    tts_streaming: bool,
    first_round: str,
) -> None:
    """Audio in, the HTTP tool called, clean speech out.

    The Wyoming STT transcribes the espeak-ng audio (by comparison with the
    audio of phrases it synthesised itself, see the module docstring); the
    model's call (bare JSON from llama-cpp-python, or Qwen3-Coder XML after a
    `<think>` block) runs the tool; the Wyoming TTS gets only the answer, as
    one `synthesize` or as `synthesize-chunk` events, and its espeak-ng audio
    is what the pipeline's TTS output holds.
    """
    voice.llm.add(
        SHORT[first_round], text_stream("In Rome it is sunny ", "and 14 degrees.")
    )

    events = await run_voice_turn(voice)

    assert_turn(voice, events)
    # Fetching the audio waits for the synthesis (a background task of tts).
    audio = await assert_speech(voice, events)
    assert_spoken_clean(voice.tts.received_text)
    if tts_streaming:
        # A short answer is sent once it is complete, through the streaming events.
        assert "".join(voice.tts.chunk_texts) == ANSWER
        assert voice.tts.synthesize_texts == [ANSWER]
    else:
        assert voice.tts.chunk_texts == []
        assert voice.tts.synthesize_texts == [ANSWER]
    assert [s.text for s in voice.tts.spoken] == [ANSWER]
    # The speech is espeak-ng saying exactly the answer.
    assert audio == (await espeak(ANSWER)).audio
    # Short answers are not streamed to TTS by the pipeline.
    assert not any(
        e.data and e.data.get("tts_start_streaming")
        for e in events
        if e.type is PipelineEventType.INTENT_PROGRESS
    )


LONG_HEAD = (
    "In Rome it is sunny and 14 degrees right now, ",
    "with a light breeze from the sea. ",
)
LONG_TAIL = (
    "Tonight it will be clear ",
    "and a little cooler, ",
    "so take a jacket if you go out.",
)
FIRST_SENTENCE = "".join(LONG_HEAD).strip()
SECOND_SENTENCE = "".join(LONG_TAIL)


async def test_long_answer_is_spoken_before_the_model_has_finished(
    voice: Voice,
) -> None:
    """Streaming TTS starts on the first sentence while the model still writes.

    The answer streams slowly, and the scripted server stops writing after its
    first sentence (over the pipeline's 60-character threshold) until the
    Wyoming TTS has sent audio for that sentence. So the answer can only be
    finished if the TTS spoke before it was: the hold must be released, not
    timed out, and the TTS's first text and audio come before the model's end.
    """
    voice.llm.add(
        transcript("llama-cpp-python__weather_stream"),
        text_stream(
            *LONG_HEAD,
            *LONG_TAIL,
            chunk_delay=0.01,
            hold_before_piece=len(LONG_HEAD),
            hold_until=lambda: voice.timeline.wait_for("tts", "audio"),
        ),
    )
    answer = "".join(LONG_HEAD + LONG_TAIL)

    events = await run_voice_turn(voice)

    assert_turn(voice, events)
    # The pipeline switched to streaming TTS during the intent stage.
    types = [e.type for e in events]
    start_streaming = next(
        i
        for i, e in enumerate(events)
        if e.type is PipelineEventType.INTENT_PROGRESS
        and e.data
        and e.data.get("tts_start_streaming")
    )
    assert start_streaming < types.index(PipelineEventType.INTENT_END)

    await assert_speech(voice, events)
    kinds = [(m.source, m.kind) for m in voice.timeline.marks]
    assert ("llm", "hold-timeout") not in kinds
    model_done = voice.timeline.index("llm", "done", last=True)
    assert voice.timeline.index("llm", "release") < model_done
    assert voice.timeline.index("tts", "synthesize-start") < model_done
    assert voice.timeline.index("tts", "synthesize-chunk") < model_done
    assert voice.timeline.index("tts", "audio") < model_done
    # What the TTS spoke before the model went on was the first sentence.
    assert voice.timeline.of("tts", "audio")[0].text == FIRST_SENTENCE

    # Everything reached the TTS, clean, and was spoken sentence by sentence.
    assert_spoken_clean(voice.tts.received_text)
    assert "".join(voice.tts.chunk_texts) == answer
    assert voice.tts.synthesize_texts == [answer]
    assert [s.text for s in voice.tts.spoken] == [FIRST_SENTENCE, SECOND_SENTENCE]
    assert voice.timeline.index("tts", "synthesize-stopped") > model_done


async def test_text_before_a_call_starts_tts_streaming(
    voice: Voice,
) -> None:
    """A sentence before a Qwen XML call is spoken; thinking and markup are not.

    The pipeline starts streaming TTS when a tool call follows text; the TTS
    must get the sentence, then the answer, and nothing of the `<think>`
    block or the call.
    """
    preface = "Let me check the weather for you."
    voice.llm.add(
        text_stream(
            QWEN_THINK_AND_CALL[0],
            QWEN_THINK_AND_CALL[1],
            "ink>\n\n" + preface[:11],
            preface[11:] + "\n<tool",
            *QWEN_THINK_AND_CALL[3:],
        ),
        text_stream("In Rome it is sunny ", "and 14 degrees."),
    )

    events = await run_voice_turn(voice)

    assert_turn(voice, events)
    progress = [
        e.data or {} for e in events if e.type is PipelineEventType.INTENT_PROGRESS
    ]
    call_at = next(
        i
        for i, d in enumerate(progress)
        if d.get("chat_log_delta", {}).get("tool_calls")
    )
    streaming_at = next(
        i for i, d in enumerate(progress) if d.get("tts_start_streaming")
    )
    result_at = next(
        i
        for i, d in enumerate(progress)
        if d.get("chat_log_delta", {}).get("role") == "tool_result"
    )
    assert call_at < streaming_at < result_at
    await assert_speech(voice, events)
    assert_spoken_clean(voice.tts.received_text)
    received = "".join(voice.tts.chunk_texts)
    assert " ".join(received.split()) == f"{preface} {ANSWER}"
    assert [s.text for s in voice.tts.spoken] == [preface, ANSWER]


async def test_unknown_audio_is_not_transcribed(
    voice: Voice,
) -> None:
    """The STT only knows its phrases: other audio ends the run with an STT error."""
    events = await run_voice_turn(voice, "Turn on the lights.")

    error = next(e for e in events if e.type is PipelineEventType.ERROR)
    assert error.data is not None
    assert error.data["code"] == "stt-no-text-recognized"
    assert voice.stt.transcripts == [""]
    assert voice.llm.requests == []
    assert voice.tts.received_text == ""
