"""Wyoming speech servers on 127.0.0.1 for the voice tests, and their helpers.

Both servers speak the real Wyoming protocol through the `wyoming` library,
the one Home Assistant's `wyoming` integration uses as a client:

- `WyomingTTS` synthesises with Debian's `espeak-ng` (`--stdout` WAV). It
  answers `synthesize` with `audio-start`/`audio-chunk`/`audio-stop` and, when
  it advertises `supports_synthesize_streaming`, follows the streaming events
  (`synthesize-start`, `synthesize-chunk`..., `synthesize-stop` ->
  `synthesize-stopped`) the way wyoming-piper does: every complete sentence is
  spoken as soon as its text has arrived.
- `WyomingSTT` is not a speech recogniser: no STT model can be fetched here.
  It knows a few phrases, synthesises each with espeak-ng when it starts, and
  answers `transcribe` + audio with the phrase whose audio it was given
  (compared sample for sample after conversion to 16 kHz 16-bit mono), or
  with an empty transcript for any other audio.

`TimelineLLMServer` is the scripted OpenAI-compatible server of
`tests/servers.py` (whose replies can be paced and held until something
happened elsewhere, so a test can prove what happened before the model had
finished writing). Every server writes what it does to one shared `Timeline`:
all of them run on the test's event loop, so the order of its marks is the
order of the events (timestamps are kept for reading, not for asserts).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
import re
import shutil
import struct
import time
from typing import Any

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioChunkConverter, AudioStart, AudioStop
from wyoming.event import Event
from wyoming.info import (
    AsrModel,
    AsrProgram,
    Attribution,
    Describe,
    Info,
    TtsProgram,
    TtsVoice,
)
from wyoming.server import AsyncEventHandler, AsyncTcpServer
from wyoming.tts import (
    Synthesize,
    SynthesizeChunk,
    SynthesizeStart,
    SynthesizeStop,
    SynthesizeStopped,
)

from tests.servers import FakeLLMServer

ESPEAK = "espeak-ng"
VOICE = "en-us"
# What Home Assistant's Assist pipeline sends to a Wyoming STT.
STT_RATE, STT_WIDTH, STT_CHANNELS = 16000, 2, 1
SAMPLES_PER_CHUNK = 1024
ATTRIBUTION = Attribution(
    name="eSpeak NG", url="https://github.com/espeak-ng/espeak-ng"
)
# A sentence ends at . ! or ? followed by white space.
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def espeak_available() -> bool:
    """Return True when the espeak-ng binary is on PATH."""
    return shutil.which(ESPEAK) is not None


# --- timeline ----------------------------------------------------------------


@dataclass(frozen=True)
class Mark:
    """One thing a server did: who, what, and the text involved."""

    source: str  # "stt", "tts" or "llm"
    kind: str  # a Wyoming event type, "audio" (speech sent), "sent", "done"...
    text: str = ""
    at: float = field(default_factory=time.monotonic)


class Timeline:
    """Marks from every server, in the order they happened."""

    def __init__(self) -> None:
        """Start empty."""
        self.marks: list[Mark] = []
        self._changed = asyncio.Event()

    def add(self, source: str, kind: str, text: str = "") -> None:
        """Record a mark and wake whoever waits for one."""
        self.marks.append(Mark(source, kind, text))
        self._changed.set()

    def index(self, source: str, kind: str, *, last: bool = False) -> int:
        """Position of the first (or last) mark of this source and kind."""
        found = [
            i for i, m in enumerate(self.marks) if m.source == source and m.kind == kind
        ]
        if not found:
            raise LookupError(f"no {source} {kind} mark in {self.marks}")
        return found[-1] if last else found[0]

    def of(self, source: str, kind: str) -> list[Mark]:
        """All marks of this source and kind."""
        return [m for m in self.marks if m.source == source and m.kind == kind]

    async def wait_for(self, source: str, kind: str) -> Mark:
        """Wait until a mark of this source and kind has been recorded."""
        while True:
            for mark in self.marks:
                if mark.source == source and mark.kind == kind:
                    return mark
            self._changed.clear()
            await self._changed.wait()


# --- espeak-ng and audio -----------------------------------------------------


@dataclass(frozen=True)
class Pcm:
    """Raw PCM audio and its format."""

    rate: int
    width: int
    channels: int
    audio: bytes

    @property
    def seconds(self) -> float:
        """Duration."""
        return len(self.audio) / (self.rate * self.width * self.channels)


def parse_wav(wav: bytes) -> Pcm:
    """Read a PCM WAV, also one with a streaming header.

    `espeak-ng --stdout` writes its header before it knows the length (RIFF
    and data sizes 0x7FFFF000), and Home Assistant's Wyoming TTS streams a
    header with zero frames: take the data chunk up to the end of the bytes.
    """
    if wav[:4] != b"RIFF" or wav[8:12] != b"WAVE":
        raise ValueError(f"not a WAV file: {wav[:12]!r}")
    pos = 12
    fmt: tuple[int, int, int] | None = None
    while pos + 8 <= len(wav):
        chunk_id, size = (
            wav[pos : pos + 4],
            struct.unpack("<I", wav[pos + 4 : pos + 8])[0],
        )
        body = pos + 8
        if chunk_id == b"fmt ":
            tag, channels, rate = struct.unpack("<HHI", wav[body : body + 8])
            bits = struct.unpack("<H", wav[body + 14 : body + 16])[0]
            if tag != 1:
                raise ValueError(f"not PCM: format tag {tag}")
            fmt = (rate, bits // 8, channels)
        elif chunk_id == b"data":
            if fmt is None:
                raise ValueError("data chunk before fmt chunk")
            end = min(body + size, len(wav)) if size else len(wav)
            return Pcm(fmt[0], fmt[1], fmt[2], wav[body:end])
        pos = body + size + (size & 1)
    raise ValueError("no data chunk")


def to_stt_format(pcm: Pcm) -> bytes:
    """Convert to what the Assist pipeline streams: 16 kHz, 16-bit, mono.

    Uses the `wyoming` library's converter, as Wyoming servers do.
    """
    converter = AudioChunkConverter(
        rate=STT_RATE, width=STT_WIDTH, channels=STT_CHANNELS
    )
    chunk = AudioChunk(
        rate=pcm.rate, width=pcm.width, channels=pcm.channels, audio=pcm.audio
    )
    return converter.convert(chunk).audio


async def espeak(text: str, voice: str = VOICE) -> Pcm:
    """Speak `text` with espeak-ng; return its PCM (22.05 kHz 16-bit mono)."""
    process = await asyncio.create_subprocess_exec(
        ESPEAK,
        "-v",
        voice,
        "--stdout",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    # Text on stdin: nothing in it can be taken for an option.
    stdout, stderr = await process.communicate(text.encode())
    if process.returncode != 0:
        raise RuntimeError(f"espeak-ng failed ({process.returncode}): {stderr!r}")
    return parse_wav(stdout)


async def spoken_command(text: str) -> bytes:
    """What a satellite would stream for `text`: espeak-ng, 16 kHz 16-bit mono."""
    return to_stt_format(await espeak(text))


# --- Wyoming servers ---------------------------------------------------------


class _Handler(AsyncEventHandler):
    """One client connection; the server object decides what to answer."""

    def __init__(
        self,
        server: _WyomingServer,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
    ) -> None:
        super().__init__(reader, writer)
        self.server = server
        self.state: dict[str, Any] = {}

    async def handle_event(self, event: Event) -> bool:
        """Answer `describe` with the info; pass the rest to the server."""
        if Describe.is_type(event.type):
            await self.write_event(self.server.info().event())
            return True
        return await self.server.handle(self, event)


class _WyomingServer:
    """A Wyoming TCP server on 127.0.0.1 with a free port."""

    source = ""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline
        self.port = 0
        self._tcp: AsyncTcpServer | None = None

    def info(self) -> Info:
        raise NotImplementedError

    async def handle(self, handler: _Handler, event: Event) -> bool:
        raise NotImplementedError

    def mark(self, kind: str, text: str = "") -> None:
        self.timeline.add(self.source, kind, text)

    async def start(self) -> None:
        """Listen on a free loopback port."""
        self._tcp = AsyncTcpServer("127.0.0.1", 0)
        await self._tcp.start(partial(_Handler, self))
        assert isinstance(self._tcp._server, asyncio.Server)
        self.port = self._tcp._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Close the listener and every connection, and wait for them."""
        if self._tcp is None:
            return
        handlers = list(self._tcp._handlers)
        await self._tcp.stop()
        await asyncio.gather(*handlers, return_exceptions=True)
        if isinstance(self._tcp._server, asyncio.Server):
            await self._tcp._server.wait_closed()
        self._tcp = None


