"""Calls that need the user's yes, made from elsewhere: the run_tool action
(an automation: no one to ask) and another agent using the HTTP tools API
(it cannot ask this integration's question).

The tools run against a loopback HTTP service that records every request;
Home Assistant's core llama.cpp agent is the other agent, on the real openai
client against a scripted server.
"""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
import pytest

from .kit import add_agent, call_service, converse, core_llama_cpp_entry, speech
from .servers import FakeLLMServer, ToolEndpoint, completion
from .test_confirm import item_tools


@pytest.fixture
def tools(tool_endpoint: ToolEndpoint) -> list[dict[str, Any]]:
    """The item tools, and a delete that asks for a PIN."""
    found = item_tools(tool_endpoint.url)
    guarded = {**found[0], "name": "delete_all", "pin": "{secret:list_pin}"}
    guarded["url"] = f"{tool_endpoint.url}/api/items"
    guarded["parameters"] = {"type": "object", "properties": {}}
    return [*found, guarded]


@pytest.fixture
def extra_options() -> dict[str, Any]:
    """The PIN."""
    return {"secrets": {"list_pin": "1234"}}


@pytest.mark.usefixtures("setup_integration")
async def test_run_tool_runs_a_call_that_waits_for_a_yes(
    hass: HomeAssistant, tool_endpoint: ToolEndpoint
) -> None:
    """An automation is the user's confirmation: the DELETE runs."""
    response = await call_service(
        hass, "run_tool", {"tool": "delete_item", "arguments": {"item_id": "3"}}
    )
    assert response["ok"] is True
    assert [(r.method, r.path) for r in tool_endpoint.requests] == [
        ("DELETE", "/api/items/3")
    ]


@pytest.mark.usefixtures("setup_integration")
async def test_run_tool_never_runs_a_tool_with_a_pin(
    hass: HomeAssistant, tool_endpoint: ToolEndpoint
) -> None:
    """A PIN is given by a person: run_tool refuses the tool, naming it."""
    with pytest.raises(ServiceValidationError) as err:
        await call_service(hass, "run_tool", {"tool": "delete_all"})
    assert err.value.translation_key == "run_tool_needs_pin"
    assert "delete_all" in str(err.value)
    assert tool_endpoint.requests == []


@pytest.mark.usefixtures("setup_integration")
async def test_another_agent_is_told_the_user_must_confirm(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Core's llama.cpp agent on the HTTP tools: the DELETE is not sent; its
    model reads that the user must confirm through this integration's
    agent (and says so); a POST runs as before."""
    agent_id = await add_agent(hass, core_llama_cpp_entry(llm_server.base_url))
    llm_server.add(
        completion(
            None,
            [("delete_item", {"item_id": "3"}), ("add_item", {"name": "milk"})],
            "tool_calls",
        ),
        completion("I need you to confirm that through the HTTP Tools Agent."),
    )

    result = await converse(hass, "Delete item 3 and add milk.", agent_id=agent_id)

    assert [r.method for r in tool_endpoint.requests] == ["POST"]
    tool_messages = [
        m["content"] for m in llm_server.requests[1]["messages"] if m["role"] == "tool"
    ]
    assert any(
        "needs the user's confirmation" in str(text)
        and "HTTP Tools Agent conversation agent" in str(text)
        for text in tool_messages
    )
    assert "confirm" in speech(result)
