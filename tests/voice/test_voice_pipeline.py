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
from typing import Any

from homeassistant.components import media_source, stt, tts
from homeassistant.components.assist_pipeline import (
    PipelineEvent,
    PipelineEventType,
    async_pipeline_from_audio_stream,
)
from homeassistant.components.assist_pipeline.models import Pipeline
from homeassistant.core import Context, HomeAssistant
import pytest

from tests.servers import ToolEndpoint, text_stream, transcript

from .conftest import COMMAND, HttpClient
from .wyoming_servers import (
    PacedLLMServer,
    Timeline,
    WyomingSTT,
    WyomingTTS,
    espeak,
    paced_text_stream,
    parse_wav,
    spoken_command,
)

MARKUP = ("<tool_call", "</tool_call>", "<function", "<parameter", "<think", "</think>")
THOUGHT = "The user wants the weather"

# Qwen3-Coder's native call after a thinking block, split across the tags.
QWEN_THINK_AND_CALL = (
    "<thi",
    f"nk>{THOUGHT}. I will call get_weather.</th",
    "ink>\n\n<tool",
    "_call>\n<function=get_wea",
    "ther>\n<parameter=city>\nRome\n</param",
    "eter>\n</function>\n</tool_call>",
)
ANSWER = "In Rome it is sunny and 14 degrees."

SHORT = {
    "llama-cpp-python-bare-json": transcript("llama-cpp-python__weather_stream"),
    "qwen3-coder-xml+think": text_stream(*QWEN_THINK_AND_CALL),
}


async def run_voice_turn(
    hass: HomeAssistant, pipeline: Pipeline, audio: bytes
) -> list[PipelineEvent]:
    """Stream `audio` through the pipeline as a satellite does; return the events."""

    async def microphone() -> AsyncGenerator[bytes]:
        for start in range(0, len(audio), 2048):  # 64 ms chunks
            yield audio[start : start + 2048]

    events: list[PipelineEvent] = []
    await async_pipeline_from_audio_stream(
        hass,
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
        pipeline_id=pipeline.id,
        # WAV as the TTS makes it: no ffmpeg conversion.
        tts_audio_output={tts.ATTR_PREFERRED_FORMAT: "wav"},
    )
    return events


def deltas(events: list[PipelineEvent]) -> list[dict[str, Any]]:
    """The chat-log deltas the pipeline reported, in order."""
    return [
        e.data["chat_log_delta"]
        for e in events
        if e.type is PipelineEventType.INTENT_PROGRESS
        and e.data
        and "chat_log_delta" in e.data
    ]


def assert_clean(text: str) -> None:
    """No call markup, no thinking, no call JSON."""
    for marker in (*MARKUP, THOUGHT, '"arguments"', "get_weather"):
        assert marker not in text, f"{marker!r} reached TTS: {text!r}"


def assert_turn(
    events: list[PipelineEvent],
    llm_server: PacedLLMServer,
    tool_endpoint: ToolEndpoint,
    wyoming_stt: WyomingSTT,
) -> None:
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
    assert wyoming_stt.transcripts == [COMMAND]
    # The transcript is what the model was asked.
    assert llm_server.requests[0]["messages"][-1] == {
        "role": "user",
        "content": COMMAND,
    }

    found = deltas(events)
    call = next(d for d in found if d.get("tool_calls"))["tool_calls"][0]
    assert (call.tool_name, call.tool_args) == ("get_weather", {"city": "Rome"})
    result = next(d for d in found if d.get("role") == "tool_result")
    assert result["result"]["data"] == {"result": "Rome: ☀️ +14°C"}
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]


