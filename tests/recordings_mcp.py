"""A real MCP server on loopback: the `mcp` SDK's FastMCP over Streamable
HTTP, under uvicorn in a thread (`dev/asgi_service.py`), as an app on the
network would announce one. It keeps a camera's recordings and records every
call of its tools:

- `list_recordings`: says it only reads (`readOnlyHint`);
- `rename_recording`: changes, says it is not destructive;
- `delete_recording`: says it is destructive (`destructiveHint`);
- `archive_recording`: says nothing of itself (no annotations).

    async with RecordingsServer() as server:
        server.url, server.calls
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations
from starlette.types import ASGIApp

from dev.asgi_service import AsgiService

type Call = tuple[str, dict[str, Any]]


def recordings_app(calls: list[Call]) -> ASGIApp:
    """The MCP server's app (served at `/mcp`), recording into `calls`."""
    server = FastMCP("Recordings", host="127.0.0.1", stateless_http=True)

    @server.tool(annotations=ToolAnnotations(readOnlyHint=True))
    def list_recordings() -> str:
        """List the camera's recordings with their ids."""
        calls.append(("list_recordings", {}))
        return "7: front door at 08:12; 8: garden at 09:40"

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
    def rename_recording(recording_id: str, name: str) -> str:
        """Give a recording a name."""
        calls.append(("rename_recording", {"recording_id": recording_id, "name": name}))
        return f"Recording {recording_id} is now called {name}."

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
    def delete_recording(recording_id: str) -> str:
        """Delete a recording for good."""
        calls.append(("delete_recording", {"recording_id": recording_id}))
        return f"Recording {recording_id} deleted."

    @server.tool()
    def archive_recording(recording_id: str) -> str:
        """Move a recording to the archive."""
        calls.append(("archive_recording", {"recording_id": recording_id}))
        return f"Recording {recording_id} archived."

    return server.streamable_http_app()


@dataclass
class RecordingsServer(AsgiService):
    """The recordings MCP server on 127.0.0.1."""

    calls: list[Call] = field(default_factory=list)

    name: ClassVar[str] = "recordings-mcp"
    # The Streamable HTTP session manager runs in the app's lifespan.
    lifespan: ClassVar[Literal["on", "off"]] = "on"

    @property
    def mcp_url(self) -> str:
        """Where an MCP client connects."""
        return f"{self.url}/mcp"

    def app(self) -> ASGIApp:
        """The MCP server, recording into `calls`."""
        return recordings_app(self.calls)
