"""Each model family's reply through the agent, streamed in small pieces, in
both profiles: its call runs once, and none of its markup or thinking is
heard (`tests/fixtures/families/families.json`)."""

from __future__ import annotations

from typing import Any

from homeassistant.const import CONF_MODEL
from homeassistant.core import HomeAssistant
import pytest

from custom_components.http_tools_agent.const import CONF_PROFILE

from .families import ANSWERS, CALLS, LEAKS, pieces
from .kit import converse, speech
from .servers import FakeLLMServer, ToolEndpoint, text_stream

PROFILES = ("capable", "small")


def _options(cases: list[dict[str, Any]]) -> list[Any]:
    return [
        pytest.param(
            {CONF_MODEL: case["model"], CONF_PROFILE: profile},
            case,
            id=f"{case['id']}-{profile}",
        )
        for case in cases
        for profile in PROFILES
    ]


@pytest.mark.parametrize(("agent_options", "case"), _options(CALLS))
@pytest.mark.usefixtures("setup_integration")
async def test_a_family_call_runs_once(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    agent_options: dict[str, Any],
    case: dict[str, Any],
) -> None:
    llm_server.add(
        text_stream(*pieces(case["reply"])),
        text_stream("In Rome it is sunny", " and 14 degrees."),
    )

    said = speech(await converse(hass, "What's the weather in Rome?"))

    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    assert "14" in said
    for leak in LEAKS:
        assert leak not in said, (leak, said)


@pytest.mark.parametrize(("agent_options", "case"), _options(ANSWERS))
@pytest.mark.usefixtures("setup_integration")
async def test_a_family_answer_is_heard_without_its_thinking(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    agent_options: dict[str, Any],
    case: dict[str, Any],
) -> None:
    llm_server.add(text_stream(*pieces(case["reply"])))

    said = speech(await converse(hass, "Hello!"))

    assert said == case["spoken"]
    assert tool_endpoint.requests == []


@pytest.mark.parametrize("agent_options", [{CONF_MODEL: "some-new-model"}])
@pytest.mark.usefixtures("setup_integration")
async def test_a_model_that_closes_thinking_it_never_opened_is_learned(
    hass: HomeAssistant, llm_server: FakeLLMServer, agent_options: dict[str, Any]
) -> None:
    """The first such reply speaks the reasoning (it was released before the
    `</think>`); from then on the agent holds the model's first words."""
    reasoning = "The user greets me. I should greet them back briefly."
    reply = f"{reasoning}\n</think>\n\nHello! How can I help?"
    llm_server.add(text_stream(*pieces(reply)), text_stream(*pieces(reply)))

    first = speech(await converse(hass, "Hello!"))
    second = speech(await converse(hass, "Hello again!"))

    assert reasoning in first
    assert second == "Hello! How can I help?"
