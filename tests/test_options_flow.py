"""The options flow: tools as JSON, tools file, settings, example tools."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.engine.definitions import parse_tools_json

from .kit import call_service, converse, speech, tool_names
from .servers import FakeLLMServer, text_stream

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "custom_components" / "http_tools_agent"

pytestmark = pytest.mark.usefixtures("setup_integration")


def valid_settings(**changes: Any) -> dict[str, Any]:
    """A complete, valid form submission."""
    return {
        "tools": "",
        "tools_file": "",
        "tools_enabled": "auto",
        "max_tool_iterations": 4,
        "tool_timeout": 15,
        "tool_result_max_chars": 2000,
        **changes,
    }


async def open_settings(hass: HomeAssistant, entry: MockConfigEntry) -> Any:
    """Open the options menu and pick the settings form."""
    result = await hass.config_entries.options.async_init(entry.entry_id)
    assert result["type"] is FlowResultType.MENU
    assert result["menu_options"] == [
        "add_tool",
        "curl",
        "edit_tool",
        "delete_tool",
        "try_tool",
        "openapi",
        "secrets",
        "settings",
        "load_example",
    ]
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": "settings"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "settings"
    return result


def placeholders(result: Any) -> dict[str, str]:
    """The description placeholders of a form."""
    return dict(result["description_placeholders"] or {})


def suggested(result: Any, key: str) -> Any:
    """The value a form field shows."""
    for field in result["data_schema"].schema:
        if str(field) == key:
            return (field.description or {}).get("suggested_value")
    raise KeyError(key)


async def test_form_shows_current_tools_as_json(
    hass: HomeAssistant, config_entry: MockConfigEntry, tools: list[dict[str, Any]]
) -> None:
    """The editor holds the stored tools as JSON; the description the active ones."""
    result = await open_settings(hass, config_entry)
    assert json.loads(suggested(result, "tools")) == tools
    assert suggested(result, "tools_enabled") == "auto"
    assert suggested(result, "max_tool_iterations") == 4
    assert placeholders(result)["active_tools"] == ("get_weather, send_webhook")
    assert placeholders(result)["source"] == "options"


async def test_valid_options_apply_without_restart(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: Any
) -> None:
    """Saving stores the options and the entry reloads with the new tools."""
    new_tools = [
        {
            "name": "ring_doorbell",
            "description": "Ring the bell.",
            "url": f"{tool_endpoint.url}/bell",
            "method": "post",
        }
    ]
    result = await open_settings(hass, config_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        valid_settings(
            tools=json.dumps(new_tools, indent=2),
            tools_enabled="on",
            max_tool_iterations=6.0,
            tool_timeout=30.0,
            tool_result_max_chars=500.0,
        ),
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()

    assert config_entry.options == {
        "tools": new_tools,
        "tools_file": "",
        "tools_enabled": "on",
        "max_tool_iterations": 6,
        "tool_timeout": 30.0,
        "tool_result_max_chars": 500,
        "allowed_hosts": [],
    }
    assert isinstance(config_entry.options["max_tool_iterations"], int)
    runtime = config_entry.runtime_data
    assert runtime.settings.max_tool_iterations == 6
    assert runtime.settings.tool_timeout == 30.0
    assert runtime.settings.tool_result_max_chars == 500
    active = await call_service(hass, "get_tools")
    assert active["source"] == "options"
    assert tool_names(active) == ["ring_doorbell"]
    assert active["tools"][0]["method"] == "POST"


async def test_empty_editor_means_no_tools(
    hass: HomeAssistant, config_entry: MockConfigEntry, llm_server: FakeLLMServer
) -> None:
    """Clearing the editor removes the options' tools; source none; the model
    is offered no tools."""
    result = await open_settings(hass, config_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], valid_settings(tools="  ")
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert config_entry.options["tools"] == []
    assert (await call_service(hass, "get_tools"))["source"] == "none"
    llm_server.add(text_stream("Hi!"))
    assert speech(await converse(hass, "Hello")) == "Hi!"
    assert "tools" not in llm_server.requests[0]


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("[{", "not valid JSON: Expecting property name"),
        ('{"name": "x"}', "must be a JSON array, got object"),
        ('[{"name": "get_weather"}]', "tool #0 'get_weather': url: is required"),
        (
            '[{"name": "w", "url": "https://a/{city}", "metod": "GET"}]',
            "tool #0 'w': metod: unknown field (did you mean 'method'?)",
        ),
        (
            '[{"name": "w", "url": "https://a/"}, {"name": "w", "url": "https://b/"}]',
            "tool #1 'w': name: duplicate name",
        ),
        (
            '[{"name": "w", "url": "https://a/", "headers": {"X-Key": 5}}]',
            "tool #0 'w': headers.X-Key: must be a string",
        ),
    ],
)
async def test_invalid_tools_show_error_and_save_nothing(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    text: str,
    fragment: str,
) -> None:
    """The form names tool and field; options and active tools are unchanged."""
    before = dict(config_entry.options)
    result = await open_settings(hass, config_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], valid_settings(tools=text, max_tool_iterations=9)
    )

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"tools": "invalid_tools"}
    assert fragment in placeholders(result)["tools_error"]
    # What the user typed is still in the editor.
    assert suggested(result, "tools") == text
    assert suggested(result, "max_tool_iterations") == 9
    assert dict(config_entry.options) == before
    active = await call_service(hass, "get_tools")
    assert tool_names(active) == ["get_weather", "send_webhook"]


async def test_missing_tools_file_is_shown(
    hass: HomeAssistant, config_entry: MockConfigEntry, config_dir: Path
) -> None:
    """A file that does not exist is a form error; nothing is saved."""
    before = dict(config_entry.options)
    result = await open_settings(hass, config_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], valid_settings(tools_file="missing.json")
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"tools_file": "tools_file_not_found"}
    assert placeholders(result)["file_error"] == str(config_dir / "missing.json")
    assert dict(config_entry.options) == before


async def test_invalid_tools_file_is_shown(
    hass: HomeAssistant, config_entry: MockConfigEntry, config_dir: Path
) -> None:
    """A file with a bad definition names tool and field."""
    (config_dir / "tools.json").write_text(
        '[{"name": "w", "url": "gopher://x/"}]', encoding="utf-8"
    )
    result = await open_settings(hass, config_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], valid_settings(tools_file="tools.json")
    )
    assert result["errors"] == {"tools_file": "tools_file_invalid"}
    assert "tool #0 'w': url" in placeholders(result)["file_error"]


async def test_unreadable_tools_file_is_shown(
    hass: HomeAssistant, config_entry: MockConfigEntry, config_dir: Path
) -> None:
    """A directory given as the file cannot be read."""
    (config_dir / "folder").mkdir()
    result = await open_settings(hass, config_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], valid_settings(tools_file="folder")
    )
    assert result["errors"] == {"tools_file": "tools_file_unreadable"}


async def test_both_errors_at_once(
    hass: HomeAssistant, config_entry: MockConfigEntry, config_dir: Path
) -> None:
    """Bad tools and a missing file are both reported."""
    result = await open_settings(hass, config_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], valid_settings(tools="[1]", tools_file="nope.json")
    )
    assert result["errors"] == {
        "tools": "invalid_tools",
        "tools_file": "tools_file_not_found",
    }


async def test_valid_tools_file_is_used(
    hass: HomeAssistant, config_entry: MockConfigEntry, config_dir: Path
) -> None:
    """A valid file is saved and its tools join the options' tools."""
    (config_dir / "http_tools.json").write_text(
        json.dumps([{"name": "from_file", "url": "https://example.org/"}]),
        encoding="utf-8",
    )
    result = await open_settings(hass, config_entry)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"],
        valid_settings(
            tools=suggested(result, "tools"), tools_file=" http_tools.json "
        ),
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert config_entry.options["tools_file"] == "http_tools.json"
    active = await call_service(hass, "get_tools")
    assert tool_names(active) == [
        "from_file",
        "get_weather",
        "send_webhook",
    ]


