"""Serve an aiohttp app on 127.0.0.1 (a free port unless one is given), and
record what it receives.

The one way the demo, the tests, the benchmarks and the browser test run a
server of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import socket
from types import TracebackType
from typing import Self

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware
from multidict import CIMultiDict, CIMultiDictProxy


def free_port() -> int:
    """A TCP port nothing listens on at the moment (for a server in another
    process, or a URL that must refuse connections)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(slots=True)
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    query: str
    headers: CIMultiDictProxy[str]
    body: bytes

    @property
    def target(self) -> str:
        """`METHOD /path?query`, as a log line writes it."""
        return f"{self.method} {self.path}" + (f"?{self.query}" if self.query else "")

    @classmethod
    async def raw(cls, request: web.Request) -> Recorded:
        """The request as it arrived on the wire: the raw path and query
        string (percent-encoding kept), a copy of its headers, its body."""
        raw_path, _, raw_query = request.raw_path.partition("?")
        return cls(
            request.method,
            raw_path,
            raw_query,
            CIMultiDictProxy(CIMultiDict(request.headers)),
            await request.read(),
        )


@dataclass
class LoopbackServer:
    """An aiohttp application on 127.0.0.1; a subclass adds its routes."""

    port: int = 0
    # How long stopping waits for handlers that are still writing.
    shutdown_timeout: float = 60.0
    _runner: web.AppRunner | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>`."""
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        """Add what the server answers."""
        raise NotImplementedError

    def middlewares(self) -> list[Middleware]:
        """Middlewares of the application."""
        return []

    async def start(self) -> None:
        """Listen on `port` (0: a free one, then stored in `port`)."""
        app = web.Application(middlewares=self.middlewares())
        self.routes(app)
        self._runner = web.AppRunner(
            app, access_log=None, shutdown_timeout=self.shutdown_timeout
        )
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", self.port).start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        """Stop listening (the port stays known)."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> Self:
        """Start; `async with Server() as server:` serves in the block."""
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop."""
        await self.stop()


@dataclass
class RecordingServer(LoopbackServer):
    """A loopback server that keeps every request it receives, in order."""

    requests: list[Recorded] = field(default_factory=list)

    def middlewares(self) -> list[Middleware]:
        """Record before answering."""
        return [self._record]

    @web.middleware
    async def _record(
        self, request: web.Request, handler: Handler
    ) -> web.StreamResponse:
        self.requests.append(
            Recorded(
                request.method,
                request.path,
                request.query_string,
                CIMultiDictProxy(CIMultiDict(request.headers)),
                await request.read(),
            )
        )
        return await handler(request)
