"""Serve an ASGI app (FastAPI, an MCP server) under uvicorn, in a thread of
its own, on 127.0.0.1: the real servers the tests meet that are not aiohttp
(`dev/loopback.py` serves those).

A subclass says which app (`app`), whether it needs its lifespan (an MCP
server's session manager runs in it) and what its thread is called:

    async with LightsService(api_key="k") as service:
        service.url
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
import socket
import threading
from types import TracebackType
from typing import ClassVar, Literal, Self

from starlette.types import ASGIApp
import uvicorn


@dataclass
class AsgiService:
    """An ASGI app under uvicorn, in a thread, on 127.0.0.1."""

    port: int = 0
    _server: uvicorn.Server | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    name: ClassVar[str] = "asgi-service"
    lifespan: ClassVar[Literal["on", "off"]] = "off"

    def app(self) -> ASGIApp:
        """The app to serve."""
        raise NotImplementedError

    @property
    def url(self) -> str:
        """`http://127.0.0.1:<port>`."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Serve until `stop()` (returns once the service answers)."""
        # Bound here, handed to uvicorn: no other server can take the port
        # between choosing it and listening on it.
        sock = socket.socket()
        # As uvicorn and aiohttp bind: a port whose last connections are
        # still closing (TIME_WAIT) can be listened on again.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app(),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan=self.lifespan,
            # Stopping never waits long for a client's keep-alive connection.
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [sock]},
            name=self.name,
            daemon=True,
        )
        self._thread.start()
        # Up to 20 s: a loaded 2-core machine starts threads slowly.
        for _ in range(2000):
            if self._server.started:
                return
            if not self._thread.is_alive():
                break
            threading.Event().wait(0.01)
        raise RuntimeError(f"the {self.name} did not start on port {self.port}")

    def stop(self) -> None:
        """Stop serving and join the thread."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=30)

    async def __aenter__(self) -> Self:
        """Start (in a worker thread, so the caller's loop keeps running)."""
        await asyncio.to_thread(self.start)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Stop."""
        await asyncio.to_thread(self.stop)
