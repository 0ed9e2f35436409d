"""Pictures to a model that can see: "Who's at the front door?" with Home
Assistant's camera proxy as a tool (docs/services.md). The snapshot goes
to a model that reads images as an image part of the next request; a
model that cannot, a picture too large and every later request read its
description."""

from __future__ import annotations

import base64
from collections.abc import AsyncGenerator
import io
import json
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers.json import json_bytes
from PIL import Image
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import CONF_MODEL, CONF_VISION
from custom_components.http_tools_agent.server.client import request_chars

from .kit import converse, load_integration, speech
from .markdown import DOCS, blocks
from .servers import (
    FakeLLMServer,
    Reply,
    documented,
    server_check,
    text_stream,
    tool_calls_stream,
)
from .service_cases import SERVICES, ServiceServer, load_cases, load_tools, serve

SNAPSHOT = (SERVICES / "home_assistant" / "snapshot.jpg").read_bytes()
FRONT_DOOR = next(c for c in load_cases() if c.tool == "front_door_snapshot")
TOKEN = FRONT_DOOR.secrets["ha_token"]
# A real JPEG padded past the 1 MiB a tool reads (decoders stop at its end).
HUGE = SNAPSHOT + bytes(1_100_000)
QUESTION = "Who's at the front door?"
ANSWER = "A courier with a parcel is at the front door."


@pytest.fixture
async def camera(socket_enabled: None) -> AsyncGenerator[ServiceServer]:
    """Home Assistant's camera proxy on loopback: the front door's snapshot
    (the service case's), and a garage camera whose snapshot is too large."""
    async with ServiceServer() as server:
        serve(server, FRONT_DOOR)
        server.route(
            "/api/camera_proxy/camera.garage", body=HUGE, content_type="image/jpeg"
        )
        yield server


def docs_tool() -> dict[str, Any]:
    """The front door tool as docs/services.md shows it."""
    tool: dict[str, Any] = next(
        json.loads(block.text)
        for block in blocks(DOCS / "services.md")
        if block.info == "json" and '"front_door_snapshot"' in block.text
    )
    return tool


def test_the_docs_show_the_service_case_tool() -> None:
    """The page's example is the tool the service case runs."""
    (case_tool,) = (
        t for t in load_tools("home_assistant") if t["name"] == "front_door_snapshot"
    )
    assert docs_tool() == case_tool


@pytest.fixture
def tools(camera: ServiceServer) -> list[dict[str, Any]]:
    """The front door tool of docs/services.md, and a garage camera's."""
    front_door = docs_tool()
    front_door["url"] = front_door["url"].replace(
        "http://homeassistant.local:8123", camera.url
    )
    garage = {
        **front_door,
        "name": "garage_snapshot",
        "description": "A snapshot of the garage camera.",
        "url": front_door["url"].replace("front_door", "garage"),
    }
    return [front_door, garage]


@pytest.fixture
def extra_options() -> dict[str, Any]:
    """The Home Assistant token the camera proxy wants."""
    return {"secrets": {"ha_token": TOKEN}}


def _ask_then_answer(llm_server: FakeLLMServer, tool: str) -> None:
    llm_server.add(tool_calls_stream((tool, {})), text_stream(ANSWER))


