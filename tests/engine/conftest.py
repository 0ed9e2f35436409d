"""A recording aiohttp server on 127.0.0.1 for the engine tests, and the
server that stands in for a real service (`service`: the services' cases and
the examples of docs/tool-format.md).

Every request is recorded as it arrived (`dev.loopback.Recorded.raw`: method,
raw path, raw query string, headers, body bytes). ``server.reply(path, ...)`` decides what a path answers: status, body,
headers, a delay, a huge body streamed chunk by chunk, or a connection
closed unanswered; ``server.reply_once`` queues answers for the next requests.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web
from multidict import CIMultiDict
import pytest

from dev.loopback import Recorded
from tests.service_cases import ServiceServer

__all__ = ["Recorded", "RecordingServer", "Reply", "StreamStats"]


@dataclass(slots=True)
class Reply:
    """What the server answers for one path."""

    status: int = 200
    body: bytes = b"ok"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    stream_bytes: int = 0  # > 0: stream this many bytes instead of ``body``
    chunk: int = 65_536
    drop: bool = False  # close the connection without answering


@dataclass(slots=True)
class StreamStats:
    """What the streaming handler managed to write."""

    written: int = 0
    aborted: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)


class RecordingServer:
    """Handle every method on every path, record, answer as told."""

    def __init__(self) -> None:
        """Start empty; ``start`` binds a free port."""
        self.requests: list[Recorded] = []
        self.replies: dict[str, Reply] = {}
        # Answered first, one per request, before `replies`.
        self.queued: dict[str, list[Reply]] = {}
        self.stream = StreamStats()
        self.release = asyncio.Event()
        self.arrived = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def last(self) -> Recorded:
        """The last request received."""
        return self.requests[-1]

    def reply(self, path: str, **kwargs: object) -> None:
        """Configure the answer for ``path`` (the raw path, no query)."""
        self.replies[path] = Reply(**kwargs)  # type: ignore[arg-type]

    def reply_once(self, path: str, **kwargs: object) -> None:
        """Answer the next request to ``path`` so (after those queued
        before); then ``reply``'s answer again."""
        self.queued.setdefault(path, []).append(Reply(**kwargs))  # type: ignore[arg-type]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        recorded = await Recorded.raw(request)
        self.requests.append(recorded)
        self.arrived.set()
        queue = self.queued.get(recorded.path)
        reply = queue.pop(0) if queue else self.replies.get(recorded.path, Reply())
        if reply.drop and request.transport is not None:
            request.transport.close()
            raise ConnectionResetError
        if reply.delay:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.release.wait(), reply.delay)
        if reply.stream_bytes:
            return await self._stream(request, reply)
        return web.Response(
            status=reply.status, body=reply.body, headers=CIMultiDict(reply.headers)
        )

    async def _stream(self, request: web.Request, reply: Reply) -> web.StreamResponse:
        response = web.StreamResponse(status=reply.status)
        response.content_type = "text/plain"
        response.content_length = reply.stream_bytes
        await response.prepare(request)
        chunk = b"x" * reply.chunk
        try:
            while self.stream.written < reply.stream_bytes:
                piece = chunk[: reply.stream_bytes - self.stream.written]
                await response.write(piece)
                self.stream.written += len(piece)
        except ConnectionError, aiohttp.ClientConnectionResetError:
            self.stream.aborted = True
        finally:
            self.stream.done.set()
        return response

    async def start(self) -> None:
        """Listen on 127.0.0.1, on a free port."""
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.Server)
        self.port = server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Release delayed handlers and stop."""
        self.release.set()
        if self._runner is not None:
            await self._runner.cleanup()


@pytest.fixture
async def server(socket_enabled: None) -> AsyncIterator[RecordingServer]:
    """A running recording server."""
    recording = RecordingServer()
    await recording.start()
    try:
        yield recording
    finally:
        await recording.close()


@pytest.fixture
async def session(socket_enabled: None) -> AsyncIterator[aiohttp.ClientSession]:
    """A client session, closed after the test."""
    async with aiohttp.ClientSession() as client:
        yield client


@pytest.fixture
async def service(socket_enabled: None) -> AsyncIterator[ServiceServer]:
    """A server that answers as a real service does (`tests.service_cases`)."""
    server = ServiceServer()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()
