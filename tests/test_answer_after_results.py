"""Once a round's calls have their results, the agent asks for the answer
(the default): a small model offered more calls after a result calls other
tools (Qwen2.5-0.5B listed the shopping list, then searched it for "milk",
then fell silent), asked for the answer it gives one. A call that failed
still gets another round to retry; `chain_calls` lets a model that plans
call on."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
import pytest

from custom_components.http_tools_agent.const import CONF_CHAIN_CALLS
from custom_components.http_tools_agent.entity import CLOSING_NUDGE

from .kit import call_service, converse, speech
from .servers import (
    FakeLLMServer,
    ToolEndpoint,
    completion,
    text_stream,
    tool_calls_stream,
)


def shapes(llm_server: FakeLLMServer) -> list[tuple[str | None, bool]]:
    """Each request's tool_choice, and whether it asks for the answer."""
    return [
        (
            body.get("tool_choice"),
            CLOSING_NUDGE in str(body["messages"][-1].get("content")),
        )
        for body in llm_server.requests
    ]


@pytest.mark.parametrize("agent_options", [{CONF_CHAIN_CALLS: False}])
@pytest.mark.usefixtures("setup_integration")
async def test_the_request_after_results_asks_for_the_answer(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        text_stream("Rome is sunny, 14 degrees."),
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == "Rome is sunny, 14 degrees."
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    assert shapes(llm_server) == [("auto", False), ("none", True)]


@pytest.mark.parametrize("agent_options", [{CONF_CHAIN_CALLS: False}])
@pytest.mark.usefixtures("setup_integration")
async def test_a_failed_call_gets_a_round_to_retry(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """An unknown tool (or arguments the schema refuses) is answered with an
    error; the model may call again, and after that result it is asked for
    the answer."""
    llm_server.add(
        tool_calls_stream(("weather", {"city": "Rome"})),
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        text_stream("Rome is sunny."),
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == "Rome is sunny."
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    assert shapes(llm_server) == [("auto", False), ("auto", False), ("none", True)]
    assert llm_server.requests[1]["messages"][-1]["content"] == (
        "Error: unknown tool 'weather'"
    )


@pytest.mark.parametrize("agent_options", [{CONF_CHAIN_CALLS: False}])
@pytest.mark.usefixtures("setup_integration")
async def test_calls_on_the_answer_request_do_not_run(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """A model that calls another tool instead of answering: that call does
    not run, and the user hears the result the turn has."""
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        tool_calls_stream(("send_webhook", {"message": "Rome is sunny"})),
        text_stream(""),
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result).startswith("Done. The tool get weather returned: Rome")
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]


@pytest.mark.parametrize("agent_options", [{CONF_CHAIN_CALLS: False}])
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
    )

    result = await converse(hass, "What's on my list?")

    assert speech(result) == "Done. The tool list items returned nothing."
    assert [r.path for r in tool_endpoint.requests] == ["/empty"]


@pytest.mark.parametrize("agent_options", [{CONF_CHAIN_CALLS: True}])
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
    assert shapes(llm_server) == [("auto", False), ("auto", False), ("auto", False)]
