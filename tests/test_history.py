"""What a model is sent of earlier turns: all of them, their words only, the
recent ones, or none (the agent's `history` setting)."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
import pytest

from custom_components.http_tools_agent.const import (
    CONF_HISTORY,
    CONF_HISTORY_TURNS,
    CONF_TOOLS,
)
from dev.tool_server import DEMO_TOOLS, DemoToolServer

from .kit import converse, load_integration, server_entry
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
            {CONF_HISTORY: "all"},
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


async def test_brief_gives_a_follow_up_what_the_last_turn_named(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """ "Make it 3." after "Add bread to the list.": with `brief` the model
    is sent no earlier turn, but a line with that request and the bread's id,
    so it can change the item it just added."""
    entry = server_entry(
        llm_server.base_url,
        options={CONF_TOOLS: items.tools(list(DEMO_TOOLS))},
        agent={CONF_HISTORY: "brief"},
    )
    entry.add_to_hass(hass)
    await load_integration(hass)
    llm_server.add(
        tool_calls_stream(("add_item", {"name": "bread", "qty": 1})),
        text_stream("Added bread."),
        tool_calls_stream(("update_item", {"id": "4", "qty": 3})),
        text_stream("Bread is now 3."),
    )
    first = await converse(hass, "Add bread to the list.")
    await converse(hass, "Make it 3.", conversation_id=first.conversation_id)

    follow_up = llm_server.requests[2]["messages"]
    assert [m["role"] for m in follow_up] == ["system", "user"]
    assert follow_up[1]["content"] == (
        "Make it 3.\n"
        '(The request before this one: "Add bread to the list."; '
        "its results: bread (id 4).)"
    )
    assert items.items["4"]["qty"] == 3