async def test_load_example_fills_the_editor(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """The menu's example step opens the form with tools.example.json."""
    result = await hass.config_entries.options.async_init(config_entry.entry_id)
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {"next_step_id": "load_example"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "settings"
    text = suggested(result, "tools")
    assert text == (PACKAGE / "tools.example.json").read_text(encoding="utf-8")

    result = await hass.config_entries.options.async_configure(
        result["flow_id"], valid_settings(tools=text)
    )
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    expected = [d.name for d in parse_tools_json(text)]
    active = await call_service(hass, "get_tools")
    assert tool_names(active) == expected
    assert "get_weather" in expected


def test_bundled_example_matches_the_root_file() -> None:
    """HACS installs only the package: its copy must equal the canonical file."""
    assert (PACKAGE / "tools.example.json").read_bytes() == (
        ROOT / "tools.example.json"
    ).read_bytes()
    assert parse_tools_json((ROOT / "tools.example.json").read_bytes())


async def test_out_of_range_number_is_refused(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """The bounds are enforced: 0 rounds cannot be saved."""
    from homeassistant.data_entry_flow import InvalidData

    result = await open_settings(hass, config_entry)
    with pytest.raises(InvalidData):
        await hass.config_entries.options.async_configure(
            result["flow_id"], valid_settings(max_tool_iterations=0)
        )
    assert "max_tool_iterations" not in config_entry.options
