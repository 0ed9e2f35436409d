"""Calls per turn are bounded. Under the small-model rules, a reply that
calls every offered tool at once (a small model's answer to "What is 2 plus
2?") changes nothing the request did not ask for; a capable model's request
for every tool runs them all."""

from __future__ import annotations

from dataclasses import replace
import json
from typing import Any
from unittest import mock

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import (
    CONF_MAX_CALLS_PER_TURN,
    CONF_PROFILE,
)
from custom_components.http_tools_agent.small import rules as small_rules
from custom_components.http_tools_agent.small.guards import UNASKED_ERROR, asks_for

from .kit import converse, speech, weather_tool
from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream

SMALL = pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])


def weather_calls(*cities: str) -> Any:
    return tool_calls_stream(*(("get_weather", {"city": c}) for c in cities))


def results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("agent_options", [{CONF_MAX_CALLS_PER_TURN: 2}])
async def test_calls_over_the_limit_are_not_run(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    setup_integration: MockConfigEntry,
) -> None:
    """Limit 2: the third call of a reply, and any call of a later round, is
    answered with an error the model reads."""
    llm_server.add(
        weather_calls("Rome", "Paris", "Oslo"),
        weather_calls("Milan"),
        text_stream("Rome and Paris are sunny."),
    )

    result = await converse(hass, "Weather in Rome, Paris, Oslo and Milan?")

    assert speech(result) == "Rome and Paris are sunny."
    assert [r.path for r in tool_endpoint.requests] == [
        "/weather/Rome",
        "/weather/Paris",
    ]
    limit = (
        "Error: not run: this turn already made 2 tool calls, the limit. "
        "Answer with the results you have."
    )
    assert results(llm_server.requests[1]) == [
        "Rome: ☀️ +14°C",
        "Paris: ☀️ +14°C",
        limit,
    ]
    assert results(llm_server.requests[2])[-1] == limit
    assert setup_integration.runtime_data.model_quirks["calls_over_the_limit"] == 2


@pytest.fixture
def tools(tool_endpoint: ToolEndpoint) -> list[dict[str, Any]]:
    """Four tools, as a small home's set might be."""
    base = tool_endpoint.url

    def tool(name: str, description: str) -> dict[str, Any]:
        return {
            "name": name,
            "description": description,
            "url": f"{base}/{name}",
            "method": "POST",
        }

    return [
        weather_tool(base),
        tool("list_items", "List the shopping list."),
        tool("send_webhook", "Send a notification."),
        tool("open_garage", "Open the garage door."),
    ]


