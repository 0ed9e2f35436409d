"""The turns under way on an entry's server, so requests never cut each other.

llama-cpp-python's server (with its default `interrupt_requests`) ends a
streamed answer as soon as another request arrives: in the demo, a warm-up
sent while the first question after a start was streaming cut it ("The
language model server stopped in the middle of the answer.", httpx's
`RemoteProtocolError` 0.2 s before the warm-up finished). So:

- a warm-up waits until no turn of the entry is under way (it is a head
  start; a turn under way has the server's cache warm anyway);
- on llama-cpp-python, which answers one request at a time, each request
  (a turn's or a warm-up's) waits for the one before it to end, here rather
  than in the server, where it would cut a stream; a question that comes
  during a warm-up is sent when the warm-up is done, and finds the prompt's
  start in the server's cache.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

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

    @property
    def active(self) -> int:
        """How many turns are under way."""
        return self._active

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
        """One request to the server, from its start to its last byte."""
        if not self.one_at_a_time:
            yield
            return
        async with self._lock:
            yield