async def assert_speech(
    hass: HomeAssistant,
    client: HttpClient,
    events: list[PipelineEvent],
    wyoming_tts: WyomingTTS,
) -> bytes:
    """The TTS audio exists, is a WAV, and is what the TTS server spoke.

    It is read the way a media player gets it: the `tts-end` media id is
    resolved through HA's media source to a URL, which is fetched over HTTP.
    """
    end = next(e for e in events if e.type is PipelineEventType.TTS_END)
    assert end.data is not None
    output = end.data["tts_output"]
    assert output["mime_type"] == "audio/x-wav"
    media = await media_source.async_resolve_media(hass, output["media_id"], None)
    assert media.url == output["url"]
    assert media.url.startswith("/api/tts_proxy/")
    response = await client.get(media.url)
    assert response.status == 200
    assert response.content_type == "audio/x-wav"
    pcm = parse_wav(await response.read())
    assert (pcm.rate, pcm.width, pcm.channels) == (22050, 2, 1)
    assert pcm.seconds > 1.0
    assert any(pcm.audio[i] for i in range(0, len(pcm.audio), 97)), "silence"
    assert pcm.audio == b"".join(s.audio.audio for s in wyoming_tts.spoken)
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
    hass: HomeAssistant,
    voice_pipeline: Pipeline,
    llm_server: PacedLLMServer,
    tool_endpoint: ToolEndpoint,
    wyoming_stt: WyomingSTT,
    wyoming_tts: WyomingTTS,
    http: HttpClient,
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
    llm_server.add(
        SHORT[first_round], text_stream("In Rome it is sunny ", "and 14 degrees.")
    )

    events = await run_voice_turn(hass, voice_pipeline, await spoken_command(COMMAND))

    assert_turn(events, llm_server, tool_endpoint, wyoming_stt)
    # Fetching the audio waits for the synthesis (a background task of tts).
    audio = await assert_speech(hass, http, events, wyoming_tts)
    assert_clean(wyoming_tts.received_text)
    if tts_streaming:
        # A short answer is sent once it is complete, through the streaming events.
        assert "".join(wyoming_tts.chunk_texts) == ANSWER
        assert wyoming_tts.synthesize_texts == [ANSWER]
    else:
        assert wyoming_tts.chunk_texts == []
        assert wyoming_tts.synthesize_texts == [ANSWER]
    assert [s.text for s in wyoming_tts.spoken] == [ANSWER]
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
    hass: HomeAssistant,
    voice_pipeline: Pipeline,
    llm_server: PacedLLMServer,
    tool_endpoint: ToolEndpoint,
    wyoming_stt: WyomingSTT,
    wyoming_tts: WyomingTTS,
    http: HttpClient,
    timeline: Timeline,
) -> None:
    """Streaming TTS starts on the first sentence while the model still writes.

    The answer streams slowly, and the scripted server stops writing after its
    first sentence (over the pipeline's 60-character threshold) until the
    Wyoming TTS has sent audio for that sentence. So the answer can only be
    finished if the TTS spoke before it was: the hold must be released, not
    timed out, and the TTS's first text and audio come before the model's end.
    """
    llm_server.add(
        transcript("llama-cpp-python__weather_stream"),
        paced_text_stream(
            *LONG_HEAD,
            *LONG_TAIL,
            chunk_delay=0.01,
            hold_before_piece=len(LONG_HEAD),
            hold_until=lambda: timeline.wait_for("tts", "audio"),
        ),
    )
    answer = "".join(LONG_HEAD + LONG_TAIL)

    events = await run_voice_turn(hass, voice_pipeline, await spoken_command(COMMAND))

    assert_turn(events, llm_server, tool_endpoint, wyoming_stt)
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

    await assert_speech(hass, http, events, wyoming_tts)
    kinds = [(m.source, m.kind) for m in timeline.marks]
    assert ("llm", "hold-timeout") not in kinds
    model_done = timeline.index("llm", "done", last=True)
    assert timeline.index("llm", "release") < model_done
    assert timeline.index("tts", "synthesize-start") < model_done
    assert timeline.index("tts", "synthesize-chunk") < model_done
    assert timeline.index("tts", "audio") < model_done
    # What the TTS spoke before the model went on was the first sentence.
    assert timeline.of("tts", "audio")[0].text == FIRST_SENTENCE

    # Everything reached the TTS, clean, and was spoken sentence by sentence.
    assert_clean(wyoming_tts.received_text)
    assert "".join(wyoming_tts.chunk_texts) == answer
    assert wyoming_tts.synthesize_texts == [answer]
    assert [s.text for s in wyoming_tts.spoken] == [FIRST_SENTENCE, SECOND_SENTENCE]
    assert timeline.index("tts", "synthesize-stopped") > model_done


async def test_text_before_a_call_starts_tts_streaming(
    hass: HomeAssistant,
    voice_pipeline: Pipeline,
    llm_server: PacedLLMServer,
    tool_endpoint: ToolEndpoint,
    wyoming_stt: WyomingSTT,
    wyoming_tts: WyomingTTS,
    http: HttpClient,
) -> None:
    """A sentence before a Qwen XML call is spoken; thinking and markup are not.

    The pipeline starts streaming TTS when a tool call follows text; the TTS
    must get the sentence, then the answer, and nothing of the `<think>`
    block or the call.
    """
    preface = "Let me check the weather for you."
    llm_server.add(
        text_stream(
            QWEN_THINK_AND_CALL[0],
            QWEN_THINK_AND_CALL[1],
            "ink>\n\n" + preface[:11],
            preface[11:] + "\n<tool",
            *QWEN_THINK_AND_CALL[3:],
        ),
        text_stream("In Rome it is sunny ", "and 14 degrees."),
    )

    events = await run_voice_turn(hass, voice_pipeline, await spoken_command(COMMAND))

    assert_turn(events, llm_server, tool_endpoint, wyoming_stt)
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
    await assert_speech(hass, http, events, wyoming_tts)
    assert_clean(wyoming_tts.received_text)
    received = "".join(wyoming_tts.chunk_texts)
    assert " ".join(received.split()) == f"{preface} {ANSWER}"
    assert [s.text for s in wyoming_tts.spoken] == [preface, ANSWER]


async def test_unknown_audio_is_not_transcribed(
    hass: HomeAssistant,
    voice_pipeline: Pipeline,
    llm_server: PacedLLMServer,
    wyoming_stt: WyomingSTT,
    wyoming_tts: WyomingTTS,
) -> None:
    """The STT only knows its phrases: other audio ends the run with an STT error."""
    events = await run_voice_turn(
        hass, voice_pipeline, await spoken_command("Turn on the lights.")
    )

    error = next(e for e in events if e.type is PipelineEventType.ERROR)
    assert error.data is not None
    assert error.data["code"] == "stt-no-text-recognized"
    assert wyoming_stt.transcripts == [""]
    assert llm_server.requests == []
    assert wyoming_tts.received_text == ""
