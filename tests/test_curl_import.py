"""Configure → "Add a tool from a curl command": the command, the editor
with its draft, the tool and its secrets saved; then a turn calls the tool
and a real server on loopback receives what the real curl sends."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.engine.curl.command import read_command
from custom_components.http_tools_agent.engine.curl.draft import draft_tool
from custom_components.http_tools_agent.flows.lists import NONE_SHOWN

from .engine.curl_cases import CASES, assert_same_request, pointed_at, run_curl
from .kit import converse
from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream

pytestmark = pytest.mark.usefixtures("setup_integration")

CHROME = next(case for case in CASES if case.service == "chrome")
GOTIFY = next(case for case in CASES if case.service == "gotify")
TOKEN = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJhYmMxMjMifQ.c2lnbmF0dXJl"


@pytest.fixture
def extra_options() -> dict[str, Any]:
    """A secret the entry already has."""
    return {"secrets": {"bell_key": "bell-secret-value"}}


async def open_curl(hass: HomeAssistant, entry: MockConfigEntry) -> Any:
    """The options menu, then *Add a tool from a curl command*."""
    result = await hass.config_entries.options.async_init(entry.entry_id)
    menu = result["menu_options"]
    assert isinstance(menu, list)
    assert menu[:2] == ["add_tool", "curl"]
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": "curl"}
    )
    assert result["step_id"] == "curl"
    return result


async def submit(hass: HomeAssistant, result: Any, data: dict[str, Any]) -> Any:
    """Submit a form; let a reload finish."""
    result = await hass.config_entries.options.async_configure(result["flow_id"], data)
    await hass.async_block_till_done()
    return result


def shown(result: Any) -> dict[str, Any]:
    """What the form's fields show: what Submit sends when nothing is changed."""
    values: dict[str, Any] = {}
    for field in result["data_schema"].schema:
        value = (field.description or {}).get("suggested_value")
        if value is None and callable(field.default):
            value = field.default()
        if value is not None:
            values[str(field)] = value
    return values


async def test_a_browser_copy_becomes_a_tool_that_sends_the_same_request(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """Chrome's "Copy as cURL" of Home Assistant's frontend turning on a
    light: the editor opens with the request as a tool, its token a secret
    named after the tool; saved, a turn calls it and the service receives
    what curl sends, token included."""
    command = pointed_at(CHROME.command, tool_endpoint.url)
    result = await open_curl(hass, config_entry)
    result = await submit(
        hass, result, {"curl_command": command, "curl_name": "kitchen_light"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "curl_tool"
    placeholders = result["description_placeholders"]
    assert placeholders["new_secrets"] == "kitchen_light_token"
    assert placeholders["stand_ins"] == NONE_SHOWN
    assert "sec-fetch-mode" in placeholders["notes"]
    form = shown(result)
    assert form["name"] == "kitchen_light"
    assert form["method"] == "POST"
    assert form["url"] == f"{tool_endpoint.url}/api/services/light/turn_on"
    assert {
        "name": "authorization",
        "value": "Bearer {secret:kitchen_light_token}",
    } in (form["headers"])
    assert form["body"] == {
        "entity_id": "{entity_id}",
        "brightness_pct": "{brightness_pct}",
        "name": "{name}",
    }
    assert TOKEN not in str(result)

    result = await submit(
        hass, result, form | {"description": "Turn on a light at a brightness."}
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    saved = config_entry.options["tools"][-1]
    assert saved["name"] == "kitchen_light"
    assert TOKEN not in str(config_entry.options["tools"])
    assert config_entry.options["secrets"] == {
        "bell_key": "bell-secret-value",
        "kitchen_light_token": TOKEN,
    }

    await run_curl(command)
    draft = draft_tool(read_command(command), name="kitchen_light")
    llm_server.add(
        tool_calls_stream(("kitchen_light", draft.examples())), text_stream("Done.")
    )
    await converse(hass, "Turn on Giulia's lamp in the kitchen at 40 percent")
    by_curl, by_tool = tool_endpoint.requests
    assert_same_request(by_curl, by_tool, read_command(command), draft)
    assert by_tool.headers["authorization"] == f"Bearer {TOKEN}"


async def test_the_docs_stand_in_is_named_and_a_removed_secret_not_saved(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """Gotify's published command holds `<apptoken>`: the editor says to set
    the real value; a secret the user edits out of the tool is not saved."""
    result = await open_curl(hass, config_entry)
    result = await submit(hass, result, {"curl_command": GOTIFY.command})
    placeholders = result["description_placeholders"]
    assert placeholders["new_secrets"] == "message_token"
    assert placeholders["stand_ins"] == "message_token"
    assert "multipart/form-data" in placeholders["notes"]
    form = shown(result)
    assert form["url"] == "https://push.example.de/message?token={secret:message_token}"
    form["url"] = "https://push.example.de/message?token={secret:bell_key}"
    result = await submit(hass, result, form)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert config_entry.options["tools"][-1]["name"] == "message"
    assert config_entry.options["secrets"] == {"bell_key": "bell-secret-value"}


async def test_an_invalid_draft_stays_in_the_editor_with_its_secrets(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """A problem in the edited draft shows under its field; the command's
    secret still counts as defined, and nothing is saved."""
    before = dict(config_entry.options)
    result = await open_curl(hass, config_entry)
    result = await submit(
        hass,
        result,
        {"curl_command": "curl -H 'X-Api-Key: k-1' http://x.example/cal"},
    )
    form = shown(result)
    result = await submit(hass, result, form | {"name": "get_weather"})
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"name": "invalid_tool_name"}
    assert (
        "another tool already has this name"
        in (result["description_placeholders"]["name_error"])
    )
    assert dict(config_entry.options) == before
    result = await submit(hass, result, form)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert config_entry.options["secrets"]["cal_x_api_key"] == "k-1"


@pytest.mark.parametrize(
    ("command", "error"),
    [
        ("wget http://x.example/", "curl_not_a_command"),
        ("curl -H 'Authorization: Bearer s3cr3t-value'", "curl_no_url"),
        ("curl -d 'unclosed http://x.example/", "curl_quoting"),
        ("curl -d @body.json http://x.example/", "curl_reads_file"),
        ("curl http://a.example/ http://b.example/", "curl_two_urls"),
    ],
)
async def test_a_command_that_cannot_be_a_tool_says_why(
    hass: HomeAssistant, config_entry: MockConfigEntry, command: str, error: str
) -> None:
    """The error names the problem under the command, which stays in the
    form; nothing is saved and no value of the command is shown."""
    before = dict(config_entry.options)
    result = await open_curl(hass, config_entry)
    result = await submit(hass, result, {"curl_command": command})
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"curl_command": error}
    assert result["description_placeholders"]["curl_error"]
    assert "s3cr3t" not in str(result["description_placeholders"])
    assert shown(result)["curl_command"] == command
    assert dict(config_entry.options) == before
