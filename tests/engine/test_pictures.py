"""An image answer kept whole for a model that reads images: a JPEG or PNG
whose bytes are what its type says, within the byte cap, from a 2xx answer
and only when the run asks for pictures. The model's text is the same
description either way."""

from __future__ import annotations

import base64
from typing import Any

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.bodies import Picture
from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinition,
    parse_tools,
)
from custom_components.http_tools_agent.engine.executor import Outcome, run_tool
from tests.service_cases import SERVICES

from .conftest import RecordingServer

SNAPSHOT = (SERVICES / "home_assistant" / "snapshot.jpg").read_bytes()
# Frigate's `latest.jpg`, which Frigate's case serves untyped.
FRIGATE = (SERVICES / "frigate" / "latest.jpg").read_bytes()
# A real 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 " + bytes(200)


def tool(server: RecordingServer, **fields: Any) -> ToolDefinition:
    """A GET tool of the server's `/r`."""
    raw: dict[str, Any] = {"name": "snap", "url": server.base + "/r", "method": "GET"}
    raw.update(fields)
    (definition,) = parse_tools([raw])
    return definition


@pytest.mark.parametrize(
    ("body", "content_type", "text", "kind"),
    [
        (SNAPSHOT, "image/jpeg", "image/jpeg, 60 KB", "image/jpeg"),
        (PNG, "image/png", "image/png, 70 bytes", "image/png"),
        # Untyped (Frigate's snapshots): sniffed, then kept.
        (FRIGATE, "application/octet-stream", "image/jpeg, 29 KB", "image/jpeg"),
    ],
    ids=["jpeg", "png", "untyped-jpeg"],
)
async def test_a_picture_is_kept_when_asked(
    server: RecordingServer,
    session: aiohttp.ClientSession,
    body: bytes,
    content_type: str,
    text: str,
    kind: str,
) -> None:
    server.reply("/r", body=body, headers={"Content-Type": content_type})

    seen = await run_tool(session, tool(server), {}, pictures=True)
    blind = await run_tool(session, tool(server), {})

    assert seen.outcome is Outcome.DONE
    assert seen.picture == Picture(kind, body)
    assert seen.picture is not None
    assert seen.picture.data_url() == (
        f"data:{kind};base64,{base64.b64encode(body).decode()}"
    )
    # The model's text is the description either way.
    assert seen.text == blind.text == text
    assert blind.picture is None


@pytest.mark.parametrize(
    ("body", "content_type", "status", "text"),
    [
        # llama.cpp's image decoder reads no WebP: described only.
        (WEBP, "image/webp", 200, "image/webp, 216 bytes"),
        # Bytes that are not what the type says would make the server
        # refuse the whole request.
        (
            b"<html>camera offline</html>" * 10,
            "image/jpeg",
            200,
            "image/jpeg, 270 bytes",
        ),
        (SNAPSHOT, "image/jpeg", 503, "Error: HTTP 503 \u2014 image/jpeg, 60 KB"),
        # Past the byte cap (1 MiB): cut, so not whole.
        (SNAPSHOT + bytes(1_100_000), "image/jpeg", 200, "image/jpeg, 1.1 MB"),
    ],
    ids=["webp", "not-a-jpeg", "error-status", "too-large"],
)
async def test_no_picture_but_the_description(
    server: RecordingServer,
    session: aiohttp.ClientSession,
    body: bytes,
    content_type: str,
    status: int,
    text: str,
) -> None:
    server.reply("/r", body=body, status=status, headers={"Content-Type": content_type})

    result = await run_tool(session, tool(server), {}, pictures=True)

    assert result.picture is None
    assert result.text == text


def test_a_picture_shows_its_type_and_size_not_its_bytes() -> None:
    """What logs and Home Assistant's traces show of it."""
    picture = Picture("image/jpeg", SNAPSHOT)

    assert repr(picture) == "Picture(image/jpeg, 60 KB)"
    assert picture.as_dict() == {"media_type": "image/jpeg", "size": len(SNAPSHOT)}
