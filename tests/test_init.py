"""An entry's life through real Home Assistant: set up, unload, reload, remove;
the tools file read at setup and at every reload, its problems in Repairs
(gone when fixed, when the option is cleared, and with the entry)."""

from __future__ import annotations

from datetime import timedelta
import json
from pathlib import Path
from typing import Any

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.helpers import (
    device_registry as dr,
    entity_registry as er,
    issue_registry as ir,
    llm,
)
from homeassistant.util import dt as dt_util
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_fire_time_changed,
)

from custom_components.http_tools_agent.const import (
    CONF_TOOLS,
    CONF_TOOLS_FILE,
    DEFAULT_CONVERSATION_NAME,
    DOMAIN,
)
from custom_components.http_tools_agent.tools.llm_api import API_NAME

from .kit import (
    AGENT_ID,
    API_ID,
    call_service,
    converse,
    entry_state,
    llm_context,
    load_integration,
    server_entry,
    speech,
    tool_names,
)
from .said import entry_reason
from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream

FILE_NAME = "http_tools.json"


def api_ids(hass: HomeAssistant) -> set[str]:
    """The LLM APIs agents can pick."""
    return {api.id for api in llm.async_get_apis(hass)}


def file_tool(endpoint: ToolEndpoint, name: str) -> dict[str, Any]:
    """A tool for the file."""
    return {
        "name": name,
        "description": f"The {name} tool.",
        "url": f"{endpoint.url}/{name}",
        "method": "POST",
    }


def write_tools(path: Path, tools: list[dict[str, Any]]) -> None:
    """Write a tools file."""
    path.write_text(json.dumps(tools), encoding="utf-8")


def file_issue(hass: HomeAssistant, entry: MockConfigEntry) -> ir.IssueEntry | None:
    """The repair issue about the entry's tools file, if any."""
    return ir.async_get(hass).async_get_issue(DOMAIN, f"tools_file_{entry.entry_id}")


async def active(hass: HomeAssistant) -> list[str]:
    """The names of the active tools (what get_tools reports)."""
    return tool_names(await call_service(hass, "get_tools"))


# --- set up, unload, reload (removing: with the tools file below) ----------


async def test_setup_offers_the_agent_and_its_tools(
    hass: HomeAssistant, setup_integration: MockConfigEntry
) -> None:
    """The agent can be picked for a pipeline; its tools are an LLM API."""
    assert setup_integration.state is ConfigEntryState.LOADED
    info = conversation.async_get_agent_info(hass, AGENT_ID)
    assert info is not None
    assert info.supports_streaming is True
    state = hass.states.get(AGENT_ID)
    assert state is not None
    assert state.name == DEFAULT_CONVERSATION_NAME

    apis = {api.id: api.name for api in llm.async_get_apis(hass)}
    assert apis[API_ID] == API_NAME
    instance = await llm.async_get_api(hass, API_ID, llm_context())
    assert [tool.name for tool in instance.tools] == [
        "get_weather",
        "send_webhook",
        "GetDateTime",
    ]
    assert (
        instance.tools[0].description == "Current weather and temperature for a city."
    )
    response = await call_service(hass, "get_tools")
    assert response["source"] == "options"


async def test_setup_waits_for_the_server_and_recovers_without_a_restart(
    hass: HomeAssistant, config_entry: MockConfigEntry, llm_server: FakeLLMServer
) -> None:
    """Test before setup: a server that is down (local servers often start
    after Home Assistant) leaves the entry retrying with the reason on its
    card; once the server answers, the next retry loads it and the agent
    answers, with no restart.

    (Until issue 13 the entry loaded without checking the server and each
    turn said it could not be reached: the entry looked healthy.)
    """
    await llm_server.stop()

    await load_integration(hass)

    assert config_entry.state is ConfigEntryState.SETUP_RETRY
    assert config_entry.reason == entry_reason(
        "setup_cannot_connect", url=llm_server.base_url
    )
    assert conversation.async_get_agent_info(hass, AGENT_ID) is None

    # Still down at the first retry: still retrying, nothing else happens.
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(seconds=10))
    await hass.async_block_till_done(wait_background_tasks=True)
    assert entry_state(config_entry) is ConfigEntryState.SETUP_RETRY

    await llm_server.start()  # the same port
    async_fire_time_changed(hass, dt_util.utcnow() + timedelta(minutes=2))
    await hass.async_block_till_done(wait_background_tasks=True)

    assert entry_state(config_entry) is ConfigEntryState.LOADED
    assert config_entry.reason is None
    llm_server.add(text_stream("Hi, I am here."))
    assert speech(await converse(hass, "Hello")) == "Hi, I am here."


