"""What a model is sent of earlier turns: all of them, their words only, the
recent ones, or none (the agent's `history` setting)."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import (
    CONF_BASE_URL,
    CONF_HISTORY,
    CONF_HISTORY_TURNS,
    CONF_MODEL,
    CONF_WARM_UP,
    DOMAIN,
    HISTORY_PROFILE,
)
from dev.demo_setup import agent_subentry, ai_task_subentry

from .kit import ENTRY_UNIQUE_ID, converse, load_integration, speech
from .servers import FakeLLMServer, text_stream, tool_calls_stream


def roles(body: dict[str, Any]) -> list[str]:
    """Each message as `role` or `role:text` for the user's."""
    return [
        f"user:{m['content']}" if m["role"] == "user" else m["role"]
        for m in body["messages"]
    ]


async def three_turns(hass: HomeAssistant, llm_server: FakeLLMServer) -> None:
    """Weather (a call and its result), small talk, then a question."""
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        text_stream("Rome is sunny."),
        text_stream("Hello!"),
        text_stream("Bye!"),
    )
    first = await converse(hass, "Weather in Rome?")
    later = first.conversation_id
    await converse(hass, "Hi", conversation_id=later)
    await converse(hass, "Bye", conversation_id=later)


@pytest.mark.parametrize(
    ("agent_options", "sent"),
    [
        (
            {CONF_HISTORY: "all", CONF_WARM_UP: "off"},
            [
                "system",
                "user:Weather in Rome?",
                "assistant",
                "tool",
                "assistant",
                "user:Hi",
                "assistant",
                "user:Bye",
            ],
        ),
        (
            {CONF_HISTORY: "text"},
            [
                "system",
                "user:Weather in Rome?",
                "assistant",
                "user:Hi",
                "assistant",
                "user:Bye",
            ],
        ),
        (
            {CONF_HISTORY: "recent", CONF_HISTORY_TURNS: 1},
            ["system", "user:Hi", "assistant", "user:Bye"],
        ),
        ({CONF_HISTORY: "none"}, ["system", "user:Bye"]),
        # A capable model (the default here) gets every turn.
        (
            {},
            [
                "system",
                "user:Weather in Rome?",
                "assistant",
                "tool",
                "assistant",
                "user:Hi",
                "assistant",
                "user:Bye",
            ],
        ),
    ],
    ids=["all", "text", "recent-1", "none", "profile"],
)
@pytest.mark.usefixtures("setup_integration")
async def test_earlier_turns_in_the_shape_chosen(
    hass: HomeAssistant, llm_server: FakeLLMServer, sent: list[str]
) -> None:
    await three_turns(hass, llm_server)

    assert roles(llm_server.requests[-1]) == sent
    if "tool" not in sent and len(sent) > 2:
        # The answer in words stands for the turn.
        assert llm_server.requests[-1]["messages"][2]["content"] in (
            "Rome is sunny.",
            "Hello!",
        )


async def test_an_agent_stored_with_the_brief_history_follows_its_profile(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """1.3 -> 1.4: `brief` (measured worse than the profile's own history)
    is gone; an agent stored with it follows its profile, the others keep
    their choice, and the agent answers."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="old",
        unique_id=ENTRY_UNIQUE_ID,
        data={CONF_BASE_URL: llm_server.base_url},
        version=1,
        minor_version=3,
        subentries_data=[
            agent_subentry(
                ENTRY_UNIQUE_ID, "briefly", {CONF_HISTORY: "brief", CONF_WARM_UP: "off"}
            ),
            agent_subentry(
                ENTRY_UNIQUE_ID, "wholly", {CONF_HISTORY: "all", CONF_WARM_UP: "off"}
            ),
            ai_task_subentry(ENTRY_UNIQUE_ID, "task"),
        ],
    )
    entry.add_to_hass(hass)

    await load_integration(hass)

    assert (entry.version, entry.minor_version) == (1, 4)
    history = {
        s.data[CONF_MODEL]: s.data[CONF_HISTORY]
        for s in entry.get_subentries_of_type("conversation")
    }
    assert history == {"briefly": HISTORY_PROFILE, "wholly": "all"}
    llm_server.add(text_stream("Hello!"))
    assert speech(await converse(hass, "Hi")) == "Hello!"
