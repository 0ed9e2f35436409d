"""A failed action is said as failed, whatever the model writes; a reply that
writes a result or an error back again and again is cut.

Replays through the real openai client: an HTTP tool that answers 500, an
Assist intent that matches no device (core's demo lights and fans are the
house), the model claiming success anyway or echoing the error JSON.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
import pytest

from custom_components.http_tools_agent.const import CONF_PROFILE

from .house import async_demo_house
from .kit import (
    API_ID,
    agent_with_tools,
    converse,
    speech,
)
from .said import failed
from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream


def failing_tools(base: str) -> list[dict[str, Any]]:
    """An item tool whose service fails, and one that works."""
    item = {
        "type": "object",
        "properties": {"name": {"type": "string"}},
        "required": ["name"],
    }
    return [
        {
            "name": "add_item",
            "description": "Add an item to the shopping list.",
            "parameters": item,
            "url": f"{base}/fail",
            "method": "POST",
        },
        {
            "name": "send_webhook",
            "description": "Send a notification.",
            "parameters": {
                "type": "object",
                "properties": {"message": {"type": "string"}},
            },
            "url": f"{base}/hook",
            "method": "POST",
        },
    ]


async def setup(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    profile: str,
    *,
    assist: bool = False,
) -> None:
    if assist:
        await async_demo_house(hass)
    await agent_with_tools(
        hass,
        llm_server.base_url,
        failing_tools(tool_endpoint.url),
        agent={
            CONF_PROFILE: profile,
            "llm_hass_api": [API_ID, llm.LLM_API_ASSIST] if assist else [API_ID],
        },
    )


@pytest.mark.parametrize("profile", ["capable", "small"])
async def test_an_http_error_is_said_as_failed(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    chat_contents: list[dict[str, Any]],
    profile: str,
) -> None:
    """The add fails (HTTP 500); the model says it added milk anyway: the
    claim is not spoken, the user hears that it did not happen and why."""
    await setup(hass, llm_server, tool_endpoint, profile)
    llm_server.add(
        tool_calls_stream(("add_item", {"name": "milk"})),
        *[text_stream("I have added milk to your shopping list.")] * 3,
    )

    result = await converse(hass, "Add milk to the list.")

    assert [r.path for r in tool_endpoint.requests] == ["/fail"]
    assert speech(result) == failed("reason_http_status", status="500")
    shown = " ".join(c.get("content") or "" for c in chat_contents)
    assert "added milk" not in shown


@pytest.mark.parametrize(
    ("language", "request_text", "spoken_in"),
    [
        ("it", "Aggiungi il latte.", "it"),
        ("es", "Añade la leche.", "es"),
        # Asked in Italian of an English pipeline: said in Italian.
        ("en", "Aggiungi il latte alla lista.", "it"),
    ],
)
async def test_the_failure_in_the_users_language(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    language: str,
    request_text: str,
    spoken_in: str,
) -> None:
    await setup(hass, llm_server, tool_endpoint, "capable")
    llm_server.add(
        tool_calls_stream(("add_item", {"name": "latte"})),
        *[text_stream("Fatto! Ho aggiunto il latte.")] * 3,
    )

    result = await converse(hass, request_text, language=language)

    assert speech(result) == failed("reason_http_status", spoken_in, status="500")


async def test_a_model_that_says_it_failed_is_not_corrected(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    await setup(hass, llm_server, tool_endpoint, "capable")
    llm_server.add(
        tool_calls_stream(("add_item", {"name": "milk"})),
        text_stream("Sorry, I couldn't add milk: the list service failed."),
    )

    result = await converse(hass, "Add milk to the list.")

    assert speech(result) == "Sorry, I couldn't add milk: the list service failed."


async def test_one_of_two_actions_failed(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    await setup(hass, llm_server, tool_endpoint, "capable")
    llm_server.add(
        tool_calls_stream(
            ("add_item", {"name": "milk"}),
            ("send_webhook", {"message": "milk is on the list"}),
        ),
        text_stream("Done: milk is on the list and the family knows."),
    )

    result = await converse(hass, "Add milk and tell the family.")

    assert sorted(r.path for r in tool_endpoint.requests) == ["/fail", "/hook"]
    # Which one did not happen, in words a person says.
    assert speech(result) == failed(
        "reason_http_status", action="add item", status="500"
    )


ERROR_JSON = json.dumps({"error": "MatchFailedError", "error_text": "no match"})


@pytest.mark.parametrize(
    ("language", "request_text"),
    [
        ("en", "Turn on the kitchen light."),
        ("it", "Accendi la luce della cucina."),
        ("es", "Enciende la luz de la cocina."),
    ],
)
async def test_an_intent_that_matched_nothing_and_an_echo_loop(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    language: str,
    request_text: str,
) -> None:
    """HassTurnOn with an invented area matches no device; the model writes
    the error back line after line (Qwen2.5-0.5B did until `max_tokens`,
    60 s): at the second copy the agent stops reading, and the user hears
    that the light was not turned on. (Capable: the small rules would
    leave the invented area and floor out.)"""
    await setup(hass, llm_server, tool_endpoint, "capable", assist=True)
    # The demo's light starts on: off, a turn-on that ran would show.
    await hass.services.async_call(
        "light", "turn_off", {"entity_id": "light.kitchen_lights"}, blocking=True
    )
    never = asyncio.Event()
    llm_server.add(
        tool_calls_stream(
            ("HassTurnOn", {"name": "Kitchen Lights", "area": "Attic", "floor": "Roof"})
        ),
        text_stream(
            *[ERROR_JSON + "\n"] * 3,
            "The kitchen light is currently off.",
            hold_before_piece=2,
            hold_until=never.wait,
        ),
        *[text_stream("The kitchen light is on.")] * 3,
    )

    async with asyncio.timeout(10):  # the held rest would take 20 s
        result = await converse(hass, request_text, language=language)

    never.set()
    assert speech(result) == failed("reason_no_device", language)
    light = hass.states.get("light.kitchen_lights")
    assert light is not None
    assert light.state == "off"  # never turned on
    offered = [t["function"]["name"] for t in llm_server.requests[0]["tools"]]
    assert any(name.endswith("HassTurnOn") for name in offered)


@pytest.mark.parametrize(
    ("profile", "state", "spoken"),
    [
        # Home Assistant's own sentence for HassTurnOff by name: no request
        # for the model's words (`Rules.own_answer`).
        ("small", "off", "Turned off the light"),
        ("capable", "on", failed("reason_no_device")),
    ],
)
async def test_an_invented_floor_is_left_out_under_the_small_rules(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    profile: str,
    state: str,
    spoken: str,
) -> None:
    """The 0.5B model gave HassTurnOff a floor the house does not have
    ("all"): small, the floor is left out and the light goes off; capable,
    the call is the model's and fails."""
    await setup(hass, llm_server, tool_endpoint, profile, assist=True)
    llm_server.add(
        tool_calls_stream(("HassTurnOff", {"name": "Kitchen Lights", "floor": "all"})),
        text_stream("The kitchen lights are off."),
        text_stream("The kitchen lights are off."),
    )

    result = await converse(hass, "Turn off the kitchen lights.")

    light = hass.states.get("light.kitchen_lights")
    assert light is not None
    assert light.state == state
    assert speech(result) == spoken
