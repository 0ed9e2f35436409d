"""Once a round's calls have their results, the agent asks for the answer
(the default): a small model offered more calls after a result calls other
tools (Qwen2.5-0.5B listed the shopping list, then searched it for "milk",
then fell silent), asked for the answer it gives one. Asked so, it may still
call a tool it used for something else the user named ("Rome and Paris?"
drew a call for Rome only; asked for the answer, one for Paris): only such
calls run, and then the closing request asks for the answer. A call that
failed still gets another round to retry; `chain_calls` lets a model that
plans call on."""

from __future__ import annotations

import json
from typing import Any

from homeassistant.core import HomeAssistant
import pytest

from custom_components.http_tools_agent.const import (
    CONF_CHAIN_CALLS,
    CONF_MAX_TOOL_ITERATIONS,
    CONF_PROFILE,
)
from custom_components.http_tools_agent.small.answer import ANSWER_NUDGE, MoreOf

from .kit import call_service, converse, speech
from .said import said
from .servers import (
    FakeLLMServer,
    ToolEndpoint,
    completion,
    text_stream,
    tool_calls_stream,
)


@pytest.fixture
def tools(
    tools: list[dict[str, Any]], tool_endpoint: ToolEndpoint
) -> list[dict[str, Any]]:
    """The weather and the webhook, and a geocoder that finds every place
    of a name."""
    return [
        *tools,
        {
            "name": "find_place",
            "description": "Find places by name, with their coordinates.",
            "parameters": {
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
            },
            "url": f"{tool_endpoint.url}/places/{{name}}",
            "method": "GET",
        },
    ]


def asked(body: dict[str, Any]) -> str:
    """What a request asked for: "answer" (or calls for the rest), "closing"
    (the answer only: no call may run) or "round" (the model's choice)."""
    last = str(body["messages"][-1].get("content"))
    if last.endswith(ANSWER_NUDGE):
        return "answer"
    return "closing" if body.get("tool_choice") == "none" else "round"