class WyomingSTT(_WyomingServer):
    """Speech to text for known phrases (see the module docstring)."""

    source = "stt"

    def __init__(self, timeline: Timeline, phrases: Sequence[str]) -> None:
        super().__init__(timeline)
        self.phrases = list(phrases)
        self.references: dict[str, bytes] = {}
        self.transcripts: list[str] = []

    async def start(self) -> None:
        """Learn the phrases' audio, then listen."""
        for phrase in self.phrases:
            self.references[phrase] = await spoken_command(phrase)
        await super().start()

    def info(self) -> Info:
        return Info(
            asr=[
                AsrProgram(
                    name="espeak-phrase-matcher",
                    description="Recognises phrases it synthesised with espeak-ng",
                    attribution=ATTRIBUTION,
                    installed=True,
                    version="1.0",
                    models=[
                        AsrModel(
                            name="known-phrases",
                            description="Known test phrases",
                            attribution=ATTRIBUTION,
                            installed=True,
                            version="1.0",
                            languages=["en"],
                        )
                    ],
                    # It takes the whole utterance: like a satellite with its
                    # own VAD, the test stream ends when the command ends.
                    requires_external_vad=False,
                    prefers_auto_gain_enabled=False,
                    prefers_noise_reduction_enabled=False,
                )
            ]
        )

    def recognise(self, audio: bytes) -> str:
        """The phrase whose audio this is, or "".

        The pipeline cuts its stream into 10 ms chunks and drops a last
        partial one, so the audio may stop short of the reference by a little.
        """
        for phrase, reference in self.references.items():
            if (
                audio
                and reference.startswith(audio)
                and len(reference) - len(audio) <= STT_RATE * STT_WIDTH // 10
            ):
                return phrase
        return ""

    async def handle(self, handler: _Handler, event: Event) -> bool:
        state = handler.state
        if Transcribe.is_type(event.type):
            state.clear()
            self.mark(event.type, Transcribe.from_event(event).language or "")
        elif AudioStart.is_type(event.type):
            state["audio"] = bytearray()
            state["converter"] = AudioChunkConverter(
                rate=STT_RATE, width=STT_WIDTH, channels=STT_CHANNELS
            )
            self.mark(event.type)
        elif AudioChunk.is_type(event.type):
            converter: AudioChunkConverter = state["converter"]
            state["audio"] += converter.convert(AudioChunk.from_event(event)).audio
        elif AudioStop.is_type(event.type):
            audio = bytes(state.pop("audio", b""))
            self.mark(event.type, f"{len(audio)} bytes")
            text = self.recognise(audio)
            self.transcripts.append(text)
            await handler.write_event(Transcript(text=text).event())
            self.mark("transcript", text)
        return True


