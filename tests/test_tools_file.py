"""The tools file: read at setup and at every reload; problems go to Repairs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from homeassistant.components import conversation
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import DOMAIN

from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream

AGENT_ID = "conversation.http_tools_agent"
FILE_NAME = "http_tools.json"


def file_tool(endpoint: ToolEndpoint, name: str) -> dict[str, Any]:
    """A tool for the file."""
    return {
        "name": name,
        "description": f"The {name} tool.",
        "url": f"{endpoint.url}/{name}",
        "method": "POST",
    }


@pytest.fixture
def config_dir(hass: HomeAssistant, tmp_path: Path) -> Path:
    """A configuration directory of our own for the tools file."""
    hass.config.config_dir = str(tmp_path)
    return tmp_path


@pytest.fixture
def extra_options() -> dict[str, Any]:
    """Options with a tools file next to the options' tools."""
    return {"tools_file": FILE_NAME}


async def setup(hass: HomeAssistant) -> None:
    """Load the integration."""
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, DOMAIN, {})
    await hass.async_block_till_done()


async def active(hass: HomeAssistant) -> dict[str, Any]:
    """What get_tools reports."""
    response = await hass.services.async_call(
        DOMAIN, "get_tools", {}, blocking=True, return_response=True
    )
    assert response is not None
    return dict(response)


def names(response: dict[str, Any]) -> list[str]:
    """Tool names of a response."""
    return [tool["name"] for tool in response["tools"]]


def file_issue(hass: HomeAssistant, entry: MockConfigEntry) -> ir.IssueEntry | None:
    """The repair issue about the entry's tools file, if any."""
    return ir.async_get(hass).async_get_issue(DOMAIN, f"tools_file_{entry.entry_id}")


@pytest.mark.parametrize("tools", [[]])
async def test_file_tools_alone_report_source_file(
    hass: HomeAssistant,
    config_dir: Path,
    config_entry: MockConfigEntry,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """Only file tools: source `file`, and the agent runs them."""
    (config_dir / FILE_NAME).write_text(
        json.dumps([file_tool(tool_endpoint, "open_gate")]), encoding="utf-8"
    )
    await setup(hass)

    response = await active(hass)
    assert response["source"] == "file"
    assert names(response) == ["open_gate"]

    llm_server.add(tool_calls_stream(("open_gate", {})), text_stream("Gate open."))
    result = await conversation.async_converse(
        hass, "Open the gate", None, Context(), agent_id=AGENT_ID
    )
    assert result.response.speech["plain"]["speech"] == "Gate open."
    assert [r.path for r in tool_endpoint.requests] == ["/open_gate"]


async def test_reload_rereads_the_file(
    hass: HomeAssistant,
    config_dir: Path,
    config_entry: MockConfigEntry,
    tool_endpoint: ToolEndpoint,
) -> None:
    """Edit the file, reload the entry: the new definitions are active."""
    path = config_dir / FILE_NAME
    path.write_text(
        json.dumps([file_tool(tool_endpoint, "open_gate")]), encoding="utf-8"
    )
    await setup(hass)
    assert names(await active(hass)) == ["open_gate", "get_weather", "send_webhook"]

    path.write_text(
        json.dumps(
            [
                file_tool(tool_endpoint, "close_gate"),
                # Same name as an options tool: the options one wins.
                file_tool(tool_endpoint, "get_weather"),
            ]
        ),
        encoding="utf-8",
    )
    # Nothing changes until the reload ("read once", like the guide).
    assert names(await active(hass)) == ["open_gate", "get_weather", "send_webhook"]

    assert await hass.config_entries.async_reload(config_entry.entry_id)
    await hass.async_block_till_done()

    response = await active(hass)
    assert names(response) == ["close_gate", "get_weather", "send_webhook"]
    weather = response["tools"][1]
    assert weather["url"].endswith("/weather/{city}")
    assert response["source"] == "options"


async def test_missing_file_is_a_repair_issue_and_options_tools_work(
    hass: HomeAssistant,
    config_dir: Path,
    config_entry: MockConfigEntry,
    tool_endpoint: ToolEndpoint,
) -> None:
    """A missing file: a repair issue; the options' tools keep working."""
    await setup(hass)

    issue = file_issue(hass, config_entry)
    assert issue is not None
    assert issue.translation_key == "tools_file_invalid"
    assert issue.translation_placeholders is not None
    assert issue.translation_placeholders["path"] == FILE_NAME
    assert "file not found" in issue.translation_placeholders["error"]
    assert names(await active(hass)) == ["get_weather", "send_webhook"]

    # Creating the file and reloading clears the issue.
    (config_dir / FILE_NAME).write_text(
        json.dumps([file_tool(tool_endpoint, "open_gate")]), encoding="utf-8"
    )
    assert await hass.config_entries.async_reload(config_entry.entry_id)
    await hass.async_block_till_done()
    assert file_issue(hass, config_entry) is None
    assert names(await active(hass)) == ["open_gate", "get_weather", "send_webhook"]


async def test_invalid_file_names_tool_and_field(
    hass: HomeAssistant, config_dir: Path, config_entry: MockConfigEntry
) -> None:
    """An invalid definition in the file is reported with tool and field."""
    (config_dir / FILE_NAME).write_text(
        json.dumps([{"name": "gate", "url": "https://x/", "method": "GET POST"}]),
        encoding="utf-8",
    )
    await setup(hass)

    issue = file_issue(hass, config_entry)
    assert issue is not None
    assert issue.translation_placeholders is not None
    assert issue.translation_placeholders["error"].startswith("tool #0 'gate': method:")
    assert names(await active(hass)) == ["get_weather", "send_webhook"]


async def test_removing_the_file_option_clears_the_issue(
    hass: HomeAssistant, config_dir: Path, config_entry: MockConfigEntry
) -> None:
    """Clearing `tools_file` in the options removes the repair issue."""
    await setup(hass)
    assert file_issue(hass, config_entry) is not None

    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, "tools_file": ""}
    )
    await hass.async_block_till_done()
    assert file_issue(hass, config_entry) is None
