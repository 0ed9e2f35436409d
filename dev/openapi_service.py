"""A real FastAPI service on loopback that serves its own `/openapi.json`.

The OpenAPI import's end-to-end tests and the browser test import its tools
from that document (FastAPI writes it from the routes below, as it does for
any FastAPI app), then check what the service received. It runs under
uvicorn in a thread of its own and records every request: method, path,
query, headers and body. The API key it wants comes from `api_key`.

    async with LightsService(api_key="k") as service:
        service.url, service.requests
"""

# No `from __future__ import annotations`: FastAPI reads the routes'
# annotations, which name objects local to `lights_app`.
import asyncio
from dataclasses import dataclass, field
import socket
import threading
from types import TracebackType
from typing import Annotated, Any, Self

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, Field
import uvicorn

API_KEY_HEADER = "X-Lights-Key"


@dataclass(frozen=True, slots=True)
class Received:
    """One request as the service saw it."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes


class LightChange(BaseModel):
    """What `set_lights` changes."""

    brightness: int = Field(ge=0, le=255, description="0 (off) to 255 (full)")
    color: str | None = Field(default=None, description="A colour name, e.g. warm")


def lights_app(api_key: str, received: list[Received]) -> FastAPI:
    """The service: rooms and their lights, behind an API key header."""
    app = FastAPI(title="Lights", version="1.0.0")
    key_header = APIKeyHeader(name=API_KEY_HEADER, auto_error=False)

    @app.middleware("http")
    async def record(request: Request, call_next: Any) -> Any:
        body = await request.body()
        if request.url.path not in ("/openapi.json", "/docs"):
            received.append(
                Received(
                    request.method,
                    request.url.path,
                    request.url.query,
                    dict(request.headers),
                    body,
                )
            )
        return await call_next(request)

    def check_key(key: Annotated[str | None, Depends(key_header)]) -> None:
        if key != api_key:
            raise HTTPException(status_code=401, detail="wrong or missing key")

    keyed = [Depends(check_key)]

    @app.get("/rooms", tags=["rooms"], dependencies=keyed)
    async def list_rooms(floor: int | None = None) -> list[str]:
        """The rooms with lights, optionally on one floor."""
        return ["kitchen", "hall"] if floor in (None, 0) else ["bedroom"]

    @app.get("/rooms/{room}/lights", tags=["lights"], dependencies=keyed)
    async def get_lights(room: str) -> dict[str, Any]:
        """The lights of a room."""
        return {"room": room, "brightness": 128}

    @app.post("/rooms/{room}/lights", tags=["lights"], dependencies=keyed)
    async def set_lights(
        room: str,
        change: LightChange,
        transition: Annotated[int, Query(description="Seconds to fade")],
    ) -> dict[str, Any]:
        """Set the brightness (and colour) of a room's lights."""
        return {"room": room, "transition": transition, **change.model_dump()}

    @app.delete("/rooms/{room}/scenes/{scene}", tags=["scenes"], dependencies=keyed)
    async def delete_scene(room: str, scene: str) -> dict[str, str]:
        """Delete a saved scene of a room."""
        return {"deleted": f"{room}/{scene}"}

    @app.get("/health", tags=["service"])
    async def health() -> dict[str, str]:
        """Whether the service runs (no key needed)."""
        return {"status": "ok"}

    return app


@dataclass
class LightsService:
    """The FastAPI service under uvicorn, in a thread, on 127.0.0.1."""

    api_key: str = "lights-secret-key"
    port: int = 0
    requests: list[Received] = field(default_factory=list)
    _server: uvicorn.Server | None = field(default=None, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

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
            lights_app(self.api_key, self.requests),
            host="127.0.0.1",
            port=self.port,
            log_level="warning",
            lifespan="off",
            # Stopping never waits long for a client's keep-alive connection.
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [sock]},
            name="lights-service",
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
        raise RuntimeError(f"the lights service did not start on port {self.port}")

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