@dataclass
class Spoken:
    """A piece of text the TTS spoke, and the audio it sent for it."""

    text: str
    audio: Pcm


class WyomingTTS(_WyomingServer):
    """Text to speech with espeak-ng (see the module docstring)."""

    source = "tts"

    def __init__(self, timeline: Timeline, *, streaming: bool) -> None:
        super().__init__(timeline)
        self.streaming = streaming
        # Every `synthesize` text, every `synthesize-chunk` text, and what was spoken.
        self.synthesize_texts: list[str] = []
        self.chunk_texts: list[str] = []
        self.spoken: list[Spoken] = []

    def info(self) -> Info:
        return Info(
            tts=[
                TtsProgram(
                    name="espeak-ng",
                    description="eSpeak NG speech synthesiser",
                    attribution=ATTRIBUTION,
                    installed=True,
                    version="1.52",
                    voices=[
                        TtsVoice(
                            name=VOICE,
                            description="English (America)",
                            attribution=ATTRIBUTION,
                            installed=True,
                            version=None,
                            languages=["en"],
                        )
                    ],
                    supports_synthesize_streaming=self.streaming,
                )
            ]
        )

    @property
    def received_text(self) -> str:
        """All text the TTS was asked to speak (chunks, or whole messages)."""
        return "".join(self.chunk_texts) + " ".join(self.synthesize_texts)

    async def speak(self, handler: _Handler, text: str, voice: str) -> None:
        """Synthesise `text` and send it as one audio-start/chunk.../stop run."""
        pcm = await espeak(text, voice)
        self.spoken.append(Spoken(text, pcm))
        await handler.write_event(
            AudioStart(rate=pcm.rate, width=pcm.width, channels=pcm.channels).event()
        )
        step = SAMPLES_PER_CHUNK * pcm.width * pcm.channels
        for start in range(0, len(pcm.audio), step):
            await handler.write_event(
                AudioChunk(
                    rate=pcm.rate,
                    width=pcm.width,
                    channels=pcm.channels,
                    audio=pcm.audio[start : start + step],
                ).event()
            )
        await handler.write_event(AudioStop().event())
        self.mark("audio", text)

    async def handle(self, handler: _Handler, event: Event) -> bool:
        state = handler.state
        if Synthesize.is_type(event.type):
            synthesize = Synthesize.from_event(event)
            self.synthesize_texts.append(synthesize.text)
            self.mark(event.type, synthesize.text)
            if state.get("streaming"):
                # The whole message again, for servers that do not stream.
                return True
            voice = synthesize.voice.name if synthesize.voice else None
            await self.speak(handler, synthesize.text, voice or VOICE)
        elif self.streaming and SynthesizeStart.is_type(event.type):
            start = SynthesizeStart.from_event(event)
            state.update(
                streaming=True,
                buffer="",
                voice=(start.voice.name if start.voice else None) or VOICE,
            )
            self.mark(event.type)
        elif self.streaming and SynthesizeChunk.is_type(event.type):
            text = SynthesizeChunk.from_event(event).text
            self.chunk_texts.append(text)
            self.mark(event.type, text)
            *sentences, state["buffer"] = SENTENCE_END.split(state["buffer"] + text)
            for sentence in sentences:
                if sentence.strip():
                    await self.speak(handler, sentence.strip(), state["voice"])
        elif self.streaming and SynthesizeStop.is_type(event.type):
            self.mark(event.type)
            if rest := state.get("buffer", "").strip():
                await self.speak(handler, rest, state["voice"])
            state.clear()
            await handler.write_event(SynthesizeStopped().event())
            self.mark(SynthesizeStopped().event().type)
        return True


# --- the scripted LLM, on the timeline ----------------------------------------


@dataclass
class TimelineLLMServer(FakeLLMServer):
    """`FakeLLMServer` that puts what it does on the timeline (source `llm`)."""

    timeline: Timeline = field(default_factory=Timeline)

    def mark(self, kind: str, text: str = "") -> None:
        """Add the mark to the timeline."""
        self.timeline.add("llm", kind, text)
