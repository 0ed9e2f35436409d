"""The HTTP tools as a Home Assistant LLM API that any agent can use."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_capture_events,
)

from custom_components.http_tools_agent.const import DOMAIN, EVENT_TOOL_CALL
from custom_components.http_tools_agent.tools.call_result import (
    CallOutcome,
    CallResult,
)
from custom_components.http_tools_agent.turn.outcomes import outcome_of
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

    assert result == CallResult(
        data={"result": '{"ok":true,"method":"POST"}'},
        outcome=CallOutcome.DONE,
        status=200,
    )
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
    assert outcome_of(result) is CallOutcome.UNREACHABLE


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

    events = async_capture_events(hass, EVENT_TOOL_CALL)

    result = await converse(hass, "Weather in Rome?", agent_id=agent_id)

    assert speech(result) == "Sunny in Rome."
    # Another integration's agent: the event names it and its integration.
    (event,) = events
    assert event.data["platform"] == "llama_cpp"
    assert event.data["agent_id"] == agent_id
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    tools: list[dict[str, Any]] = llm_server.requests[0]["tools"]
    assert tools[0]["function"]["name"] == "get_weather"
    assert tools[0]["function"]["parameters"]["properties"]["city"]["type"] == "string"
    assert DOMAIN in hass.config.components


@pytest.mark.usefixtures("setup_integration")
@pytest.mark.parametrize(
    ("method", "confirm", "read_only", "destructive", "idempotent"),
    [
        ("GET", "auto", True, False, True),
        ("HEAD", "auto", True, False, True),
        ("DELETE", "auto", False, True, True),
        ("PUT", "auto", False, True, True),
        ("POST", "auto", False, False, False),
        ("PATCH", "auto", False, False, False),
        ("PURGE", "auto", False, False, False),
        # A tool whose calls wait for the user's yes is destructive.
        ("POST", "always", False, True, False),
        ("GET", "always", False, True, True),
    ],
)
async def test_tools_say_what_they_do(
    hass: HomeAssistant,
    method: str,
    confirm: str,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
) -> None:
    """Agents that honour tool annotations (e.g. ask before a destructive
    call) learn from the HTTP method and the tool's `confirm` what a tool
    does to its server; every HTTP tool reaches a world outside Home
    Assistant."""
    tool = {
        "name": "t",
        "url": "http://127.0.0.1:9/x",
        "method": method,
        "confirm": confirm,
    }
    await call_service(hass, "set_tools", {"tools": [tool]})
    instance = await llm.async_get_api(hass, API_ID, llm_context())

    offered, clock = instance.tools
    assert clock.name == "GetDateTime"
    assert offered.annotations == llm.ToolAnnotations(
        read_only=read_only,
        destructive=destructive,
        idempotent=idempotent,
        open_world=True,
    )
