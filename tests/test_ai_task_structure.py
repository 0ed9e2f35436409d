"""An AI task's structure is asked of the server: the request that calls no
tool carries it as `response_format`, in the form the server reads."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest

from custom_components.http_tools_agent.const import CONF_PROFILE
from custom_components.http_tools_agent.turn.request import response_format

from .kit import load_integration, server_entry
from .servers import (
    FakeLLMServer,
    ToolEndpoint,
    server_check,
    text_stream,
    tool_calls_stream,
)
from .test_ai_task import STRUCTURE, generate


async def _ready(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    options: dict[str, Any],
    ai_task: dict[str, Any],
) -> None:
    entry = server_entry(llm_server.base_url, options=options, ai_task=ai_task)
    entry.add_to_hass(hass)
    await load_integration(hass)
    assert await async_setup_component(hass, "ai_task", {})
    await hass.async_block_till_done()


def _schema(request: dict[str, Any]) -> dict[str, Any]:
    """The JSON schema a request's `response_format` asks for."""
    fmt = request["response_format"]
    if fmt["type"] == "json_object":
        return dict(fmt["schema"])
    assert fmt["type"] == "json_schema"
    return dict(fmt["json_schema"]["schema"])


async def test_a_task_without_tools_asks_for_its_structure(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """No tool to call: the first request already asks for the JSON."""
    await _ready(hass, llm_server, {"tools": []}, {})
    llm_server.add(text_stream('{"city": "Rome", "temperature": 14}'))

    response = await generate(
        hass, instructions="Rome's weather as data.", structure=STRUCTURE
    )

    assert response["data"] == {"city": "Rome", "temperature": 14.0}
    request = llm_server.requests[0]
    assert set(_schema(request)["properties"]) == {"city", "temperature"}
    assert _schema(request)["required"] == ["city", "temperature"]


@pytest.mark.usefixtures("socket_enabled")
async def test_after_the_tools_the_closing_request_asks_for_the_structure(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    tools: list[dict[str, Any]],
) -> None:
    """The small profile on llama.cpp: the model read the weather, then
    called it again instead of answering; the closing request (no tool may
    run) asks for the structure as llama.cpp reads it, and the answer fits."""
    llm_server.pages["GET /props"] = server_check("llama-server__props")
    await _ready(hass, llm_server, {"tools": tools}, {CONF_PROFILE: "small"})
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        text_stream('{"city": "Rome", "temperature": 14}'),
    )

    response = await generate(
        hass, instructions="Get Rome's weather as data.", structure=STRUCTURE
    )

    assert response["data"] == {"city": "Rome", "temperature": 14.0}
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    first, *_, closing = llm_server.requests
    assert "response_format" not in first  # a round that may call tools
    assert closing["tool_choice"] == "none"
    assert closing["response_format"]["type"] == "json_object"
    assert set(_schema(closing)["properties"]) == {"city", "temperature"}


@pytest.mark.parametrize(
    ("kind", "form"),
    [
        ("llama.cpp", "json_object"),
        ("llama-cpp-python", "json_object"),
        ("ollama", "json_schema"),
        ("vllm", "json_schema"),
        ("openai", "json_schema"),
        ("unknown", "json_schema"),
    ],
)
def test_each_server_is_asked_in_its_form(kind: str, form: str) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}}}
    asked = response_format(schema, kind)
    assert asked["type"] == form
    assert _schema({"response_format": asked}) == schema