def shapes(llm_server: FakeLLMServer) -> list[tuple[str | None, str]]:
    """Each request's tool_choice, and what it asked for."""
    return [(body.get("tool_choice"), asked(body)) for body in llm_server.requests]


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.usefixtures("setup_integration")
async def test_the_request_after_results_asks_for_the_answer(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """A request that names two cities, one called: the request for the
    answer may still call for the other, and the model's answer is said."""
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        text_stream("Rome is sunny, 14 degrees; Paris I could not check."),
    )

    result = await converse(hass, "What's the weather in Rome and Paris?")

    assert speech(result) == "Rome is sunny, 14 degrees; Paris I could not check."
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    assert shapes(llm_server) == [("auto", "round"), ("auto", "answer")]


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.usefixtures("setup_integration")
async def test_a_read_said_whole_is_read_out_without_asking(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """One thing asked, one read, a result the agent can say whole: the
    request for the answer could change nothing, so none is sent."""
    llm_server.add(tool_calls_stream(("get_weather", {"city": "Rome"})))

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == said("tool_result_only", result="Rome: +14°C.")
    assert shapes(llm_server) == [("auto", "round")]


@pytest.mark.parametrize(
    "agent_options", [{CONF_PROFILE: "small"}, {CONF_PROFILE: "capable"}]
)
@pytest.mark.usefixtures("setup_integration")
async def test_a_result_the_read_out_cannot_say_whole_is_answered_by_the_model(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    agent_options: dict[str, Any],
) -> None:
    """Places with their coordinates: a read-out says their names only, so
    the model is asked and its answer said (in every profile); a capable
    model answers every read itself."""
    llm_server.add(
        tool_calls_stream(("find_place", {"name": "Springfield"})),
        text_stream("There are two: Illinois at 39.8, -89.6, and Missouri."),
    )

    result = await converse(hass, "Where is Springfield?")

    assert speech(result) == "There are two: Illinois at 39.8, -89.6, and Missouri."
    expected = "answer" if agent_options[CONF_PROFILE] == "small" else "round"
    assert shapes(llm_server) == [("auto", "round"), ("auto", expected)]


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.usefixtures("setup_integration")
async def test_a_failed_call_gets_a_round_to_retry(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """An unknown tool (or arguments the schema refuses) is answered with an
    error; the model may call again, and that result is read out."""
    llm_server.add(
        tool_calls_stream(("weather", {"city": "Rome"})),
        tool_calls_stream(("get_weather", {"city": "Rome"})),
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == said("tool_result_only", result="Rome: +14°C.")
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    assert shapes(llm_server) == [("auto", "round"), ("auto", "round")]
    assert llm_server.requests[1]["messages"][-1]["content"] == (
        "Error: unknown tool 'weather'"
    )


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.usefixtures("setup_integration")
async def test_calls_on_the_answer_request_do_not_run(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """A model that calls another tool instead of answering: that call does
    not run, the closing request asks for the answer once more, and when the
    model stays silent the user hears the result the turn has."""
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        tool_calls_stream(("send_webhook", {"message": "Rome is sunny"})),
        text_stream(""),
        completion(""),
    )

    result = await converse(hass, "What's the weather in Rome and Paris?")

    assert speech(result) == "Rome: +14°C."  # the emoji is not spoken
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    assert shapes(llm_server) == [
        ("auto", "round"),
        ("auto", "answer"),
        ("none", "closing"),
        ("none", "closing"),  # empty when streamed: asked once without
    ]


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.usefixtures("setup_integration")
async def test_the_same_tool_for_the_rest_of_the_question_runs(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """ "Rome and Paris?": the model calls for Rome; asked for the answer, it
    calls for Paris and then recites the other tools (as Qwen2.5-0.5B does).
    Paris runs, the recital does not, and both results are read out: a
    closing request could only put them into words."""
    calls = "\n".join(
        json.dumps({"name": name, "arguments": arguments})
        for name, arguments in (
            ("get_weather", {"city": "Paris"}),
            ("send_webhook", {"message": "weather"}),
        )
    )
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        text_stream(calls),
    )

    result = await converse(hass, "What's the weather in Rome and Paris?")

    assert speech(result) == said(
        "tool_result_only", result="Rome: +14°C; Paris: +14°C."
    )
    assert [r.path for r in tool_endpoint.requests] == [
        "/weather/Rome",
        "/weather/Paris",
    ]
    # The request for the answer says the question again, after the result.
    assert llm_server.requests[1]["messages"][-1]["content"] == (
        "Rome: ☀️ +14°C\n\n"
        'The user asked: "What\'s the weather in Rome and Paris?". ' + ANSWER_NUDGE
    )
    assert shapes(llm_server) == [("auto", "round"), ("auto", "answer")]


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.usefixtures("setup_integration")
async def test_a_call_for_what_the_user_did_not_name_runs_not(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Asked for the answer, the model calls the weather of a city nobody
    asked about: no request; the user hears the results of the turn, all of
    them."""
    llm_server.add(
        tool_calls_stream(
            ("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Paris"})
        ),
        tool_calls_stream(("get_weather", {"city": "Athens"})),
        text_stream(""),
        completion(""),
    )

    result = await converse(hass, "Weather in Rome and Paris?")

    assert speech(result) == "Rome: +14°C; Paris: +14°C."
    assert sorted(r.path for r in tool_endpoint.requests) == [
        "/weather/Paris",
        "/weather/Rome",
    ]


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.parametrize("extra_options", [{CONF_MAX_TOOL_ITERATIONS: 1}])
@pytest.mark.usefixtures("setup_integration")
async def test_with_one_round_the_answer_is_asked_with_no_calls(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """No round left for more calls: the request after the results is the
    closing one."""
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        text_stream("Rome is sunny."),
    )

    result = await converse(hass, "What's the weather in Rome and Paris?")

    assert speech(result) == "Rome is sunny."
    assert shapes(llm_server) == [("auto", "round"), ("none", "closing")]


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.usefixtures("setup_integration")
async def test_an_empty_result_read_out_says_nothing_came_back(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """A search that found nothing (`[]`) and a silent model: the user hears
    that the tool returned nothing, not "returned:" and silence."""
    await call_service(
        hass,
        "set_tools",
        {
            "tools": [
                {
                    "name": "list_items",
                    "description": "List the shopping list.",
                    "url": f"{tool_endpoint.url}/empty",
                    "method": "GET",
                }
            ]
        },
    )
    llm_server.add(
        tool_calls_stream(("list_items", {})),
        text_stream(""),
        completion(""),
        text_stream(""),
        completion(""),
    )

    result = await converse(hass, "What's on my list?")

    assert speech(result) == said("tool_result_empty")
    assert [r.path for r in tool_endpoint.requests] == ["/empty"]


@pytest.mark.parametrize(
    "agent_options", [{CONF_PROFILE: "small", CONF_CHAIN_CALLS: "on"}]
)
@pytest.mark.usefixtures("setup_integration")
async def test_chained_calls_when_allowed(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    agent_options: dict[str, Any],
) -> None:
    """With `chain_calls` the model reads the results with tools still
    offered, and may call on (list, then act on what it found)."""
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        tool_calls_stream(("send_webhook", {"message": "Rome is sunny"})),
        text_stream("Sent."),
    )

    result = await converse(hass, "Tell the house the weather in Rome")

    assert speech(result) == "Sent."
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome", "/hook"]
    assert shapes(llm_server) == [("auto", "round")] * 3


@pytest.mark.parametrize(
    ("name", "arguments", "runs"),
    [
        ("get_weather", {"city": "Paris"}, True),
        ("get_weather", {"city": "ROME"}, False),  # asked for already
        ("get_weather", {"city": " paris "}, True),  # as the user wrote it
        ("get_weather", {"city": "Paris", "days": 3}, True),  # numbers: free
        ("get_weather", {"city": "Athens"}, False),  # not the user's words
        ("get_weather", {"city": "Paris", "unit": "kelvin"}, False),
        ("get_weather", {"days": 3}, False),  # no words of the user at all
        ("send_webhook", {"message": "Paris"}, False),  # not a tool of the turn
    ],
)
def test_more_of_what_the_user_asked(
    name: str, arguments: dict[str, Any], runs: bool
) -> None:
    """Which calls run on the request for the answer."""
    more_of = MoreOf({"get_weather": frozenset({"rome"})}, "weather in rome and paris?")
    assert more_of.allows(name, arguments) is runs


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.usefixtures("setup_integration")
async def test_a_change_asked_for_is_said_without_asking(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """The message the user asked to send was sent: the agent says so; asked
    to send two, one call made, the request for the answer may still send
    the other."""
    llm_server.add(tool_calls_stream(("send_webhook", {"message": "dinner"})))

    result = await converse(hass, "Tell everyone that dinner is ready.")

    assert speech(result) == said("sent")
    assert shapes(llm_server) == [("auto", "round")]

    llm_server.add(
        tool_calls_stream(("send_webhook", {"message": "dinner"})),
        tool_calls_stream(("send_webhook", {"message": "dessert"})),
    )
    await converse(hass, "Send dinner and then dessert.")

    assert [r.path for r in tool_endpoint.requests] == ["/hook"] * 3
    assert shapes(llm_server)[1:] == [("auto", "round"), ("auto", "answer")]
