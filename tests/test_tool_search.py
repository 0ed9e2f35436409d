"""A search for large tool sets (`turn/tool_search.py`): over the threshold
the requests show the search (or the tools the request names), the model
finds its tool and calls it against a real tool server; at or under it
nothing changes; a tool not shown still runs when called by its name."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
import pytest

from custom_components.http_tools_agent.const import CONF_PROFILE, CONF_TOOL_SEARCH
from custom_components.http_tools_agent.turn.tool_search import (
    FIND_TOOLS,
    PRESELECTED,
    THRESHOLD,
    ToolIndex,
)
from dev.tool_server import DEMO_TOOLS, DemoToolServer

from .kit import agent_with_tools, converse, speech
from .many_tools import arr_tools
from .servers import FakeLLMServer, text_stream, tool_calls_stream


def offered(request: dict[str, Any]) -> list[str]:
    """The tool names a request to the model offered."""
    return [tool["function"]["name"] for tool in request.get("tools") or ()]


async def many_tools_agent(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    search: str,
    count: int = 40,
    profile: str = "capable",
) -> None:
    """An agent with `count` imported operations before the demo's tools."""
    tools = [
        *arr_tools(items.url, count),
        *items.tools(list(DEMO_TOOLS), sentences=False),
    ]
    await agent_with_tools(
        hass,
        llm_server.base_url,
        tools,
        agent={CONF_TOOL_SEARCH: search, CONF_PROFILE: profile},
    )


async def test_search_is_offered_and_the_found_tool_runs(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """46 tools: the first request offers the search and the clock, not the
    tools; the search's result names the weather tool, the next request
    offers it, and its call reaches the tool server."""
    await many_tools_agent(hass, llm_server, items, "search")
    llm_server.add(
        tool_calls_stream((FIND_TOOLS, {"query": "weather"})),
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        text_stream("Rome is sunny."),
    )
    result = await converse(hass, "What's the weather in Rome?")

    first, second = llm_server.requests[0], llm_server.requests[1]
    assert offered(first) == ["GetDateTime", FIND_TOOLS]
    assert "get_weather" in offered(second)
    assert len(offered(second)) <= 5
    found = second["messages"][-1]["content"]
    assert '"name":"get_weather"' in found
    assert "weather and temperature" in found
    assert [f"{r.method} {r.path}" for r in items.requests] == ["GET /weather/Rome"]
    assert speech(result) == "Rome is sunny."


async def test_preselect_offers_the_tools_the_request_names(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """Preselected: the one request offers the few tools the user's words
    match (Italian words too), none of the imported operations; small talk
    is offered none of the HTTP tools."""
    await many_tools_agent(hass, llm_server, items, "preselect", profile="small")
    llm_server.add(
        tool_calls_stream(("add_item", {"name": "pane"})),
        text_stream("Ho aggiunto il pane."),
        text_stream("Ciao!"),
    )
    await converse(hass, "Aggiungi il pane alla lista.")
    shown = offered(llm_server.requests[0])
    # The tools the words match, in the order the agent offers them.
    assert shown == ["list_items", "add_item", "GetDateTime"]
    assert len(shown) <= PRESELECTED + 1
    assert [f"{r.method} {r.path}" for r in items.requests] == ["POST /api/items"]

    await converse(hass, "Ciao, come stai?")
    assert offered(llm_server.requests[-1]) == ["GetDateTime"]


async def test_a_tool_not_shown_still_runs_by_its_name(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """A capable model that knows its tool calls it without searching: it
    runs (nothing a capable model meant is lost)."""
    await many_tools_agent(hass, llm_server, items, "search")
    llm_server.add(
        tool_calls_stream(("list_items", {})),
        text_stream("You have apples, bananas and milk."),
    )
    result = await converse(hass, "What's on my list?")
    assert "list_items" not in offered(llm_server.requests[0])
    assert [f"{r.method} {r.path}" for r in items.requests] == ["GET /api/items"]
    assert speech(result) == "You have apples, bananas and milk."


@pytest.mark.parametrize("search", ["search", "preselect", "auto"])
async def test_at_the_threshold_every_tool_is_offered(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    items: DemoToolServer,
    search: str,
) -> None:
    """At the threshold (and under it) the request offers every tool, and
    no search, whatever the setting."""
    count = THRESHOLD - len(DEMO_TOOLS)
    await many_tools_agent(hass, llm_server, items, search, count, profile="small")
    llm_server.add(text_stream("Hello!"))
    await converse(hass, "Hello")
    shown = offered(llm_server.requests[0])
    assert len(shown) == THRESHOLD + 1  # and the clock
    assert FIND_TOOLS not in shown


async def test_auto_shows_every_tool_to_a_capable_model(
    hass: HomeAssistant, llm_server: FakeLLMServer, items: DemoToolServer
) -> None:
    """`auto` on a capable model: every one of the 46 tools is offered."""
    await many_tools_agent(hass, llm_server, items, "auto")
    llm_server.add(text_stream("Hello!"))
    await converse(hass, "Hello")
    assert len(offered(llm_server.requests[0])) == 47


@pytest.mark.parametrize(
    ("request_text", "tool"),
    [
        ("Che tempo fa a Napoli?", "get_weather"),
        ("¿Qué tiempo hace en Sevilla?", "get_weather"),
        ("Do I need an umbrella in Oslo?", "get_weather"),
        ("Cosa c'è nella lista della spesa?", "list_items"),
        ("Añade leche a la lista.", "add_item"),
        ("Imposta l'articolo 1 a 4 pezzi.", "update_item"),
        ("Borra el artículo 1.", "delete_item"),
        ("Manda una notifica: la lavatrice ha finito.", "send_webhook"),
        ("Which episodes are in the calendar?", "get_api_v3_calendar"),
    ],
)
def test_the_request_words_rank_the_tool_first(request_text: str, tool: str) -> None:
    """The words of a request in any of the agent's languages find the tool
    among the imported operations (the lexicons' topics and acts)."""
    definitions = [
        *arr_tools("http://127.0.0.1:1"),
        *DemoToolServer().tools(list(DEMO_TOOLS), sentences=False),
    ]
    index = ToolIndex.of(
        {
            "name": d["name"],
            "description": d.get("description", ""),
            "parameters": d.get("parameters", {}),
        }
        for d in definitions
    )
    assert index.rank(request_text)[0] == tool
