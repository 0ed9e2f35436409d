"""The `http_tools_agent_tool_call` event after every HTTP tool run."""

from __future__ import annotations

from typing import Any

from homeassistant.core import Context, HomeAssistant
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import async_capture_events

from custom_components.http_tools_agent.const import (
    CONF_TOOL_RESULT_MAX_CHARS,
    DOMAIN,
    EVENT_TOOL_CALL,
)

from .kit import AGENT_ID, converse, speech, weather_tool
from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream

SECRET = "s3cr3t-session-token"

pytestmark = pytest.mark.usefixtures("setup_integration")


@pytest.fixture
def tools(tool_endpoint: ToolEndpoint) -> list[dict[str, Any]]:
    """Weather, a note tool whose token goes into a header, and a failing one."""
    return [
        weather_tool(tool_endpoint.url),
        {
            "name": "create_note",
            "description": "Save a note.",
            "parameters": {
                "type": "object",
                "properties": {"token": {"type": "string"}, "text": {"type": "string"}},
                "required": ["token", "text"],
            },
            "url": f"{tool_endpoint.url}/notes",
            "method": "POST",
            "headers": {"Authorization": "Bearer {token}"},
        },
        {
            "name": "printer_status",
            "description": "The printer's status.",
            "url": f"{tool_endpoint.url}/busy",
            "method": "GET",
        },
        {
            "name": "broken",
            "description": "Always fails.",
            "url": f"{tool_endpoint.url}/fail",
            "method": "GET",
        },
    ]


async def test_event_contents_and_redaction(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """One event per run, header values redacted, everything else reported."""
    events = async_capture_events(hass, EVENT_TOOL_CALL)
    llm_server.add(
        tool_calls_stream(
            ("get_weather", {"city": "Rome"}),
            ("create_note", {"token": SECRET, "text": "buy milk"}),
        ),
        text_stream("Done."),
    )
    context = Context()

    result = await converse(
        hass, "Weather in Rome, and note: buy milk", context=context
    )

    assert speech(result) == "Done."
    # The secret did reach the tool's server, in the header.
    note = next(r for r in tool_endpoint.requests if r.path == "/notes")
    assert note.headers["Authorization"] == f"Bearer {SECRET}"

    by_tool = {event.data["tool"]: event for event in events}
    assert set(by_tool) == {"get_weather", "create_note"}
    weather = by_tool["get_weather"].data
    assert weather["arguments"] == {"city": "Rome"}
    assert weather["method"] == "GET"
    assert weather["status"] == 200
    assert weather["ok"] is True
    assert weather["truncated"] is False
    assert isinstance(weather["duration"], float)
    assert 0 <= weather["duration"] < 5
    assert weather["conversation_id"] == result.conversation_id
    assert weather["agent_id"] == AGENT_ID
    assert weather["platform"] == DOMAIN

    created = by_tool["create_note"].data
    assert created["arguments"] == {"token": "**REDACTED**", "text": "buy milk"}
    assert created["method"] == "POST"
    assert created["ok"] is True
    assert SECRET not in repr([event.data for event in events])
    # The events carry the turn's context, so the logbook links them.
    assert by_tool["get_weather"].context.id == context.id


async def test_failed_and_truncated_runs(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    config_entry: Any,
) -> None:
    """A non-2xx status is `ok: false`; a long result is `truncated: true`."""
    hass.config_entries.async_update_entry(
        config_entry,
        options={**config_entry.options, CONF_TOOL_RESULT_MAX_CHARS: 100},
    )
    await hass.async_block_till_done()
    events = async_capture_events(hass, EVENT_TOOL_CALL)
    llm_server.add(
        tool_calls_stream(("broken", {})),
        text_stream("It failed."),
        tool_calls_stream(("get_weather", {"city": "x" * 300})),
        text_stream("Long."),
    )

    await converse(hass, "Try the broken tool")
    await converse(hass, "Weather in a long city")

    assert [e.data["tool"] for e in events] == ["broken", "get_weather"]
    broken, weather = (e.data for e in events)
    assert broken["ok"] is False
    assert broken["status"] == 500
    assert broken["method"] == "GET"
    assert weather["ok"] is True
    assert weather["truncated"] is True


async def test_automation_reacts_to_the_event(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """The README automation: notify when a tool fails."""
    assert await async_setup_component(
        hass,
        "automation",
        {
            "automation": {
                "alias": "Tool failed",
                "triggers": [
                    {
                        "trigger": "event",
                        "event_type": EVENT_TOOL_CALL,
                        "event_data": {"ok": False},
                    }
                ],
                "actions": [
                    {
                        "action": "input_text.set_value",
                        "target": {"entity_id": "input_text.last_tool_failure"},
                        "data": {
                            "value": (
                                "{{ trigger.event.data.tool }} "
                                "HTTP {{ trigger.event.data.status }}"
                            )
                        },
                    }
                ],
            }
        },
    )
    assert await async_setup_component(
        hass, "input_text", {"input_text": {"last_tool_failure": {"initial": "none"}}}
    )
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        text_stream("Sunny."),
        tool_calls_stream(("broken", {})),
        text_stream("Failed."),
    )

    await converse(hass, "Weather in Rome?")
    await hass.async_block_till_done()
    state = hass.states.get("input_text.last_tool_failure")
    assert state is not None
    assert state.state == "none"

    await converse(hass, "Use the broken tool")
    await hass.async_block_till_done()
    state = hass.states.get("input_text.last_tool_failure")
    assert state is not None
    assert state.state == "broken HTTP 500"


async def test_a_retried_read_says_so(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """A read the server first refused as busy (503) ran again: the event
    counts the new try, and a call that needed none says 0."""
    events = async_capture_events(hass, EVENT_TOOL_CALL)
    llm_server.add(
        tool_calls_stream(("printer_status", {}), ("get_weather", {"city": "Rome"})),
        text_stream("It is idle."),
    )

    await converse(hass, "How is the printer?")

    by_tool = {event.data["tool"]: event.data for event in events}
    assert by_tool["printer_status"]["ok"] is True
    assert by_tool["printer_status"]["status"] == 200
    assert by_tool["printer_status"]["retries"] == 1
    assert by_tool["get_weather"]["retries"] == 0
    assert [r.path for r in tool_endpoint.requests].count("/busy") == 2
