"""Per-agent tools: two agents on one server offer different tools."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er, issue_registry as ir, llm
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.http_tools_agent.const import CONF_BASE_URL, DOMAIN
from custom_components.http_tools_agent.tools.agent_tools import issue_id
from dev.demo_setup import agent_subentry

from .kit import API_ID, ENTRY_UNIQUE_ID, call_service, converse, llm_context
from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream


@pytest.fixture
def config_entry(
    hass: HomeAssistant, llm_server: FakeLLMServer, entry_options: dict[str, Any]
) -> MockConfigEntry:
    """One server, two agents: "Everything" (all tools), "Webhook only"
    (without warm-ups, as `kit.server_entry` makes them)."""
    everything = agent_subentry(ENTRY_UNIQUE_ID, "local", {"warm_up": "off"})
    webhook_only = agent_subentry(
        ENTRY_UNIQUE_ID,
        "local",
        {"http_tools": ["send_webhook", "gone_tool"], "warm_up": "off"},
    )
    everything["title"] = "Everything"
    webhook_only["title"] = "Webhook only"
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="server",
        unique_id=ENTRY_UNIQUE_ID,
        data={CONF_BASE_URL: llm_server.base_url},
        options=entry_options,
        subentries_data=[everything, webhook_only],
    )
    entry.add_to_hass(hass)
    return entry


def agent_ids(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, str]:
    """Agent title -> entity id."""
    registry = er.async_get(hass)
    return {
        entry.subentries[e.config_subentry_id or ""].title: e.entity_id
        for e in er.async_entries_for_config_entry(registry, entry.entry_id)
    }


async def test_two_agents_offer_their_own_tools(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """Each agent offers the tools it chose; a tool it did not choose is an
    unknown tool to it; another integration's agent gets all of them."""
    ids = agent_ids(hass, setup_integration)
    llm_server.add(text_stream("Hi."), text_stream("Hi."))
    await converse(hass, "Hello", agent_id=ids["Everything"])
    await converse(hass, "Hello", agent_id=ids["Webhook only"])
    offered = [[t["function"]["name"] for t in r["tools"]] for r in llm_server.requests]
    assert offered == [
        ["get_weather", "send_webhook", "GetDateTime"],
        ["send_webhook", "GetDateTime"],
    ]

    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})), text_stream("Sorry.")
    )
    await converse(hass, "Weather in Rome?", agent_id=ids["Webhook only"])
    result = next(
        m["content"] for m in llm_server.requests[-1]["messages"] if m["role"] == "tool"
    )
    assert "get_weather" in result
    assert tool_endpoint.requests == []

    # Outside our agents' turns the API offers every enabled tool.
    instance = await llm.async_get_api(hass, API_ID, llm_context())
    assert [t.name for t in instance.tools] == [
        "get_weather",
        "send_webhook",
        "GetDateTime",
    ]


async def test_a_missing_choice_is_reported(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    issue_registry: ir.IssueRegistry,
    hass_client: ClientSessionGenerator,
) -> None:
    """A chosen name the server lacks: a repair issue naming the agent and the
    name, and diagnostics; the other chosen tools still work."""
    webhook_only = next(
        s for s in setup_integration.subentries.values() if s.title == "Webhook only"
    )
    issue = issue_registry.async_get_issue(
        DOMAIN, issue_id(setup_integration.entry_id, webhook_only.subentry_id)
    )
    assert issue is not None
    assert issue.translation_key == "agent_tools_missing"
    assert issue.translation_placeholders is not None
    assert issue.translation_placeholders["agent"] == "Webhook only"
    assert issue.translation_placeholders["tools"] == "gone_tool"
    assert len([i for (d, i) in issue_registry.issues if d == DOMAIN]) == 1

    assert await async_setup_component(hass, "diagnostics", {})
    diagnostics = await get_diagnostics_for_config_entry(
        hass, hass_client, setup_integration
    )
    by_title = {a["title"]: a["tools"] for a in diagnostics["agents"]}
    assert by_title["Everything"] == {
        "chosen": "all",
        "missing_from_configured": [],
        "missing_from_active": [],
    }
    assert by_title["Webhook only"]["missing_from_configured"] == ["gone_tool"]

    # Removing the server removes the issue with it.
    await hass.config_entries.async_remove(setup_integration.entry_id)
    assert not [i for (d, i) in issue_registry.issues if d == DOMAIN]


async def test_override_tools_follow_the_choice(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """A runtime replacement is filtered by name too; get_tools says `enabled`."""
    ids = agent_ids(hass, setup_integration)
    tool = {"name": "send_webhook", "url": f"{tool_endpoint.url}/other"}
    other = {"name": "ring", "url": f"{tool_endpoint.url}/ring"}
    response = await call_service(hass, "set_tools", {"tools": [tool, other]})
    assert response["enabled"] is True
    llm_server.add(text_stream("Hi."))
    await converse(hass, "Hello", agent_id=ids["Webhook only"])
    assert [t["function"]["name"] for t in llm_server.requests[0]["tools"]] == [
        "send_webhook",
        "GetDateTime",
    ]