def _images(body: dict[str, Any]) -> list[str]:
    """The image URLs a request carries."""
    return [
        part["image_url"]["url"]
        for message in body["messages"]
        if isinstance(message["content"], list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]


def _tool_texts(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("agent_options", [{CONF_VISION: "on"}])
@pytest.mark.usefixtures("setup_integration")
async def test_the_snapshot_goes_to_a_model_that_sees(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    camera: ServiceServer,
    chat_contents: list[dict[str, Any]],
) -> None:
    _ask_then_answer(llm_server, "front_door_snapshot")

    result = await converse(hass, QUESTION)

    assert speech(result) == ANSWER
    assert [r.target for r in camera.arrived] == [
        "GET /api/camera_proxy/camera.front_door"
    ]
    after = llm_server.requests[1]
    # The tool message keeps the description; the picture follows it in a
    # user message that names the tool (tool messages carry text only).
    assert after["messages"][-2]["role"] == "tool"
    assert after["messages"][-2]["content"] == "image/jpeg, 60 KB"
    assert after["messages"][-1] == {
        "role": "user",
        "content": [
            {
                "type": "text",
                "text": "The image the tool front_door_snapshot returned:",
            },
            {
                "type": "image_url",
                "image_url": {
                    "url": "data:image/jpeg;base64,"
                    + base64.b64encode(SNAPSHOT).decode()
                },
            },
        ],
    }
    assert _images(llm_server.requests[0]) == []
    # What a server decodes is the camera's picture.
    url = after["messages"][-1]["content"][1]["image_url"]["url"]
    decoded = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert (decoded.format, decoded.size) == ("JPEG", (640, 480))
    # What the chat log shows (the debug view, pipeline events) names the
    # picture, and is JSON: the bytes stay out of it.
    (shown,) = [c for c in chat_contents if c["role"] == "tool_result"]
    assert shown["result"]["picture"].as_dict() == {
        "media_type": "image/jpeg",
        "size": len(SNAPSHOT),
    }
    assert (
        base64.b64encode(SNAPSHOT[:300]).decode()
        not in json_bytes(chat_contents).decode()
    )

    # The next turn reads the description only: the picture went once.
    llm_server.add(text_stream("You're welcome."))
    await converse(hass, "Thanks!", conversation_id=result.conversation_id)
    later = llm_server.requests[2]
    assert _images(later) == []
    assert "image/jpeg, 60 KB" in _tool_texts(later)


@pytest.mark.parametrize(
    "agent_options", [{CONF_VISION: "off"}, {}], ids=["off", "auto-unknown"]
)
@pytest.mark.usefixtures("setup_integration")
async def test_a_model_that_cannot_see_reads_the_description(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """Off, or auto on a server that says nothing of images."""
    _ask_then_answer(llm_server, "front_door_snapshot")

    assert speech(await converse(hass, QUESTION)) == ANSWER

    after = llm_server.requests[1]
    assert _images(after) == []
    assert after["messages"][-1] == {
        "role": "tool",
        "tool_call_id": "call_0_front_door_snapshot",
        "content": "image/jpeg, 60 KB",
    }


@pytest.mark.parametrize("agent_options", [{CONF_VISION: "on"}])
@pytest.mark.usefixtures("setup_integration")
async def test_a_picture_too_large_is_described(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    _ask_then_answer(llm_server, "garage_snapshot")

    assert speech(await converse(hass, "Is the garage door open?")) == ANSWER

    after = llm_server.requests[1]
    assert _images(after) == []
    assert after["messages"][-1]["content"] == "image/jpeg, 1.1 MB"


def _props(vision: bool) -> Reply:
    """llama-server's captured `/props`, its `modalities.vision` as given
    (true when it runs with `--mmproj`)."""
    reply = server_check("llama-server__props")
    props = json.loads(reply.body)
    props["modalities"]["vision"] = vision
    return Reply(body=json.dumps(props).encode(), content_type=reply.content_type)


@pytest.mark.parametrize(
    ("vision", "agent_options", "sees"),
    [
        (True, {}, True),
        (False, {}, False),
        # The setting wins over what the server says.
        (True, {CONF_VISION: "off"}, False),
        (False, {CONF_VISION: "on"}, True),
    ],
    ids=["reports-vision", "reports-none", "off-wins", "on-wins"],
)
async def test_a_server_that_reports_vision_gets_the_picture(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    config_entry: MockConfigEntry,
    vision: bool,
    sees: bool,
) -> None:
    llm_server.pages["GET /props"] = _props(vision)
    await load_integration(hass)
    assert config_entry.runtime_data.server_info.model("local").vision is vision
    _ask_then_answer(llm_server, "front_door_snapshot")

    assert speech(await converse(hass, QUESTION)) == ANSWER

    images = _images(llm_server.requests[1])
    assert images == (
        ["data:image/jpeg;base64," + base64.b64encode(SNAPSHOT).decode()]
        if sees
        else []
    )


def _ollama_show(capabilities: list[str]) -> Reply:
    """Ollama's documented `/api/show` with the model's capabilities as given
    (`vision` for gemma3:4b, llava, qwen2.5vl)."""
    reply = documented("ollama__show_gemma3")
    show = json.loads(reply.body)
    show["capabilities"] = capabilities
    return Reply(body=json.dumps(show).encode(), content_type=reply.content_type)


@pytest.mark.parametrize("agent_options", [{CONF_MODEL: "gemma3:4b"}])
async def test_an_ollama_model_with_vision_gets_the_picture(
    hass: HomeAssistant, llm_server: FakeLLMServer, config_entry: MockConfigEntry
) -> None:
    llm_server.models_reply = documented("ollama__models")
    llm_server.pages["GET /api/version"] = documented("ollama__version")
    llm_server.pages["POST /api/show gemma3:4b"] = _ollama_show(
        ["completion", "vision"]
    )
    await load_integration(hass)
    _ask_then_answer(llm_server, "front_door_snapshot")

    assert speech(await converse(hass, QUESTION)) == ANSWER

    assert config_entry.runtime_data.server_info.kind == "ollama"
    assert _images(llm_server.requests[1]) == [
        "data:image/jpeg;base64," + base64.b64encode(SNAPSHOT).decode()
    ]


def test_a_picture_is_no_words_to_the_context_fit() -> None:
    """The history that fits the context is reckoned from the words: the
    snapshot's 80,000 characters of base64 would leave every earlier turn
    out of the next request."""
    text = {"type": "text", "text": "The image the tool front_door_snapshot returned:"}
    url = "data:image/jpeg;base64," + base64.b64encode(SNAPSHOT).decode()
    image = {"type": "image_url", "image_url": {"url": url}}
    with_picture = [{"role": "user", "content": [text, image]}]
    words_only = [{"role": "user", "content": [text]}]

    assert request_chars(with_picture, []) == request_chars(words_only, []) < 200
