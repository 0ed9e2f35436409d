"""Real Home Assistant + this integration + a real llama.cpp server with
Qwen2.5-Coder-0.5B + a real aiohttp tool server, all on loopback.

Temperature 0 (greedy decoding) with the server's seed fixed and HA's
date/time prompt line fixed: the same prompt gives the same answer.
"""

from __future__ import annotations

from homeassistant.core import HomeAssistant
import pytest

from .harness import ModelServer, converse, markup_in, setup_ours, speech
from .tool_server import DemoToolServer, weather_for

pytestmark = pytest.mark.e2e


async def test_weather_in_rome(
    hass: HomeAssistant, model_server: ModelServer, tool_server: DemoToolServer
) -> None:
    """The model writes the call as text; the tool server gets Rome's request."""
    agent = await setup_ours(
        hass,
        model_server.url,
        tool_server.tools(["get_weather", "send_webhook"]),
    )

    result = await converse(hass, agent, "What's the weather in Rome?")

    answer = speech(result)
    weather = [r for r in tool_server.requests if r.path.startswith("/weather/")]
    assert [(r.method, r.path) for r in weather] == [("GET", "/weather/Rome")], (
        tool_server.requests,
        answer,
    )
    assert answer.strip(), "the agent said nothing"
    assert not markup_in(answer), f"call markup in the answer: {answer!r}"


async def test_weather_answer_uses_the_result(
    hass: HomeAssistant, model_server: ModelServer, tool_server: DemoToolServer
) -> None:
    """The spoken answer carries the temperature the tool returned.

    Qwen2.5-Coder-0.5B repeats the call after the tool result (llama-cpp-python
    ignores `tool_choice: none`); the agent's closing request tells it to
    answer from the results, and it does.
    """
    agent = await setup_ours(
        hass,
        model_server.url,
        tool_server.tools(["get_weather", "send_webhook"]),
    )

    answer = speech(await converse(hass, agent, "What's the weather in Rome?"))

    _, temperature = weather_for("Rome")
    assert f"{temperature}" in answer, answer


async def test_items_rest_surface(
    hass: HomeAssistant, model_server: ModelServer, tool_server: DemoToolServer
) -> None:
    """Two tools of the items REST surface, one conversation each."""
    agent = await setup_ours(
        hass,
        model_server.url,
        tool_server.tools(["list_items", "add_item", "delete_item"]),
    )

    added = await converse(hass, agent, "Add bread to the shopping list.")
    # ("What is on my shopping list?" gets an invented list: no call.)
    listed = await converse(hass, agent, "List the items on my shopping list.")

    calls = [(r.method, r.path) for r in tool_server.requests]
    assert ("POST", "/api/items") in calls, (tool_server.requests, speech(added))
    assert ("GET", "/api/items") in calls, (tool_server.requests, speech(listed))
    assert "bread" in [i["name"].lower() for i in tool_server.items.values()]
    for result in (added, listed):
        assert speech(result).strip()
        assert not markup_in(speech(result)), speech(result)
