"""A real FastAPI service on loopback that serves its own `/openapi.json`.

The OpenAPI import's end-to-end tests and the browser test import its tools
from that document (FastAPI writes it from the routes below, as it does for
any FastAPI app), then check what the service received. It runs under
uvicorn in a thread of its own (`dev/asgi_service.py`) and records every
request: method, path, query, headers and body. The API key it wants comes from `api_key`.

    async with LightsService(api_key="k") as service:
        service.url, service.requests
"""

# No `from __future__ import annotations`: FastAPI reads the routes'
# annotations, which name objects local to `lights_app`.
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

from fastapi import Depends, FastAPI, HTTPException, Query, Request
from fastapi.security import APIKeyHeader
from pydantic import BaseModel, Field

from .asgi_service import AsgiService

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
class LightsService(AsgiService):
    """The FastAPI service under uvicorn, in a thread, on 127.0.0.1."""

    api_key: str = "lights-secret-key"
    requests: list[Received] = field(default_factory=list)

    name: ClassVar[str] = "lights-service"

    def app(self) -> FastAPI:
        """The lights service, recording into `requests`."""
        return lights_app(self.api_key, self.requests)
