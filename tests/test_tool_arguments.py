"""A call's arguments are checked against the tool's schema before any
request: the model reads what is wrong and can retry; lossless conversions
reach the request; the run_tool action gets the same checks."""

from __future__ import annotations

import json
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_capture_events,
)

from custom_components.http_tools_agent.const import EVENT_TOOL_CALL

from .kit import API_ID, call_service, converse, llm_context, speech
from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream


@pytest.fixture
def tools(tool_endpoint: ToolEndpoint) -> list[dict[str, Any]]:
    """A thermostat with an enum, a number range and a nested object."""
    return [
        {
            "name": "set_unit",
            "description": "Set the thermostat's display unit.",
            "parameters": {
                "type": "object",
                "properties": {
                    "unit": {"type": "string", "enum": ["C", "F"]},
                    "target": {"type": "number", "minimum": 5, "maximum": 30},
                    "schedule": {
                        "type": "object",
                        "properties": {
                            "days": {"type": "integer"},
                            "eco": {"type": "boolean"},
                        },
                        "required": ["days"],
                    },
                },
                "required": ["unit"],
            },
            "url": f"{tool_endpoint.url}/thermostat",
            "method": "POST",
        },
        {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
            "url": f"{tool_endpoint.url}/weather/{{city}}",
            "method": "GET",
        },
    ]


@pytest.mark.usefixtures("setup_integration")
async def test_an_invalid_value_is_an_error_the_model_reads_and_retries(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    setup_integration: MockConfigEntry,
) -> None:
    """`K` is no allowed unit: no request; the model reads why and retries."""
    events = async_capture_events(hass, EVENT_TOOL_CALL)
    llm_server.add(
        tool_calls_stream(("set_unit", {"unit": "K"})),
        tool_calls_stream(("set_unit", {"unit": "C"})),
        text_stream("The thermostat shows Celsius now."),
    )

    result = await converse(hass, "Show the temperature in kelvin")

    assert speech(result) == "The thermostat shows Celsius now."
    assert [json.loads(r.body) for r in tool_endpoint.requests] == [{"unit": "C"}]
    assert llm_server.requests[1]["messages"][-1]["content"] == (
        "Error: invalid value for argument 'unit' of tool 'set_unit': "
        "'K' is not one of 'C', 'F'"
    )
    # Automations see the refused call too, with no method or status.
    assert [(e.data["ok"], e.data["status"]) for e in events] == [
        (False, None),
        (True, 200),
    ]
    (recent,) = setup_integration.runtime_data.recent_errors
    assert (recent.kind, recent.message) == ("tool:set_unit", "invalid arguments")


@pytest.mark.usefixtures("setup_integration")
async def test_lossless_conversions_reach_the_request(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Numbers and booleans written as text are sent typed, nested too."""
    llm_server.add(
        tool_calls_stream(
            (
                "set_unit",
                {
                    "unit": "F",
                    "target": "21.5",
                    "schedule": {"days": "5", "eco": "true"},
                },
            )
        ),
        text_stream("Done."),
    )

    await converse(hass, "Fahrenheit, 21.5 degrees, eco on weekdays")

    (request,) = tool_endpoint.requests
    assert json.loads(request.body) == {
        "unit": "F",
        "target": 21.5,
        "schedule": {"days": 5, "eco": True},
    }


@pytest.mark.usefixtures("setup_integration")
async def test_nested_and_range_errors(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Every problem of the call is named; nothing is sent."""
    llm_server.add(
        tool_calls_stream(
            ("set_unit", {"unit": "C", "target": 40, "schedule": {"eco": "maybe"}})
        ),
        text_stream("I could not set that."),
    )

    await converse(hass, "Set 40 degrees")

    assert tool_endpoint.requests == []
    assert llm_server.requests[1]["messages"][-1]["content"].splitlines() == [
        "Error: missing required argument 'schedule.days' for tool 'set_unit'",
        "Error: invalid value for argument 'schedule.eco' of tool 'set_unit': "
        "'maybe' is not a boolean",
        "Error: invalid value for argument 'target' of tool 'set_unit': "
        "40 is more than the maximum 30",
    ]


@pytest.mark.usefixtures("setup_integration")
async def test_run_tool_checks_the_arguments_too(
    hass: HomeAssistant, tool_endpoint: ToolEndpoint
) -> None:
    """The action runs a tool the way an agent does: same checks, same texts."""
    refused = await call_service(
        hass, "run_tool", {"tool": "set_unit", "arguments": {"unit": "kelvin"}}
    )
    converted = await call_service(
        hass,
        "run_tool",
        {"tool": "set_unit", "arguments": '{"unit": "C", "target": "20"}'},
    )

    assert refused["ok"] is False
    assert refused["status"] is None
    assert refused["result"] == (
        "Error: invalid value for argument 'unit' of tool 'set_unit': "
        "'kelvin' is not one of 'C', 'F'"
    )
    assert converted["ok"] is True
    assert [json.loads(r.body) for r in tool_endpoint.requests] == [
        {"unit": "C", "target": 20}
    ]


@pytest.mark.usefixtures("setup_integration")
async def test_other_agents_get_the_same_checks(
    hass: HomeAssistant, tool_endpoint: ToolEndpoint
) -> None:
    """Any agent using the HTTP tools API (e.g. core llama_cpp) calls the same
    `HttpTool`: converted arguments, and a missing one never reaches the
    endpoint."""
    instance = await llm.async_get_api(hass, API_ID, llm_context())

    number = await instance.async_call_tool(llm.ToolInput("get_weather", {"city": 42}))
    missing = await instance.async_call_tool(llm.ToolInput("get_weather", {}))

    assert number.error is False
    assert missing.data == {
        "result": "Error: missing required argument 'city' for tool 'get_weather'"
    }
    assert [r.path for r in tool_endpoint.requests] == ["/weather/42"]


@pytest.mark.usefixtures("setup_integration")
async def test_arguments_written_as_a_schema_are_unwrapped(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """The 0.5B model wrote the schema's shape around the real arguments
    ("And in Prague?"): the city is read from `properties`, not refused as
    missing."""
    llm_server.add(
        tool_calls_stream(
            (
                "get_weather",
                {"properties": {"city": "Prague"}, "required": ["city"]},
            )
        ),
        text_stream("Prague is sunny."),
    )

    result = await converse(hass, "And in Prague?")

    assert speech(result) == "Prague is sunny."
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Prague"]
