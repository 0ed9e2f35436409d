"""The prompt's beginning stays byte-identical from request to request, so a
llama.cpp server's prompt cache re-reads only what is new; the time still
reaches the model."""

from __future__ import annotations

import itertools
import json
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from homeassistant.const import CONF_LLM_HASS_API, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
import pytest

from custom_components.http_tools_agent.turn.prompt import split_prompt_template

from .kit import API_ID, converse, speech
from .servers import FakeLLMServer, text_stream, tool_calls_stream


@pytest.fixture(autouse=True)
async def rome_time(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    """Home Assistant in Rome, on the evening these tests describe."""
    await hass.config.async_set_time_zone("Europe/Rome")
    freezer.move_to("2026-11-30 20:05:07+00:00")


def stable_part(body: dict[str, Any]) -> str:
    """The system message and the tools, exactly as serialised."""
    return json.dumps([body["messages"][0], body.get("tools")], ensure_ascii=False)


@pytest.mark.usefixtures("setup_integration")
async def test_two_turns_minutes_apart(
    hass: HomeAssistant, llm_server: FakeLLMServer, freezer: FrozenDateTimeFactory
) -> None:
    """No clock in the prompt: the system message and the tools of two turns
    minutes apart are the same bytes. The time reaches the model when it
    asks the date-and-time tool, to the minute."""
    llm_server.add(
        text_stream("Hello!"),
        tool_calls_stream(("GetDateTime", {})),
        text_stream("It is 21:09."),
    )
    first = await converse(hass, "Hi there")
    freezer.tick(4 * 60 + 30)
    assert speech(first) == "Hello!"
    second = await converse(
        hass, "What time is it?", conversation_id=first.conversation_id
    )
    assert speech(second) == "It is 21:09."

    one, two, three = llm_server.requests
    assert stable_part(one) == stable_part(two) == stable_part(three)
    assert "Current time" not in json.dumps(one)
    # Exactly what was said, and the second request starts with the first.
    assert one["messages"][-1] == {"role": "user", "content": "Hi there"}
    assert two["messages"][: len(one["messages"])] == one["messages"]
    assert two["messages"][len(one["messages"]) :] == [
        {"role": "assistant", "content": "Hello!"},
        {"role": "user", "content": "What time is it?"},
    ]
    clock = json.loads(three["messages"][-1]["content"])
    assert clock == {
        "date": "2026-11-30",
        "time": "21:09",
        "weekday": "Monday",
        "timezone": "CET",
    }


@pytest.mark.usefixtures("setup_integration")
async def test_each_round_extends_the_request_before(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """A turn with two tool rounds: every request starts with the previous
    request's messages, unchanged, and offers the same tools."""
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        tool_calls_stream(("get_weather", {"city": "Oslo"})),
        text_stream("Rome is sunny, Oslo too."),
    )

    result = await converse(hass, "Weather in Rome, then Oslo?")

    assert speech(result) == "Rome is sunny, Oslo too."
    requests = llm_server.requests
    assert len(requests) == 3
    for before, after in itertools.pairwise(requests):
        assert after["messages"][: len(before["messages"])] == before["messages"]
        assert len(after["messages"]) == len(before["messages"]) + 2
        assert stable_part(after) == stable_part(before)


@pytest.mark.usefixtures("setup_integration")
@pytest.mark.parametrize(
    "agent_options",
    [
        {
            CONF_PROMPT: "You are the butler of {{ ha_name }}.\n"
            "It is {{ now().strftime('%H:%M:%S') }} now.\n"
            "Answer in one sentence."
        }
    ],
)
async def test_prompt_template_lines_with_now_move_to_the_question(
    hass: HomeAssistant, llm_server: FakeLLMServer, freezer: FrozenDateTimeFactory
) -> None:
    """Lines of the agent's prompt that render the time go with each
    question, keeping what the user wrote (seconds included)."""
    llm_server.add(text_stream("Good evening."), text_stream("Indeed."))
    first = await converse(hass, "Good evening")
    freezer.tick(61)
    await converse(hass, "Nice night", conversation_id=first.conversation_id)

    one, two = llm_server.requests
    assert one["messages"][0]["content"].startswith(
        "You are the butler of test home.\nAnswer in one sentence."
    )
    assert stable_part(one) == stable_part(two)
    assert one["messages"][1]["content"] == "It is 21:05:07 now.\n\nGood evening"
    assert two["messages"][1] == one["messages"][1]
    assert two["messages"][-1]["content"] == "It is 21:06:08 now.\n\nNice night"


@pytest.mark.usefixtures("setup_integration")
@pytest.mark.parametrize(
    "agent_options", [{CONF_LLM_HASS_API: [llm.LLM_API_ASSIST, API_ID]}]
)
async def test_with_assist_one_clock_tool(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """Assist brings its own date-and-time tool: the model gets one, and the
    prompt stays the same from turn to turn."""
    llm_server.add(text_stream("Hi!"), text_stream("Bye!"))
    first = await converse(hass, "Hi")
    await converse(hass, "Bye", conversation_id=first.conversation_id)

    one, two = llm_server.requests
    assert stable_part(one) == stable_part(two)
    assert one["messages"][-1] == {"role": "user", "content": "Hi"}
    clocks = [
        t["function"]["name"]
        for t in one["tools"]
        if t["function"]["name"].endswith("GetDateTime")
    ]
    assert clocks == ["assist__llm__GetDateTime"]


def test_only_whole_template_lines_with_now_move() -> None:
    """A block spanning lines stays in the system prompt (that prompt cannot
    be cached); a template made only of time lines stays whole."""
    assert split_prompt_template("A\n{{ now().hour }}\nB") == (
        "A\nB",
        "{{ now().hour }}",
    )
    spanning = "A\n{% if now().hour < 12 %}\nGood morning\n{% endif %}"
    assert split_prompt_template(spanning) == (spanning, "")
    assert split_prompt_template("{{ now() }}") == ("{{ now() }}", "")
    assert split_prompt_template("No time here") == ("No time here", "")
