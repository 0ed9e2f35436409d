"""Shared fixtures: the scripted servers on loopback and an entry with one
agent (built with `tests/kit.py`).

The integration package is imported first so Home Assistant's loader resolves
`custom_components` to this repository rather than the plugin's testing config.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Generator
from pathlib import Path
from typing import Any

from homeassistant.components.conversation.chat_log import async_subscribe_chat_logs
from homeassistant.components.conversation.const import ChatLogEventType
from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

import custom_components.http_tools_agent  # noqa: F401
from custom_components.http_tools_agent.const import CONF_TOOLS
from dev.tool_server import DemoToolServer

from .kit import load_integration, server_entry, weather_tool
from .servers import FakeLLMServer, ToolEndpoint


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(enable_custom_integrations: None) -> None:
    """Let Home Assistant load this custom integration in every test."""


@pytest.fixture(autouse=True)
async def close_orphaned_stream_generators() -> AsyncGenerator[None]:
    """Let the openai SDK's abandoned SSE generators finish closing.

    The SDK stops reading a stream at `[DONE]` and leaves its nested
    generators (nine, down to the HTTP connection) to the garbage collector,
    which closes them one task after the other. Harmless in production, but
    the test harness would report those tasks as lingering. Core integrations
    on the SDK (`llama_cpp`, `open_router`) leave them the same way.
    """
    yield
    for _ in range(32):
        await asyncio.sleep(0)
        if not any(
            type(task.get_coro()).__name__ == "async_generator_athrow"
            for task in asyncio.all_tasks()
        ):
            return


@pytest.fixture
async def llm_server(socket_enabled: None) -> AsyncGenerator[FakeLLMServer]:
    """A scripted OpenAI-compatible server on 127.0.0.1."""
    async with FakeLLMServer() as server:
        yield server


@pytest.fixture
async def tool_endpoint(socket_enabled: None) -> AsyncGenerator[ToolEndpoint]:
    """The HTTP service the tools call, on 127.0.0.1."""
    async with ToolEndpoint() as endpoint:
        yield endpoint


@pytest.fixture
async def items(socket_enabled: None) -> AsyncGenerator[DemoToolServer]:
    """The list server: the services the demo's tools call (weather, the
    shopping list, the webhook), on 127.0.0.1."""
    async with DemoToolServer() as server:
        yield server


@pytest.fixture
def tools(tool_endpoint: ToolEndpoint) -> list[dict[str, Any]]:
    """A weather and a webhook tool, pointed at the local endpoint."""
    return [
        weather_tool(tool_endpoint.url),
        {
            "name": "send_webhook",
            "description": "POST a JSON payload to the webhook endpoint.",
            "parameters": {
                "type": "object",
                "properties": {"message": {"type": "string"}},
                "required": ["message"],
            },
            "url": f"{tool_endpoint.url}/hook",
            "method": "POST",
            "headers": {"X-Tool": "http-tools-agent"},
        },
    ]


@pytest.fixture
def agent_options() -> dict[str, Any]:
    """Overrides of the agent (subentry) settings for a test."""
    return {}


@pytest.fixture
def extra_options() -> dict[str, Any]:
    """Entry options a test adds to (or replaces in) the default ones."""
    return {}


@pytest.fixture
def entry_options(
    tools: list[dict[str, Any]], extra_options: dict[str, Any]
) -> dict[str, Any]:
    """Entry options for a test: the tools and their settings."""
    return {CONF_TOOLS: tools, **extra_options}


@pytest.fixture
def config_entry(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    entry_options: dict[str, Any],
    agent_options: dict[str, Any],
) -> MockConfigEntry:
    """A server entry with one agent that uses the entry's HTTP tools.

    The model's size is unknown (`local`), so the agent runs the plain
    loop (the `capable` profile); the small-model rules have their own tests
    (`agent_options` with `profile: small`).
    """
    entry = server_entry(
        llm_server.base_url, options=entry_options, agent=agent_options
    )
    entry.add_to_hass(hass)
    return entry


@pytest.fixture
async def second_entry(
    hass: HomeAssistant, setup_integration: MockConfigEntry, llm_server: FakeLLMServer
) -> MockConfigEntry:
    """A second loaded server entry (same server, its URL spelled with a slash)."""
    entry = server_entry(
        llm_server.base_url + "/", unique_id="second", title="second", with_agent=False
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    return entry


@pytest.fixture
def config_dir(hass: HomeAssistant, tmp_path: Path) -> Path:
    """A configuration directory of the test's own (for tools files)."""
    hass.config.config_dir = str(tmp_path)
    return tmp_path


@pytest.fixture
def chat_contents(hass: HomeAssistant) -> Generator[list[dict[str, Any]]]:
    """Every piece of content added to any chat log (what the chat shows)."""
    contents: list[dict[str, Any]] = []

    def _added(_: str, event_type: ChatLogEventType, data: dict[str, Any]) -> None:
        if event_type is ChatLogEventType.CONTENT_ADDED:
            contents.append(data["content"])

    unsubscribe = async_subscribe_chat_logs(hass, _added)
    yield contents
    unsubscribe()


@pytest.fixture
async def setup_integration(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> MockConfigEntry:
    """Set up Home Assistant with the integration loaded."""
    await load_integration(hass)
    return config_entry
