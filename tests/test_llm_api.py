"""The HTTP tools as a Home Assistant LLM API that any agent can use."""

from __future__ import annotations

from typing import Any

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigEntryState, ConfigSubentryData
from homeassistant.const import CONF_LLM_HASS_API
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import llm
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import DOMAIN
from custom_components.http_tools_agent.llm_api import API_NAME, api_id_for

from .conftest import ENTRY_UNIQUE_ID
from .servers import FakeLLMServer, ToolEndpoint, completion

API_ID = api_id_for(ENTRY_UNIQUE_ID)


def _context() -> llm.LLMContext:
    return llm.LLMContext(
        platform="test",
        context=Context(),
        language="en",
        assistant="conversation",
        device_id=None,
    )


async def test_api_registered_while_loaded(
    hass: HomeAssistant, setup_integration: MockConfigEntry
) -> None:
    """The entry's API is listed for agents to pick, and gone after unload."""
    apis = {api.id: api.name for api in llm.async_get_apis(hass)}
    assert apis[API_ID] == API_NAME

    instance = await llm.async_get_api(hass, API_ID, _context())
    assert [tool.name for tool in instance.tools] == ["get_weather", "send_webhook"]
    assert (
        instance.tools[0].description == "Current weather and temperature for a city."
    )

    assert await hass.config_entries.async_unload(setup_integration.entry_id)
    assert setup_integration.state is ConfigEntryState.NOT_LOADED
    assert API_ID not in {api.id for api in llm.async_get_apis(hass)}


async def test_tool_call_through_the_api(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    tool_endpoint: ToolEndpoint,
) -> None:
    """Calling a tool through the API runs the HTTP request and returns its text."""
    instance = await llm.async_get_api(hass, API_ID, _context())

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


async def test_failed_tool_is_an_error_result(
    hass: HomeAssistant, setup_integration: MockConfigEntry, socket_enabled: None
) -> None:
    """A tool whose server is down gives an error result, not an exception."""
    runtime = setup_integration.runtime_data
    from custom_components.http_tools_agent.engine.definitions import parse_tools

    runtime.tools.set_override(
        parse_tools([{"name": "down", "url": "http://127.0.0.1:9/x", "method": "GET"}])
    )
    instance = await llm.async_get_api(hass, API_ID, _context())

    result = await instance.async_call_tool(
        llm.ToolInput(tool_name="down", tool_args={})
    )

    assert result.error is True
    assert str(result.data["result"]).startswith("Error: tool request failed: ")


@pytest.fixture
def core_llama_cpp_entry(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> MockConfigEntry:
    """Home Assistant's own llama.cpp agent, pointed at the same server."""
    entry = MockConfigEntry(
        domain="llama_cpp",
        title="core llama.cpp",
        data={"base_url": llm_server.base_url},
        subentries_data=[
            ConfigSubentryData(
                subentry_type="conversation",
                title="Core agent",
                unique_id=None,
                data={
                    "chat_model": "local",
                    "recommended": True,
                    CONF_LLM_HASS_API: [API_ID],
                },
            )
        ],
    )
    entry.add_to_hass(hass)
    return entry


async def test_another_agent_uses_our_tools(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    core_llama_cpp_entry: MockConfigEntry,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """Home Assistant's core llama.cpp agent can select and call the HTTP tools."""
    assert await hass.config_entries.async_setup(core_llama_cpp_entry.entry_id)
    await hass.async_block_till_done()
    agent_id = "conversation.core_agent"
    assert hass.states.get(agent_id) is not None
    # The core agent does not stream unless its server check found streaming.
    llm_server.add(
        completion(None, [("get_weather", {"city": "Rome"})], "tool_calls"),
        completion("Sunny in Rome."),
    )

    result = await conversation.async_converse(
        hass, "Weather in Rome?", None, Context(), agent_id=agent_id
    )

    assert result.response.speech["plain"]["speech"] == "Sunny in Rome."
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    tools: list[dict[str, Any]] = llm_server.requests[0]["tools"]
    assert tools[0]["function"]["name"] == "get_weather"
    assert tools[0]["function"]["parameters"]["properties"]["city"]["type"] == "string"
    assert DOMAIN in hass.config.components
