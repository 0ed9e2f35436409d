"""Re-authentication: a server that refuses the key, at setup or during a
turn, gets a new key through Home Assistant's reauth flow; the entry reloads
with it and the agent answers again."""

from __future__ import annotations

import logging
from typing import Any

from homeassistant.config_entries import SOURCE_REAUTH, ConfigEntryState
from homeassistant.const import CONF_API_KEY
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import CONF_BASE_URL, DOMAIN

from .kit import converse, entry_state, load_integration, question, speech
from .said import entry_reason, said
from .servers import FakeLLMServer, text_stream

REFUSED = said("invalid_auth")


def reauth_flows(hass: HomeAssistant) -> list[Any]:
    """The reauth flows in progress for this integration."""
    return [
        flow
        for flow in hass.config_entries.flow.async_progress_by_handler(DOMAIN)
        if flow["context"]["source"] == SOURCE_REAUTH
    ]


async def enter_key(hass: HomeAssistant, flow_id: str, key: str) -> Any:
    """Submit the reauth form."""
    result = await hass.config_entries.flow.async_configure(
        flow_id, {CONF_API_KEY: key}
    )
    await hass.async_block_till_done()
    return result


async def test_key_refused_at_setup_asks_for_a_new_one(
    hass: HomeAssistant, config_entry: MockConfigEntry, llm_server: FakeLLMServer
) -> None:
    """401 while setting up: the entry fails with the reason and a reauth flow
    asks for the key; a wrong key is refused in the form, the right one is
    stored and the entry loads and answers."""
    llm_server.api_key = "sk-right"

    await load_integration(hass)

    assert config_entry.state is ConfigEntryState.SETUP_ERROR
    assert config_entry.reason == entry_reason(
        "setup_invalid_auth", url=llm_server.base_url
    )
    (flow,) = reauth_flows(hass)
    assert flow["step_id"] == "reauth_confirm"
    assert flow["context"]["entry_id"] == config_entry.entry_id

    result = await enter_key(hass, flow["flow_id"], "sk-wrong")
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "invalid_auth"}
    assert CONF_API_KEY not in config_entry.data

    result = await enter_key(hass, flow["flow_id"], " sk-right ")
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert config_entry.data == {
        CONF_BASE_URL: llm_server.base_url,
        CONF_API_KEY: "sk-right",
    }
    assert entry_state(config_entry) is ConfigEntryState.LOADED
    llm_server.add(text_stream("Hello with a key."))
    assert speech(await converse(hass, "Hello")) == "Hello with a key."
    assert question(llm_server.requests[-1]["messages"][-1]) == "Hello"


async def test_reauth_form_says_when_the_server_is_gone(
    hass: HomeAssistant, config_entry: MockConfigEntry, llm_server: FakeLLMServer
) -> None:
    """The new key cannot be checked while the server is down: the form says
    so and keeps the flow open."""
    llm_server.api_key = "sk-right"
    await load_integration(hass)
    (flow,) = reauth_flows(hass)
    await llm_server.stop()

    result = await enter_key(hass, flow["flow_id"], "sk-right")

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "cannot_connect"}
    assert result["description_placeholders"]["url"] == llm_server.base_url


async def test_key_refused_during_turns_starts_one_reauth(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    llm_server: FakeLLMServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The server starts asking for a key while the agent is in use: every
    turn says the key was refused, re-authentication starts once (one flow,
    one warning), and the new key reloads the entry: the agent answers."""
    caplog.set_level(logging.INFO, logger="custom_components.http_tools_agent")
    entry = setup_integration
    llm_server.api_key = "sk-new"

    for _ in range(3):
        result = await converse(hass, "Hello")
        assert speech(result) == REFUSED
        await hass.async_block_till_done()

    (flow,) = reauth_flows(hass)
    assert flow["context"]["entry_id"] == entry.entry_id
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("custom_components.http_tools_agent")
        and r.levelno >= logging.WARNING
    ]
    assert warnings == [
        f"The language model server of {entry.title} refused the API key; "
        "asking for a new one (re-authentication)"
    ]
    # A refused key is no outage: the agent stays available.
    state = hass.states.get("conversation.http_tools_agent")
    assert state is not None
    assert state.state != "unavailable"

    result = await enter_key(hass, flow["flow_id"], "sk-new")

    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert entry.data[CONF_API_KEY] == "sk-new"
    assert entry.state is ConfigEntryState.LOADED
    llm_server.add(text_stream("Welcome back."))
    assert speech(await converse(hass, "Hello")) == "Welcome back."
    assert reauth_flows(hass) == []