@SMALL
@pytest.mark.usefixtures("setup_integration")
async def test_every_tool_at_once_changes_nothing_nobody_asked_for(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Qwen2.5-0.5B answers "What is 2 plus 2?" by writing a call to each
    tool. Small: the calls that change something and that nothing in the
    request asks for run not (the garage stays shut, no one is notified);
    the model reads why and answers in words."""
    calls = "\n".join(
        json.dumps({"name": name, "arguments": args})
        for name, args in (
            ("get_weather", {"city": "2 plus 2"}),
            ("list_items", {}),
            ("send_webhook", {}),
            ("open_garage", {}),
        )
    )
    llm_server.add(text_stream(calls), text_stream("2 plus 2 is 4."))

    result = await converse(hass, "What is 2 plus 2?")

    assert speech(result) == "2 plus 2 is 4."
    paths = [r.path for r in tool_endpoint.requests]
    assert "/open_garage" not in paths
    assert "/send_webhook" not in paths
    assert UNASKED_ERROR in results(llm_server.requests[1])


@SMALL
@pytest.mark.parametrize(
    ("request_text", "opened"),
    [
        ("Is the garage open?", False),
        ("Is the garage door open right now?", False),
        ("Can you open the garage?", True),
        ("Open the garage.", True),
    ],
)
@pytest.mark.usefixtures("setup_integration")
async def test_a_question_changes_nothing_even_where_its_words_name_the_change(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    request_text: str,
    opened: bool,
) -> None:
    """ "Is the garage open?" names the tool ("open", "garage"), so the
    unasked-changes check alone lets `open_garage` run; the small profile's
    question rule keeps it shut. A request phrased as a question ("Can
    you ...?") still asks for its change."""
    llm_server.add(
        tool_calls_stream(("open_garage", {})), text_stream("The garage is open.")
    )
    unasked_alone = replace(small_rules.SMALL_RULES, questions_change_nothing=False)

    await converse(hass, request_text)
    llm_server.replies.clear()  # an opened garage is read out: no answer asked
    with mock.patch.object(small_rules, "SMALL_RULES", unasked_alone):
        llm_server.add(tool_calls_stream(("open_garage", {})), text_stream("Done."))
        await converse(hass, request_text)

    paths = [r.path for r in tool_endpoint.requests]
    # With the question rule: opened only when asked; without it, always.
    assert paths == (["/open_garage"] * 2 if opened else ["/open_garage"])


@pytest.mark.usefixtures("setup_integration")
async def test_some_of_the_tools_at_once_run(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Three of four tools in one reply is a request for three things."""
    llm_server.add(
        tool_calls_stream(
            ("get_weather", {"city": "Rome"}), ("list_items", {}), ("open_garage", {})
        ),
        text_stream("Done."),
    )

    await converse(hass, "Weather, my list, and open the garage")

    assert sorted(r.path for r in tool_endpoint.requests) == [
        "/list_items",
        "/open_garage",
        "/weather/Rome",
    ]


@pytest.fixture
def six_tools(tools: list[dict[str, Any]], tool_endpoint: ToolEndpoint) -> None:
    """Two more tools: six, as the demo offers."""
    for name in ("close_garage", "ring_doorbell"):
        tools.append(
            {
                "name": name,
                "description": name.replace("_", " "),
                "url": f"{tool_endpoint.url}/{name}",
                "method": "POST",
            }
        )


def recital(*names: str) -> Any:
    return text_stream(
        "\n".join(json.dumps({"name": n, "arguments": {}}) for n in names)
    )


@pytest.mark.usefixtures("six_tools", "setup_integration")
async def test_calls_out_of_the_offered_order_run(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    names = ("open_garage", "list_items", "close_garage", "send_webhook")
    llm_server.add(recital(*names), text_stream("Done."))

    await converse(hass, "Open the garage, my list, close it, notify me")

    assert sorted(r.path for r in tool_endpoint.requests) == sorted(
        f"/{n}" for n in names
    )


@SMALL
@pytest.mark.usefixtures("setup_integration")
async def test_a_call_with_its_schema_for_arguments_reaches_no_tool(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Qwen2.5-0.5B, told "Good night.", called a tool with the tool's
    parameter schema as its arguments: the argument checks answer it (the
    city is missing), no request is made, and the model answers in words."""
    schema = weather_tool("")["parameters"]
    llm_server.add(
        text_stream(json.dumps({"name": "get_weather", "arguments": schema})),
        text_stream("Good night!"),
    )

    result = await converse(hass, "Good night.")

    assert speech(result) == "Good night!"
    assert tool_endpoint.requests == []
    assert "city" in results(llm_server.requests[1])[0]


@pytest.fixture
def describe_tool(tools: list[dict[str, Any]], tool_endpoint: ToolEndpoint) -> None:
    """A tool whose arguments are named `type` and `properties`."""
    tools.append(
        {
            "name": "describe",
            "description": "Describe a thing.",
            "parameters": {
                "type": "object",
                "properties": {
                    "type": {"type": "string"},
                    "properties": {"type": "object"},
                },
            },
            "url": f"{tool_endpoint.url}/describe",
            "method": "POST",
        }
    )


@pytest.mark.usefixtures("describe_tool", "setup_integration")
async def test_a_tool_taking_a_type_argument_runs(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Arguments named `type` and `properties` are values when the tool
    declares them."""
    arguments = {"type": "lamp", "properties": {"color": "red"}}
    llm_server.add(
        tool_calls_stream(("describe", arguments)), text_stream("A red lamp.")
    )

    await converse(hass, "Describe a red lamp")

    assert [(r.path, json.loads(r.body)) for r in tool_endpoint.requests] == [
        ("/describe", arguments)
    ]


@pytest.mark.usefixtures("setup_integration")
async def test_calls_written_on_one_line_all_run(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Two cities asked, two bare JSON calls on one line separated by a comma
    (Qwen2.5-0.5B): both run, and none of the JSON is spoken."""
    calls = ", ".join(
        json.dumps({"name": "get_weather", "arguments": {"city": c}})
        for c in ("Vienna", "Lisbon")
    )
    llm_server.add(text_stream(calls), text_stream("Both are sunny, 14 degrees."))

    result = await converse(hass, "How is the weather in Vienna and in Lisbon?")

    assert speech(result) == "Both are sunny, 14 degrees."
    assert sorted(r.path for r in tool_endpoint.requests) == [
        "/weather/Lisbon",
        "/weather/Vienna",
    ]


def add_milk_and_more() -> Any:
    """What Qwen2.5-0.5B wrote for "Add milk to the list.": the add, then
    the weather for Paris, the list and a notification to the family."""
    return tool_calls_stream(
        ("add_item", {"name": "milk"}),
        ("get_weather", {"city": "Paris"}),
        ("list_items", {}),
        ("send_webhook", {"message": "Milk added"}),
    )


@pytest.fixture
def item_tools(tools: list[dict[str, Any]], tool_endpoint: ToolEndpoint) -> None:
    """An add beside the weather, the list, the webhook and the garage."""
    for name, method in (("add_item", "POST"),):
        tools.append(
            {
                "name": name,
                "description": name.replace("_", " "),
                "parameters": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                },
                "url": f"{tool_endpoint.url}/{name}",
                "method": method,
            }
        )


@SMALL
@pytest.mark.usefixtures("item_tools", "setup_integration")
async def test_a_change_nobody_asked_for_runs_not(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Small: the notification nobody asked for is not sent (the reads are
    left to the model's answer)."""
    llm_server.add(add_milk_and_more(), text_stream("Milk is on your list."))

    await converse(hass, "Add milk to the list.")

    paths = sorted(r.path for r in tool_endpoint.requests)
    assert "/send_webhook" not in paths
    assert "/add_item" in paths
    assert "Error: not run: the user did not ask for this." in " ".join(
        results(llm_server.requests[1])
    )


@SMALL
@pytest.mark.usefixtures("item_tools", "setup_integration")
async def test_a_lone_change_nobody_asked_for_runs_not(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Small: a lone call of a tool that changes something the request does
    not ask for does not run; the same call runs when the words ask for it."""
    llm_server.add(
        tool_calls_stream(("add_item", {"name": "Bed Light"})),
        text_stream("I can't do that."),
    )

    await converse(hass, "Turn the bedroom light on.")

    assert tool_endpoint.requests == []
    assert results(llm_server.requests[1]) == [UNASKED_ERROR]

    llm_server.add(
        tool_calls_stream(("add_item", {"name": "milk"})),
        text_stream("Milk is on your list."),
    )
    await converse(hass, "Put milk on the list.")
    assert [r.path for r in tool_endpoint.requests] == ["/add_item"]


@pytest.mark.usefixtures("item_tools", "setup_integration")
async def test_a_capable_model_decides_what_to_change(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    llm_server.add(add_milk_and_more(), text_stream("Milk is on your list."))

    await converse(hass, "Add milk to the list.")

    assert "/send_webhook" in [r.path for r in tool_endpoint.requests]


@pytest.mark.parametrize(
    ("tool", "request_", "asked"),
    [
        ("send_webhook", "Add milk to the list.", False),
        ("send_webhook", "Add milk and tell the family.", True),
        ("send_webhook", "Avvisa la famiglia.", True),
        ("delete_item", "Remove item 1.", True),
        ("delete_item", "Borra el artículo 1.", True),
        ("add_item", "Aggiungi il latte.", True),
        ("add_item", "Turn on the kitchen light.", False),
        ("intent__HassTurnOn", "Accendi la luce della cucina.", True),
        ("intent__HassTurnOn", "Add eggs to my list.", False),
        ("intent__HassTurnOff", "Apaga la luz.", True),
    ],
)
def test_what_a_request_asks_for(tool: str, request_: str, asked: bool) -> None:
    assert asks_for(tool, request_) is asked


def unknown_call(name: str) -> Any:
    return text_stream(json.dumps({"name": name, "arguments": {}}))


@pytest.mark.parametrize(
    ("agent_options", "failed_rounds", "tool_choices"),
    [
        ({CONF_PROFILE: "small"}, 4, ["auto", "auto", "auto", "auto", "none"]),
        ({CONF_PROFILE: "capable"}, 4, ["auto", "auto", "auto", "auto", "none"]),
    ],
    ids=["small", "capable"],
)
@pytest.mark.usefixtures("setup_integration")
async def test_failed_rounds_are_the_models_to_retry(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    failed_rounds: int,
    tool_choices: list[str],
) -> None:
    """Qwen2.5-0.5B writes the unknown tool's error back as the next tool's
    name, round after round: every round is the model's (a rule that ended
    the turn after one retry round changed no held-out outcome, P4), then
    the closing request asks for words."""
    names = ["Good night", "Error: unknown tool 'Good night'", "Error", "Error 2"]
    llm_server.add(
        *(unknown_call(name) for name in names[:failed_rounds]),
        text_stream("Good night!"),
    )

    result = await converse(hass, "Good night.")

    assert speech(result) == "Good night!"
    assert [body["tool_choice"] for body in llm_server.requests] == tool_choices
