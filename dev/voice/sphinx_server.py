"""A Wyoming speech-to-text server on PocketSphinx (no packaged one exists).

    python -m dev.voice.sphinx_server --uri tcp://127.0.0.1:10300

Runs from `.venv-voice` (pocketsphinx==5.1.1, whose wheel carries the en-us
acoustic model, dictionary and language model). `describe` gets the info;
`transcribe`, `audio-start`, `audio-chunk`... `audio-stop` gets a `transcript`.
Audio is converted to 16 kHz 16-bit mono (what the model wants) and decoded
while it arrives, so at `audio-stop` only the end of the utterance is left
(~50 ms instead of ~300 ms for the whole). Home Assistant's pipeline finds
the end of speech (`requires_external_vad`). One decoder, one utterance at a
time: a second connection waits for the first.
"""

from __future__ import annotations

import argparse
import asyncio
from functools import partial
import logging
import time
from typing import Any

from pocketsphinx import Decoder
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioChunkConverter, AudioStart, AudioStop
from wyoming.event import Event
from wyoming.info import AsrModel, AsrProgram, Attribution, Describe, Info
from wyoming.server import AsyncEventHandler, AsyncServer

_LOGGER = logging.getLogger("sphinx_server")
RATE, WIDTH, CHANNELS = 16000, 2, 1
ATTRIBUTION = Attribution(name="CMU Sphinx", url="https://cmusphinx.github.io")


def info() -> Info:
    """What this server offers: English, from the wheel's model."""
    return Info(
        asr=[
            AsrProgram(
                name="pocketsphinx",
                description="PocketSphinx 5 (CMU Sphinx)",
                attribution=ATTRIBUTION,
                installed=True,
                version="5.1.1",
                models=[
                    AsrModel(
                        name="en-us",
                        description="PocketSphinx en-us (cmudict, en-us.lm)",
                        attribution=ATTRIBUTION,
                        installed=True,
                        version=None,
                        languages=["en"],
                    )
                ],
                # Clean audio from the rig: no gain or noise filter wanted.
                prefers_auto_gain_enabled=False,
                prefers_noise_reduction_enabled=False,
            )
        ]
    )


class Recogniser:
    """One PocketSphinx decoder (loading it takes ~0.3 s) shared by the
    connections, one utterance at a time."""

    def __init__(self) -> None:
        """Load the default en-us model."""
        self.decoder: Any = Decoder(samprate=RATE, loglevel="FATAL")
        self.lock = asyncio.Lock()

    def start(self) -> None:
        """Begin an utterance."""
        self.decoder.start_utt()

    def feed(self, pcm: bytes) -> None:
        """Decode the next piece of 16 kHz mono audio."""
        self.decoder.process_raw(pcm, False, False)

    def finish(self) -> str:
        """End the utterance; its best hypothesis ('' when nothing)."""
        self.decoder.end_utt()
        hyp = self.decoder.hyp()
        return str(hyp.hypstr) if hyp is not None else ""


class SphinxHandler(AsyncEventHandler):
    """One client connection."""

    def __init__(self, recogniser: Recogniser, *args: Any, **kwargs: Any) -> None:
        """Keep the shared recogniser."""
        super().__init__(*args, **kwargs)
        self.recogniser = recogniser
        self.converter = AudioChunkConverter(RATE, WIDTH, CHANNELS)
        self.in_utterance = False
        self.seconds = 0.0

    async def _run(self, func: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(None, func, *args)

    async def _begin(self) -> None:
        if not self.in_utterance:
            await self.recogniser.lock.acquire()
            await self._run(self.recogniser.start)
            self.in_utterance = True
            self.seconds = 0.0

    async def handle_event(self, event: Event) -> bool:
        """Answer describe; transcribe one utterance per audio-start...stop."""
        if Describe.is_type(event.type):
            await self.write_event(info().event())
            return True
        if Transcribe.is_type(event.type) or AudioStart.is_type(event.type):
            await self._begin()
            return True
        if AudioChunk.is_type(event.type):
            await self._begin()
            chunk = self.converter.convert(AudioChunk.from_event(event))
            self.seconds += chunk.seconds
            await self._run(self.recogniser.feed, chunk.audio)
            return True
        if AudioStop.is_type(event.type):
            await self._begin()
            started = time.monotonic()
            try:
                text = await self._run(self.recogniser.finish)
            finally:
                self.in_utterance = False
                self.recogniser.lock.release()
            _LOGGER.info(
                "%.2f s of audio -> %r (%.3f s after audio-stop)",
                self.seconds,
                text,
                time.monotonic() - started,
            )
            await self.write_event(Transcript(text=text).event())
            return False
        return True

    async def disconnect(self) -> None:
        """Release the decoder if the client left mid-utterance."""
        if self.in_utterance:
            self.in_utterance = False
            await self._run(self.recogniser.finish)
            self.recogniser.lock.release()


async def main() -> None:
    """Serve until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--uri", default="tcp://127.0.0.1:10300")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
    recogniser = Recogniser()
    server = AsyncServer.from_uri(args.uri)
    _LOGGER.info("ready on %s", args.uri)
    await server.run(partial(SphinxHandler, recogniser))


if __name__ == "__main__":
    asyncio.run(main())
