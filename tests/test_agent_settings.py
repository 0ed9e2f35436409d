"""The agent form's small-model settings (a collapsed section): stored with
the others, shown again when the agent is changed, and an extra request body
that is no object, or that would replace the agent's own fields, refused
with a message naming what is wrong."""

from __future__ import annotations

import json
from typing import Any

from homeassistant import config_entries
from homeassistant.const import CONF_LLM_HASS_API, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType, section
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.agent_options import AgentOptions
from custom_components.http_tools_agent.agent_settings import SETTINGS
from custom_components.http_tools_agent.const import (
    CONF_ADVANCED,
    CONF_CHAIN_CALLS,
    CONF_CONFIRM_INTENTS,
    CONF_CONFIRM_OTHER_TOOLS,
    CONF_CUSTOM_EXAMPLES,
    CONF_EXAMPLES,
    CONF_EXTRA_BODY,
    CONF_HISTORY,
    CONF_HISTORY_TURNS,
    CONF_MAX_CALLS_PER_TURN,
    CONF_MAX_TOKENS,
    CONF_MODEL,
    CONF_PROFILE,
    CONF_STREAM,
    CONF_TEMPERATURE,
    CONF_THINKING,
    CONF_TOOL_CHOICE,
    CONF_TOOL_SEARCH,
    CONF_VISION,
    CONF_WARM_UP,
    SUBENTRY_CONVERSATION,
)
from custom_components.http_tools_agent.small.rules import SMALL_RULES

from .integration_files import COMPONENT
from .kit import API_ID

BASIC = {
    CONF_MODEL: "qwen3:0.6b",
    CONF_PROMPT: "Be brief.",
    CONF_LLM_HASS_API: [API_ID],
    CONF_TEMPERATURE: 0.0,
    CONF_MAX_TOKENS: 256,
    CONF_TOOL_CHOICE: "auto",
    CONF_STREAM: True,
    CONF_PROFILE: "small",
    CONF_CONFIRM_INTENTS: True,
    CONF_VISION: "on",
    CONF_CONFIRM_OTHER_TOOLS: "changes",
}
ADVANCED = {
    CONF_THINKING: "off",
    CONF_MAX_CALLS_PER_TURN: 3,
    CONF_CHAIN_CALLS: "on",
    CONF_HISTORY: "recent",
    CONF_HISTORY_TURNS: 2,
    CONF_EXAMPLES: "custom",
    CONF_CUSTOM_EXAMPLES: "User: Hi\nAnswer: Hello!",
    CONF_EXTRA_BODY: {"top_k": 20, "cache_prompt": True},
    CONF_WARM_UP: "off",
    CONF_TOOL_SEARCH: "search",
}


async def open_form(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, Any]:
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, SUBENTRY_CONVERSATION),
        context={"source": config_entries.SOURCE_USER},
    )
    assert result["type"] is FlowResultType.FORM
    return dict(result)


async def test_small_model_settings_are_stored_and_shown_again(
    hass: HomeAssistant, setup_integration: MockConfigEntry
) -> None:
    entry = setup_integration
    form = await open_form(hass, entry)
    schema = form["data_schema"].schema
    advanced = next(v for k, v in schema.items() if k == CONF_ADVANCED)
    assert isinstance(advanced, section)
    assert advanced.options["collapsed"] is True

    result = await hass.config_entries.subentries.async_configure(
        form["flow_id"], {**BASIC, CONF_ADVANCED: ADVANCED}
    )
    await hass.async_block_till_done()

    assert result["type"] is FlowResultType.CREATE_ENTRY
    new = next(
        s for s in entry.subentries.values() if s.data[CONF_MODEL] == "qwen3:0.6b"
    )
    assert new.data == {**BASIC, "http_tools": [], **ADVANCED}

    result = await entry.start_subentry_reconfigure_flow(hass, new.subentry_id)
    shown = {
        str(key): key.description["suggested_value"]
        for key in next(
            v for k, v in result["data_schema"].schema.items() if k == CONF_ADVANCED
        ).schema.schema
        if key.description
    }
    assert shown == ADVANCED


@pytest.mark.parametrize(
    ("extra_body", "error", "placeholders"),
    [
        ([1, 2], "extra_body_not_object", {}),
        ("top_k: 20", "extra_body_not_object", {}),
        (
            {"messages": [], "stream": False, "top_k": 1},
            "extra_body_reserved",
            {"fields": "messages, stream"},
        ),
        ({"tools": []}, "extra_body_reserved", {"fields": "tools"}),
        ({"x": float("nan")}, "extra_body_not_json", None),
    ],
    ids=["list", "text", "messages-stream", "tools", "nan"],
)
async def test_an_extra_body_that_cannot_be_used_is_refused(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    extra_body: Any,
    error: str,
    placeholders: dict[str, str] | None,
) -> None:
    form = await open_form(hass, setup_integration)

    result = await hass.config_entries.subentries.async_configure(
        form["flow_id"],
        {**BASIC, CONF_ADVANCED: {**ADVANCED, CONF_EXTRA_BODY: extra_body}},
    )

    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": error}
    if placeholders is not None:
        assert (
            placeholders.items() <= (result["description_placeholders"] or {}).items()
        )
    assert len(setup_integration.subentries) == 1


def test_the_form_help_says_what_each_profile_gets() -> None:
    """The agent form's help is what the agent does: *Earlier turns sent* as
    the profile says is none for a small model (it said "all of them"), and
    the *Model profile* help names no rule the small profile no longer has
    (the tool-list recital went in round 3)."""
    strings = json.loads((COMPONENT / "strings.json").read_text(encoding="utf-8"))
    step = strings["config_subentries"]["conversation"]["step"]["user"]
    history = step["sections"]["advanced"]["data_description"]["history"]
    assert SMALL_RULES.history == "none"
    assert "none for a small one" in history
    assert "recit" not in step["data_description"]["profile"]


def test_a_stored_value_no_longer_valid_reads_as_its_default() -> None:
    """An agent stored by another version (a choice that is gone, a number
    out of range, a value of the wrong type) runs with the table's default
    for that setting, and keeps the rest."""
    options = AgentOptions.from_subentry(
        {
            CONF_MODEL: "qwen",
            CONF_PROFILE: "tiny",
            CONF_MAX_CALLS_PER_TURN: 0,
            CONF_HISTORY_TURNS: "many",
            CONF_TEMPERATURE: 0.2,
            CONF_THINKING: "off",
        }
    )

    assert options.profile == SETTINGS[CONF_PROFILE].default == "auto"
    assert options.max_calls_per_turn == 1  # the form's minimum
    assert options.history_turns == SETTINGS[CONF_HISTORY_TURNS].default
    assert (options.model, options.temperature, options.thinking) == (
        "qwen",
        0.2,
        "off",
    )
