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

from custom_components.http_tools_agent.stable_prompt import split_prompt_template

from .kit import API_ID, converse, question, speech
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
    """Home Assistant's clock line leaves the system prompt; each question
    carries the minute it was asked, and is re-sent with it later."""
    llm_server.add(text_stream("Hello!"), text_stream("Sunny."))
    first = await converse(hass, "Hi there")
    freezer.tick(4 * 60 + 30)
    assert speech(first) == "Hello!"
    second = await converse(hass, "Is it sunny?", conversation_id=first.conversation_id)
    assert speech(second) == "Sunny."

    one, two = llm_server.requests
    assert stable_part(one) == stable_part(two)
    assert "Current time" not in one["messages"][0]["content"]
    assert one["messages"][-1]["content"] == (
        "Current time is 21:05. Today's date is 2026-11-30.\n\nHi there"
    )
    # The second request starts with the first, then the answer and the news.
    assert two["messages"][: len(one["messages"])] == one["messages"]
    assert two["messages"][len(one["messages"]) :] == [
        {"role": "assistant", "content": "Hello!"},
        {
            "role": "user",
            "content": "Current time is 21:09. Today's date is 2026-11-30.\n\n"
            "Is it sunny?",
        },
    ]


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
    assert one["messages"][1]["content"] == (
        "Current time is 21:05. Today's date is 2026-11-30.\n"
        "It is 21:05:07 now.\n\nGood evening"
    )
    assert two["messages"][1] == one["messages"][1]
    assert two["messages"][-1]["content"] == (
        "Current time is 21:06. Today's date is 2026-11-30.\n"
        "It is 21:06:08 now.\n\nNice night"
    )


@pytest.mark.usefixtures("setup_integration")
@pytest.mark.parametrize(
    "agent_options", [{CONF_LLM_HASS_API: [llm.LLM_API_ASSIST, API_ID]}]
)
async def test_with_assist_the_model_asks_for_the_time(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """With Assist, Home Assistant offers a date-and-time tool instead of a
    clock line: no time is added to the question, the prompt stays stable."""
    llm_server.add(text_stream("Hi!"), text_stream("Bye!"))
    first = await converse(hass, "Hi")
    await converse(hass, "Bye", conversation_id=first.conversation_id)

    one, two = llm_server.requests
    assert stable_part(one) == stable_part(two)
    assert one["messages"][-1] == {"role": "user", "content": "Hi"}
    assert any(t["function"]["name"].endswith("GetDateTime") for t in one["tools"])


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


@pytest.mark.usefixtures("setup_integration")
async def test_question_helper_reads_the_note(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """The test kit's `question` finds the user's own words after the note."""
    llm_server.add(text_stream("Yes."))
    await converse(hass, "Are you there?")
    assert question(llm_server.requests[0]["messages"][-1]) == "Are you there?"
