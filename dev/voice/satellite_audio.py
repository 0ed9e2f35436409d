"""The satellite's microphone, wake word and speaker, as the programs
wyoming-satellite runs (`--mic-command`, `--wake-command`, `--snd-command`).

Standard library only: they run with the satellite venv's Python.

    satellite_audio.py mic SPOOL    16 kHz 16-bit mono on stdout, in real time
    satellite_audio.py wake         a name on stdout when it hears the wake tone
    satellite_audio.py snd SPOOL    what the satellite plays, into a WAV file

- `mic` is a microphone in a quiet room: silence, one 1024-sample chunk every
  64 ms, until a file `*.pcm` (16 kHz 16-bit mono) appears in SPOOL; it plays
  that in the same pace, then writes `<name>.json` with the time
  (`time.monotonic()`, the same clock in every process) each chunk was
  written, and deletes the `.pcm`. A chunk goes out when its last sample
  would have been captured, as a sound card delivers it.
- `wake` is the button of the rig: it answers `WAKE_NAME` on the chunk
  that holds the wake tone (one chunk of 1 kHz, near full scale, that the
  rig plays before a question) and nothing on speech or silence.
- `snd` runs once per answer (the satellite starts it at `audio-start` and
  closes its stdin at `audio-stop`): it writes the audio to
  `answer-<n>.wav` in SPOOL and `answer-<n>.json` with the times the first
  and last bytes arrived.
"""

from __future__ import annotations

from array import array
from itertools import pairwise
import json
import math
import os
from pathlib import Path
import sys
import time
import wave

RATE, WIDTH, CHANNELS = 16000, 2, 1
SAMPLES_PER_CHUNK = 1024
CHUNK_BYTES = SAMPLES_PER_CHUNK * WIDTH * CHANNELS
CHUNK_SECONDS = SAMPLES_PER_CHUNK / RATE
WAKE_NAME = "wake_tone"
TONE_HZ = 1000
TONE_AMPLITUDE = 29000
# Behind the schedule by more than this (a loaded machine), start it anew
# instead of writing a burst.
MAX_LAG = 0.5
SND_RATE = 22050


def wake_tone() -> bytes:
    """One chunk of a 1 kHz tone near full scale."""
    return array(
        "h",
        (
            round(TONE_AMPLITUDE * math.sin(2 * math.pi * TONE_HZ * i / RATE))
            for i in range(SAMPLES_PER_CHUNK)
        ),
    ).tobytes()


def is_wake_tone(chunk: bytes) -> bool:
    """A chunk mostly near full scale that crosses zero ~2000 times a second:
    the tone, not speech."""
    samples = array("h", chunk[: len(chunk) - len(chunk) % 2])
    if not samples:
        return False
    loud = sum(1 for s in samples if abs(s) > 16000)
    crossings = sum(1 for a, b in pairwise(samples) if (a < 0) != (b < 0))
    per_second = crossings * RATE / len(samples)
    return loud >= len(samples) // 2 and 1600 <= per_second <= 2400


def write_json(path: Path, data: object) -> None:
    """Write atomically: a reader never sees half a file."""
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(data))
    part.replace(path)


def next_request(spool: Path) -> Path | None:
    """The oldest audio waiting to be played."""
    waiting = sorted(spool.glob("*.pcm"))
    return waiting[0] if waiting else None


def mic(spool: Path) -> None:
    """Write silence, and the spool's audio when there is some, in real time."""
    out = sys.stdout.buffer
    silence = bytes(CHUNK_BYTES)
    playing: Path | None = None
    audio = b""
    offset = 0
    written: list[float] = []
    due = time.monotonic() + CHUNK_SECONDS
    while True:
        if playing is None and (playing := next_request(spool)) is not None:
            audio, offset, written = playing.read_bytes(), 0, []
        if playing is not None:
            chunk = audio[offset : offset + CHUNK_BYTES].ljust(CHUNK_BYTES, b"\0")
        else:
            chunk = silence
        now = time.monotonic()
        if due - now > 0:
            time.sleep(due - now)
        elif now - due > MAX_LAG:
            due = now
        try:
            out.write(chunk)
            out.flush()
        except BrokenPipeError:
            return
        due += CHUNK_SECONDS
        if playing is not None:
            written.append(time.monotonic())
            offset += CHUNK_BYTES
            if offset >= len(audio):
                write_json(playing.with_suffix(".json"), {"written": written})
                playing.unlink()
                playing = None


def read_exactly(size: int) -> bytes:
    """`size` bytes of stdin, or fewer at its end."""
    data = b""
    while len(data) < size:
        more = sys.stdin.buffer.read(size - len(data))
        if not more:
            break
        data += more
    return data


def wake() -> None:
    """Say the wake word's name once per tone."""
    heard = False
    while chunk := read_exactly(CHUNK_BYTES):
        tone = is_wake_tone(chunk)
        if tone and not heard:
            sys.stdout.write(WAKE_NAME + "\n")
            sys.stdout.flush()
        heard = tone


def snd(spool: Path) -> None:
    """Write one answer's audio to a WAV file, noting when it arrived."""
    name = f"answer-{time.monotonic_ns()}"
    first: float | None = None
    size = 0
    with wave.open(str(spool / f"{name}.wav.part"), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(SND_RATE)
        while data := os.read(sys.stdin.fileno(), 65536):
            if first is None:
                first = time.monotonic()
            size += len(data)
            wav.writeframes(data)
    last = time.monotonic()
    (spool / f"{name}.wav.part").replace(spool / f"{name}.wav")
    write_json(spool / f"{name}.json", {"first": first, "last": last, "bytes": size})


def main() -> None:
    """`mic SPOOL`, `wake` or `snd SPOOL`."""
    match sys.argv[1:]:
        case ["mic", spool]:
            mic(Path(spool))
        case ["wake"]:
            wake()
        case ["snd", spool]:
            snd(Path(spool))
        case _:
            raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
