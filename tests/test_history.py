"""What a model is sent of earlier turns: all of them, their words only, the
recent ones, or none (the agent's `history` setting)."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
import pytest

from custom_components.http_tools_agent.const import CONF_HISTORY, CONF_HISTORY_TURNS

from .kit import converse
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
