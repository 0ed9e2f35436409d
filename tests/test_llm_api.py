"""The HTTP tools as a Home Assistant LLM API that any agent can use."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import DOMAIN
from dev.loopback import free_port

from .kit import (
    API_ID,
    add_agent,
    call_service,
    converse,
    core_llama_cpp_entry,
    llm_context,
    speech,
)
from .servers import FakeLLMServer, ToolEndpoint, completion


async def test_tool_call_through_the_api(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    tool_endpoint: ToolEndpoint,
) -> None:
    """Calling a tool through the API runs the HTTP request and returns its text."""
    instance = await llm.async_get_api(hass, API_ID, llm_context())

    result = await instance.async_call_tool(
        llm.ToolInput(tool_name="send_webhook", tool_args={"message": "hello"})
    )

    assert result == llm.ToolResult(data={"result": '{"ok": true, "method": "POST"}'})
    (request,) = tool_endpoint.requests
    assert (request.method, request.path, request.body) == (
        "POST",
        "/hook",
        b'{"message":"hello"}',
    )
    assert request.headers["X-Tool"] == "http-tools-agent"


@pytest.mark.usefixtures("setup_integration", "socket_enabled")
async def test_failed_tool_is_an_error_result(hass: HomeAssistant) -> None:
    """A tool whose server is down gives an error result, not an exception."""
    down = {"name": "down", "url": f"http://127.0.0.1:{free_port()}/x", "method": "GET"}
    await call_service(hass, "set_tools", {"tools": [down]})
    instance = await llm.async_get_api(hass, API_ID, llm_context())

    result = await instance.async_call_tool(
        llm.ToolInput(tool_name="down", tool_args={})
    )

    assert result.error is True
    assert str(result.data["result"]).startswith("Error: tool request failed: ")


async def test_another_agent_uses_our_tools(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """Home Assistant's core llama.cpp agent can select and call the HTTP tools."""
    agent_id = await add_agent(hass, core_llama_cpp_entry(llm_server.base_url))
    assert agent_id == "conversation.core_agent"
    assert hass.states.get(agent_id) is not None
    # The core agent does not stream unless its server check found streaming.
    llm_server.add(
        completion(None, [("get_weather", {"city": "Rome"})], "tool_calls"),
        completion("Sunny in Rome."),
    )

    result = await converse(hass, "Weather in Rome?", agent_id=agent_id)

    assert speech(result) == "Sunny in Rome."
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    tools: list[dict[str, Any]] = llm_server.requests[0]["tools"]
    assert tools[0]["function"]["name"] == "get_weather"
    assert tools[0]["function"]["parameters"]["properties"]["city"]["type"] == "string"
    assert DOMAIN in hass.config.components