@pytest.mark.parametrize(
    ("status", "body", "state", "reason"),
    [
        (
            404,
            b"<html>Not Found</html>",
            ConfigEntryState.SETUP_RETRY,
            "setup_not_openai_compatible",
        ),
        (
            503,
            b'{"error": {"message": "Loading model", "code": 503}}',
            ConfigEntryState.SETUP_RETRY,
            "setup_cannot_connect",
        ),
    ],
    ids=["not-an-openai-api", "loading-the-model"],
)
async def test_setup_says_why_the_server_cannot_be_used(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    llm_server: FakeLLMServer,
    status: int,
    body: bytes,
    state: ConfigEntryState,
    reason: str,
) -> None:
    """The entry's card tells what the server check found."""
    llm_server.models_status, llm_server.models_body = status, body

    await load_integration(hass)

    assert config_entry.state is state
    assert config_entry.reason == entry_reason(reason, url=llm_server.base_url)


async def test_setup_with_an_unusable_url_is_a_permanent_error(
    hass: HomeAssistant, socket_enabled: None
) -> None:
    """A URL that can never work (storage edited by hand) is not retried."""
    entry = server_entry("ftp://127.0.0.1/v1")
    entry.add_to_hass(hass)

    await load_integration(hass)

    assert entry.state is ConfigEntryState.SETUP_ERROR
    assert entry.reason == entry_reason("setup_invalid_url", url="ftp://127.0.0.1/v1")


async def test_unload_takes_agent_and_tools_away_until_set_up_again(
    hass: HomeAssistant, setup_integration: MockConfigEntry, llm_server: FakeLLMServer
) -> None:
    """Unloaded (e.g. disabled): no agent to pick, no HTTP Tools API, no tools;
    set up again, everything is back."""
    entry = setup_integration

    assert await hass.config_entries.async_unload(entry.entry_id)
    await hass.async_block_till_done()

    assert entry.state is ConfigEntryState.NOT_LOADED
    assert conversation.async_get_agent_info(hass, AGENT_ID) is None
    assert API_ID not in api_ids(hass)
    state = hass.states.get(AGENT_ID)
    assert state is not None
    assert state.state == "unavailable"

    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()

    assert conversation.async_get_agent_info(hass, AGENT_ID) is not None
    assert API_ID in api_ids(hass)
    llm_server.add(text_stream("Back."))
    assert speech(await converse(hass, "Hello")) == "Back."


