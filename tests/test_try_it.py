"""The tool editor's *Try it*: a tool's request sent with typed arguments,
and what the model would read and the agent would say, before or after
saving; nothing sent before the user asks."""

from __future__ import annotations

import json
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from .kit import weather_tool
from .servers import ToolEndpoint

pytestmark = pytest.mark.usefixtures("setup_integration")

BELL_KEY = "bell-secret-value"
OTHER = "other-secret-value"


@pytest.fixture
def tools(tool_endpoint: ToolEndpoint) -> list[dict[str, Any]]:
    """A read with a secret header and its own sentence, a plain read, and
    a change whose service fails."""
    return [
        {
            "name": "get_forecast",
            "description": "The forecast for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "The city"},
                    "days": {"type": "integer", "minimum": 1, "maximum": 10},
                },
                "required": ["city"],
            },
            "url": f"{tool_endpoint.url}/echo?city={{city}}&days={{days?}}",
            "method": "GET",
            "headers": {"X-Key": "{secret:bell_key}"},
            "speech": "It asked for {query}",
        },
        weather_tool(tool_endpoint.url),
        {
            "name": "ring_bell",
            "description": "Ring the bell.",
            "url": f"{tool_endpoint.url}/fail",
            "method": "POST",
            "confirm": "always",
        },
    ]


@pytest.fixture
def extra_options() -> dict[str, Any]:
    """The secret the forecast sends, and one no tool uses."""
    return {"secrets": {"bell_key": BELL_KEY, "other": OTHER}}


async def menu_step(hass: HomeAssistant, entry: MockConfigEntry, step: str) -> Any:
    """Open the options menu and pick `step`."""
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert result["type"] is FlowResultType.MENU
    return await pick(hass, result, step)


async def pick(hass: HomeAssistant, result: Any, step: str) -> Any:
    """Pick `step` in a menu."""
    assert step in result["menu_options"]
    return await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": step}
    )


async def submit(hass: HomeAssistant, result: Any, data: dict[str, Any]) -> Any:
    """Submit a form; let a reload finish."""
    result = await hass.config_entries.options.async_configure(result["flow_id"], data)
    await hass.async_block_till_done()
    return result


async def try_saved(hass: HomeAssistant, entry: MockConfigEntry, tool: str) -> Any:
    """The Try it form of the saved tool `tool`."""
    result = await menu_step(hass, entry, "try_tool")
    assert result["step_id"] == "try_tool"
    result = await submit(hass, result, {"tool": tool})
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "try_it"
    return result


def fields(result: Any) -> dict[str, bool]:
    """A form's fields: name -> required."""
    return {
        str(key): type(key).__name__ == "Required"
        for key in result["data_schema"].schema
    }


def suggested(result: Any, key: str) -> Any:
    """The value a form field shows."""
    for field in result["data_schema"].schema:
        if str(field) == key:
            return (field.description or {}).get("suggested_value")
    raise KeyError(key)


