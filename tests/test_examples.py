"""Examples that show a small model how to use its tools end the system
prompt: generated from the tools or written by the user; they stay the same
from turn to turn, so the server's prompt cache keeps them."""

from __future__ import annotations

import json
from typing import Any

from homeassistant.core import HomeAssistant
import pytest

from custom_components.http_tools_agent.const import (
    CONF_CUSTOM_EXAMPLES,
    CONF_EXAMPLES,
)
from custom_components.http_tools_agent.turn.examples import HEADER, generated_examples

from .chat_templates import FAMILIES, render
from .kit import converse, speech
from .servers import FakeLLMServer, text_stream

CUSTOM = (
    "User: What's the weather in Paris?\n"
    'Call: {"name": "get_weather", "arguments": {"city": "Paris"}}\n'
    "Answer: Paris is sunny, 18°C."
)


async def two_turns(hass: HomeAssistant, llm_server: FakeLLMServer) -> list[str]:
    """Two turns of one conversation; the system prompt of each request."""
    llm_server.add(text_stream("Hello!"), text_stream("Bye!"))
    first = await converse(hass, "Hi")
    second = await converse(hass, "Bye", conversation_id=first.conversation_id)
    assert (speech(first), speech(second)) == ("Hello!", "Bye!")
    return [body["messages"][0]["content"] for body in llm_server.requests]


@pytest.mark.parametrize("agent_options", [{CONF_EXAMPLES: "generated"}])
@pytest.mark.usefixtures("setup_integration")
async def test_generated_examples_end_the_system_prompt(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    one, two = await two_turns(hass, llm_server)

    assert one == two
    examples = one[one.index(HEADER) :]
    assert one.endswith(examples)
    lines = examples.splitlines()
    calls = [json.loads(line) for line in lines if line.startswith("{")]
    assert calls == [
        {"name": "get_weather", "arguments": {"city": "<city>"}},
        {"name": "send_webhook", "arguments": {"message": "<message>"}},
        # The clock comes with the HTTP tools (a tool, not a prompt line).
        {"name": "GetDateTime", "arguments": {}},
    ]
    assert lines[-1].startswith("When no tool fits the request")


@pytest.mark.parametrize(
    "agent_options", [{CONF_EXAMPLES: "custom", CONF_CUSTOM_EXAMPLES: CUSTOM}]
)
@pytest.mark.usefixtures("setup_integration")
async def test_your_own_examples_end_the_system_prompt(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    one, two = await two_turns(hass, llm_server)

    assert one == two
    assert one.endswith(f"\n\n{HEADER}\n{CUSTOM}")


@pytest.mark.parametrize(
    "agent_options", [{CONF_EXAMPLES: "none", CONF_CUSTOM_EXAMPLES: CUSTOM}]
)
@pytest.mark.usefixtures("setup_integration")
async def test_no_examples(hass: HomeAssistant, llm_server: FakeLLMServer) -> None:
    """`none` (the default) adds nothing, even with examples written."""
    one, _ = await two_turns(hass, llm_server)

    assert HEADER not in one


def test_sample_values_come_from_the_schema() -> None:
    """`examples`, `default`, `enum`, an "e.g." in the description."""
    schemas: dict[str, dict[str, Any]] = {
        "set": {
            "type": "object",
            "properties": {
                "unit": {"type": "string", "enum": ["C", "F"]},
                "room": {"type": "string", "description": "Room, e.g. 'kitchen'"},
                "level": {"type": "integer", "default": 3},
                "mode": {"type": "string", "examples": ["eco"]},
                "on": {"type": "boolean"},
            },
            "required": ["unit", "room", "level", "mode", "on"],
        }
    }
    (call,) = [
        json.loads(line)
        for line in generated_examples(schemas).splitlines()
        if line.startswith("{")
    ]
    assert call == {
        "name": "set",
        "arguments": {
            "unit": "C",
            "room": "kitchen",
            "level": 3,
            "mode": "eco",
            "on": True,
        },
    }


@pytest.mark.parametrize("agent_options", [{CONF_EXAMPLES: "generated"}])
@pytest.mark.usefixtures("setup_integration")
async def test_every_chat_template_takes_the_examples(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """The examples are system text: every family's template renders them,
    the same in both turns' prompts, at the same place (Mistral Nemo's
    template moves the system prompt into the newest turn: its own doing)."""
    await two_turns(hass, llm_server)
    first, second = llm_server.requests
    end = "without JSON"

    for family in FAMILIES:
        one, two = render(family, first), render(family, second)
        assert "You're welcome!" in one, family
        if family != "mistral-nemo":
            assert one[: one.index(end)] == two[: two.index(end)], family