async def test_changed_options_apply_at_once(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """New options reload the entry: the next turn offers the new tools."""
    hass.config_entries.async_update_entry(
        setup_integration,
        options={CONF_TOOLS: [file_tool(tool_endpoint, "open_gate")]},
    )
    await hass.async_block_till_done()

    assert setup_integration.state is ConfigEntryState.LOADED
    llm_server.add(tool_calls_stream(("open_gate", {})), text_stream("Gate open."))
    assert speech(await converse(hass, "Open the gate")) == "Gate open."
    offered = [t["function"]["name"] for t in llm_server.requests[0]["tools"]]
    assert offered == ["open_gate", "GetDateTime"]
    assert [r.target for r in tool_endpoint.requests] == ["POST /open_gate"]


# --- the tools file and its repair issue --------------------------------------


class TestToolsFile:
    """The entry's options name a tools file (`http_tools.json`)."""

    @pytest.fixture
    def extra_options(self) -> dict[str, Any]:
        """Options with a tools file next to the options' tools."""
        return {CONF_TOOLS_FILE: FILE_NAME}

    @pytest.fixture
    async def file_missing(
        self, hass: HomeAssistant, config_dir: Path, config_entry: MockConfigEntry
    ) -> ir.IssueEntry:
        """Loaded while the file does not exist; return the repair issue."""
        await load_integration(hass)
        issue = file_issue(hass, config_entry)
        assert issue is not None
        return issue

    @pytest.mark.parametrize("tools", [[]])
    async def test_file_tools_alone_report_source_file(
        self,
        hass: HomeAssistant,
        config_dir: Path,
        config_entry: MockConfigEntry,
        llm_server: FakeLLMServer,
        tool_endpoint: ToolEndpoint,
    ) -> None:
        """Only file tools: source `file`, and the agent runs them."""
        write_tools(config_dir / FILE_NAME, [file_tool(tool_endpoint, "open_gate")])
        await load_integration(hass)

        response = await call_service(hass, "get_tools")
        assert response["source"] == "file"
        assert tool_names(response) == ["open_gate"]

        llm_server.add(tool_calls_stream(("open_gate", {})), text_stream("Gate open."))
        assert speech(await converse(hass, "Open the gate")) == "Gate open."
        assert [r.path for r in tool_endpoint.requests] == ["/open_gate"]

    async def test_reload_rereads_the_file(
        self,
        hass: HomeAssistant,
        config_dir: Path,
        config_entry: MockConfigEntry,
        tool_endpoint: ToolEndpoint,
    ) -> None:
        """Edit the file, reload the entry: the new definitions are active."""
        path = config_dir / FILE_NAME
        write_tools(path, [file_tool(tool_endpoint, "open_gate")])
        await load_integration(hass)
        assert await active(hass) == ["open_gate", "get_weather", "send_webhook"]

        write_tools(
            path,
            [
                file_tool(tool_endpoint, "close_gate"),
                # Same name as an options tool: the options one wins.
                file_tool(tool_endpoint, "get_weather"),
            ],
        )
        # Nothing changes until the reload (the tools file is read once).
        assert await active(hass) == ["open_gate", "get_weather", "send_webhook"]

        assert await hass.config_entries.async_reload(config_entry.entry_id)
        await hass.async_block_till_done()

        response = await call_service(hass, "get_tools")
        assert tool_names(response) == ["close_gate", "get_weather", "send_webhook"]
        weather = response["tools"][1]
        assert weather["url"].endswith("/weather/{city}")
        assert response["source"] == "options"

    async def test_missing_file_is_a_repair_issue_and_options_tools_work(
        self,
        hass: HomeAssistant,
        config_dir: Path,
        config_entry: MockConfigEntry,
        tool_endpoint: ToolEndpoint,
        file_missing: ir.IssueEntry,
    ) -> None:
        """A missing file: a repair issue; the options' tools keep working.
        Creating the file and reloading clears the issue."""
        assert file_missing.translation_key == "tools_file_invalid"
        assert file_missing.translation_placeholders is not None
        assert file_missing.translation_placeholders["path"] == FILE_NAME
        assert "file not found" in file_missing.translation_placeholders["error"]
        assert await active(hass) == ["get_weather", "send_webhook"]

        write_tools(config_dir / FILE_NAME, [file_tool(tool_endpoint, "open_gate")])
        assert await hass.config_entries.async_reload(config_entry.entry_id)
        await hass.async_block_till_done()
        assert file_issue(hass, config_entry) is None
        assert await active(hass) == ["open_gate", "get_weather", "send_webhook"]

    async def test_invalid_file_names_tool_and_field(
        self, hass: HomeAssistant, config_dir: Path, config_entry: MockConfigEntry
    ) -> None:
        """An invalid definition in the file is reported with tool and field."""
        write_tools(
            config_dir / FILE_NAME,
            [{"name": "gate", "url": "https://x/", "method": "GET POST"}],
        )
        await load_integration(hass)

        issue = file_issue(hass, config_entry)
        assert issue is not None
        assert issue.translation_placeholders is not None
        error = issue.translation_placeholders["error"]
        assert error.startswith("tool #0 'gate': method:")
        assert await active(hass) == ["get_weather", "send_webhook"]

    @pytest.mark.usefixtures("file_missing")
    async def test_removing_the_file_option_clears_the_issue(
        self, hass: HomeAssistant, config_entry: MockConfigEntry
    ) -> None:
        """Clearing `tools_file` in the options removes the repair issue."""
        hass.config_entries.async_update_entry(
            config_entry, options={**config_entry.options, CONF_TOOLS_FILE: ""}
        )
        await hass.async_block_till_done()
        assert file_issue(hass, config_entry) is None

    @pytest.mark.usefixtures("file_missing")
    async def test_removing_the_entry_takes_agent_and_issue_with_it(
        self, hass: HomeAssistant, config_entry: MockConfigEntry
    ) -> None:
        """Deleting the entry leaves no agent, no API and no repair issue behind."""
        registry = er.async_get(hass)
        assert registry.async_get(AGENT_ID) is not None

        await hass.config_entries.async_remove(config_entry.entry_id)
        await hass.async_block_till_done()

        assert hass.config_entries.async_entries(DOMAIN) == []
        assert file_issue(hass, config_entry) is None
        assert registry.async_get(AGENT_ID) is None
        assert hass.states.get(AGENT_ID) is None
        assert API_ID not in api_ids(hass)


async def test_removing_an_agent_removes_its_device(
    hass: HomeAssistant, setup_integration: MockConfigEntry
) -> None:
    """An agent's device lives exactly as long as its subentry: nothing stale
    is left when the agent is removed."""
    entry = setup_integration
    (subentry_id,) = entry.subentries
    devices = dr.async_get(hass)
    identifier = (DOMAIN, subentry_id)
    assert devices.async_get_device_by_identifier(identifier, entry.entry_id)

    assert hass.config_entries.async_remove_subentry(entry, subentry_id)
    await hass.async_block_till_done()

    assert devices.async_get_device_by_identifier(identifier, entry.entry_id) is None
    assert er.async_get(hass).async_get(AGENT_ID) is None
    assert entry_state(entry) is ConfigEntryState.LOADED