async def test_a_saved_tool_is_sent_only_when_asked(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """Opening Try it sends nothing; the typed arguments reach the service;
    what the model would read (a secret the service echoed masked) and the
    tool's own sentence are shown, with the status and the time."""
    result = await try_saved(hass, config_entry, "get_forecast")
    assert fields(result) == {"city": True, "days": False}
    placeholders = result["description_placeholders"]
    assert placeholders["tool"] == "get_forecast"
    assert placeholders["request"].startswith(f"GET {tool_endpoint.url}/echo?")
    assert "- `city` (string, required): The city" in placeholders["parameters"]
    assert tool_endpoint.requests == []

    result = await submit(hass, result, {"city": "Rome", "days": 3})
    assert result["type"] is FlowResultType.MENU
    assert result["step_id"] == "try_result"
    (request,) = tool_endpoint.requests
    assert request.path == "/echo"
    assert request.query == "city=Rome&days=3"
    assert request.headers["X-Key"] == BELL_KEY
    shown = result["description_placeholders"]
    assert shown["status"] == "200"
    assert '"query":"city=Rome&days=3"' in shown["text"]
    assert '"X-Key":"***"' in shown["text"]
    assert shown["speech"] == "It asked for city=Rome&days=3"
    assert float(shown["seconds"]) < 5
    assert '"days": 3' in shown["arguments"]
    assert BELL_KEY not in str(result)
    assert result["menu_options"] == ["try_it", "try_edit", "init"]

    # Try again: the form shows what was typed; nothing more is sent.
    result = await pick(hass, result, "try_it")
    assert result["step_id"] == "try_it"
    assert suggested(result, "city") == "Rome"
    assert len(tool_endpoint.requests) == 1
    # Back to the form: the saved tool's, to change it.
    result = await submit(hass, result, {"city": "Oslo"})
    result = await pick(hass, result, "try_edit")
    assert result["step_id"] == "change_tool"
    assert suggested(result, "name") == "get_forecast"
    assert [r.query for r in tool_endpoint.requests] == [
        "city=Rome&days=3",
        "city=Oslo",
    ]


async def test_what_the_agent_reads_out_without_a_sentence_of_its_own(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """A tool with no sentence of its own: the agent's read-out of it."""
    result = await try_saved(hass, config_entry, "get_weather")
    result = await submit(hass, result, {"city": "Rome"})
    shown = result["description_placeholders"]
    assert shown["text"] == "```\nRome: ☀️ +14°C\n```"
    assert shown["speech"] == "Rome: ☀️ +14°C."


async def test_a_bad_argument_is_named_under_its_field(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """An argument the tool's schema refuses is shown under its field, in
    the words a model would read, and nothing is sent."""
    result = await try_saved(hass, config_entry, "get_forecast")
    result = await submit(hass, result, {"city": "Rome", "days": 11})
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"days": "try_invalid_argument"}
    assert result["description_placeholders"]["argument_error"] == (
        "Error: invalid value for argument 'days' of tool 'get_forecast': "
        "11 is more than the maximum 10"
    )
    result = await submit(hass, result, {"city": "  "})
    assert result["errors"] == {"city": "try_invalid_argument"}
    assert tool_endpoint.requests == []


async def test_a_server_error_reads_as_an_error(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """A service that fails: its status and body as the model reads them,
    and the failure as the agent says it. A tool that asks first is not
    asked about: the user pressed the button."""
    result = await try_saved(hass, config_entry, "ring_bell")
    assert fields(result) == {}
    result = await submit(hass, result, {})
    shown = result["description_placeholders"]
    assert shown["status"] == "500"
    assert shown["text"] == "```\nError: HTTP 500 — backend exploded\n```"
    assert shown["speech"] == (
        "That did not happen: the service answered with error 500."
    )
    assert [r.method for r in tool_endpoint.requests] == ["POST"]


async def test_every_secret_of_the_entry_is_masked(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """A secret the request did not use, typed and echoed back, is masked
    wherever the result shows it."""
    result = await try_saved(hass, config_entry, "get_forecast")
    result = await submit(hass, result, {"city": OTHER})
    assert tool_endpoint.requests[0].query == f"city={OTHER}"
    shown = result["description_placeholders"]
    assert "city=***" in shown["text"]
    assert shown["speech"] == "It asked for city=***"
    assert '"city": "***"' in shown["arguments"]
    assert OTHER not in str(result)


async def test_try_a_new_tool_before_saving_it(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """The tool form's box opens Try it for the checked form; nothing is
    saved or sent until asked; back to the form keeps what was typed;
    saving from the result saves the form's tool."""
    before = list(config_entry.options["tools"])
    result = await menu_step(hass, config_entry, "add_tool")
    form = {
        "name": "ring_doorbell",
        "method": "POST",
        "url": f"{tool_endpoint.url}/doorbell/{{tune}}",
        "parameters": {
            "type": "object",
            "properties": {"tune": {"type": "string", "enum": ["ding", "dong"]}},
            "required": ["tune"],
        },
        # The service answers {"ok": true, "method": "POST"}.
        "response": {"path": "method"},
        "try_it": True,
    }
    result = await submit(hass, result, form)
    assert result["step_id"] == "try_it"
    assert fields(result) == {"tune": True}
    assert config_entry.options["tools"] == before
    assert tool_endpoint.requests == []

    result = await submit(hass, result, {"tune": "ding"})
    assert [r.path for r in tool_endpoint.requests] == ["/doorbell/ding"]
    shown = result["description_placeholders"]
    assert shown["status"] == "200"
    # Shaped as the model gets it, and the agent's read-out of a change.
    assert shown["text"] == "```\nPOST\n```"
    assert shown["speech"] == "Done: POST."
    assert result["menu_options"] == ["try_it", "try_edit", "try_save"]

    result = await pick(hass, result, "try_edit")
    assert result["step_id"] == "add_tool"
    assert suggested(result, "url") == form["url"]
    result = await submit(hass, result, {**form, "name": "doorbell"})
    assert result["step_id"] == "try_it"
    result = await submit(hass, result, {"tune": "dong"})
    assert [r.path for r in tool_endpoint.requests][-1] == "/doorbell/dong"

    result = await pick(hass, result, "try_save")
    await hass.async_block_till_done()
    assert result["type"] is FlowResultType.CREATE_ENTRY
    saved = config_entry.options["tools"]
    assert saved[:-1] == before
    assert saved[-1]["name"] == "doorbell"
    assert "try_it" not in saved[-1]
    assert len(tool_endpoint.requests) == 2


async def test_an_invalid_form_is_not_tried(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """The box does not skip the form's checks: a bad URL stays an error
    under its field."""
    result = await menu_step(hass, config_entry, "add_tool")
    result = await submit(
        hass, result, {"name": "bad", "method": "GET", "url": "ftp://x", "try_it": True}
    )
    assert result["step_id"] == "add_tool"
    assert "url" in result["errors"]
    assert tool_endpoint.requests == []


async def test_nothing_is_tried_while_the_entry_is_not_loaded(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """Unloaded, the entry has no secrets or limits to run with: the menu
    offers no Try a tool, and a form's Try it says so, sends nothing, and
    still saves the form's tool."""
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    result = await hass.config_entries.options.async_init(config_entry.entry_id)
    assert "try_tool" not in result["menu_options"]
    result = await pick(hass, result, "add_tool")
    form = {"name": "ping", "method": "GET", "url": f"{tool_endpoint.url}/ping"}
    result = await submit(hass, result, {**form, "try_it": True})
    assert result["step_id"] == "try_unavailable"
    assert result["menu_options"] == ["try_edit", "try_save"]
    result = await pick(hass, result, "try_save")
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert config_entry.options["tools"][-1]["name"] == "ping"
    assert tool_endpoint.requests == []


async def test_each_parameter_gets_a_field_of_its_type(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """A number box, a switch, a list of the allowed values, YAML for an
    object; what they give is sent as the schema's types (the list's "2"
    as the number 2), as a model's call would be."""
    result = await menu_step(hass, config_entry, "add_tool")
    form = {
        "name": "chime",
        "method": "POST",
        "url": f"{tool_endpoint.url}/chime",
        "parameters": {
            "type": "object",
            "properties": {
                "count": {"type": "integer"},
                "loud": {"type": "boolean"},
                "tune": {"enum": [1, 2]},
                "extra": {"type": "object"},
                "note": {"type": "string"},
            },
        },
        "try_it": True,
    }
    result = await submit(hass, result, form)
    kinds = {
        str(key): type(selector).__name__
        for key, selector in result["data_schema"].schema.items()
    }
    assert kinds == {
        "count": "NumberSelector",
        "loud": "BooleanSelector",
        "tune": "SelectSelector",
        "extra": "ObjectSelector",
        "note": "TextSelector",
    }
    result = await submit(
        hass,
        result,
        {"count": 2, "loud": True, "tune": "2", "extra": {"a": 1}, "note": ""},
    )
    assert result["step_id"] == "try_result"
    (request,) = tool_endpoint.requests
    assert json.loads(request.body) == {
        "count": 2,
        "loud": True,
        "tune": 2,
        "extra": {"a": 1},
    }
