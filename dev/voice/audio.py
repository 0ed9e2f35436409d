"""Audio of the voice rig: 16-bit mono PCM, WAV files, where speech ends."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import wave

from wyoming.audio import AudioChunk, AudioChunkConverter

from .satellite_audio import SAMPLES_PER_CHUNK

# What a satellite's microphone gives (and Home Assistant's pipeline wants).
MIC_RATE, MIC_WIDTH, MIC_CHANNELS = 16000, 2, 1
# A sample louder than this is speech (Piper's silence is near 0).
SPEECH_LEVEL = 500


@dataclass(frozen=True)
class Pcm:
    """Raw 16-bit mono audio at `rate`."""

    rate: int
    audio: bytes

    @property
    def seconds(self) -> float:
        """Duration."""
        return len(self.audio) / (2 * self.rate)

    def to_mic(self) -> bytes:
        """As a microphone gives it: 16 kHz 16-bit mono."""
        converter = AudioChunkConverter(MIC_RATE, MIC_WIDTH, MIC_CHANNELS)
        chunk = AudioChunk(rate=self.rate, width=2, channels=1, audio=self.audio)
        return converter.convert(chunk).audio


def read_wav(path: Path) -> Pcm:
    """A 16-bit mono WAV file."""
    with wave.open(str(path), "rb") as wav:
        if wav.getsampwidth() != 2 or wav.getnchannels() != 1:
            raise ValueError(f"{path}: not 16-bit mono")
        return Pcm(wav.getframerate(), wav.readframes(wav.getnframes()))


def last_loud_chunk(audio: bytes) -> int:
    """Index of the last mic chunk holding speech (the end of speech)."""
    samples = memoryview(audio[: len(audio) - len(audio) % 2]).cast("h")
    for index in range(len(samples) - 1, -1, -1):
        if abs(samples[index]) > SPEECH_LEVEL:
            return index // SAMPLES_PER_CHUNK
    return 0
