"""The turns under way on an entry's server, so requests never cut each other.

llama-cpp-python's server (with its default `interrupt_requests`) ends a
streamed answer as soon as another request arrives: in the demo, a warm-up
sent while the first question after a start was streaming cut it ("The
language model server stopped in the middle of the answer.", httpx's
`RemoteProtocolError` 0.2 s before the warm-up finished). So:

- a warm-up waits until no turn of the entry is under way (it is a head
  start; a turn under way has the server's cache warm anyway);
- a turn's request waits for a warm-up under way, on every server: sent
  beside it, the question would read the whole prompt again (another of
  llama.cpp's slots, the CPU shared by both); sent after it, the question
  finds the prompt's start in the server's cache;
- on llama-cpp-python, which answers one request at a time, each request
  (a turn's or a warm-up's) waits for the one before it to end, here rather
  than in the server, where it would cut a stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import (
    AbstractAsyncContextManager,
    asynccontextmanager,
    contextmanager,
    nullcontext,
)

from .info import KIND_LLAMA_CPP_PYTHON


class ServerTurns:
    """Counts an entry's turns under way; orders requests where needed."""

    def __init__(self, kind: str = "") -> None:
        """`kind`: the server's kind (`info`)."""
        self.one_at_a_time = kind == KIND_LLAMA_CPP_PYTHON
        self._active = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._lock = asyncio.Lock()
        self._warm_ups = 0
        self._no_warm_up = asyncio.Event()
        self._no_warm_up.set()

    @property
    def active(self) -> int:
        """How many turns are under way."""
        return self._active

    @property
    def busy(self) -> bool:
        """Whether the server is answering one of the entry's requests (a
        turn's or a warm-up's)."""
        return bool(self._active or self._warm_ups)

    @contextmanager
    def turn(self) -> Iterator[None]:
        """One turn of any of the entry's agents."""
        self._active += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._active -= 1
            if not self._active:
                self._idle.set()

    async def async_wait_idle(self) -> None:
        """Until no turn is under way."""
        while self._active:
            await self._idle.wait()

    @asynccontextmanager
    async def request(self) -> AsyncIterator[None]:
        """One request of a turn, from its start to its last byte."""
        await self._no_warm_up.wait()
        async with self._in_order():
            yield

    @asynccontextmanager
    async def warm_up(self) -> AsyncIterator[None]:
        """The warm-up's request: turns' requests wait until it ended."""
        self._warm_ups += 1
        self._no_warm_up.clear()
        try:
            async with self._in_order():
                yield
        finally:
            self._warm_ups -= 1
            if not self._warm_ups:
                self._no_warm_up.set()

    def _in_order(self) -> AbstractAsyncContextManager[None]:
        """On llama-cpp-python, after the request before it."""
        return self._lock if self.one_at_a_time else nullcontext()
