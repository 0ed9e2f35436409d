"""The set_tools / get_tools / reset_tools services, as admin and not."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from homeassistant.auth.models import User
from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import (
    ServiceValidationError,
    Unauthorized,
)
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import DOMAIN

from .kit import call_service, converse, speech, tool_names
from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream

pytestmark = pytest.mark.usefixtures("setup_integration")


def guest_tools(endpoint: ToolEndpoint) -> list[dict[str, Any]]:
    """A different set: only a doorbell tool."""
    return [
        {
            "name": "ring_doorbell",
            "description": "Ring the doorbell chime.",
            "url": f"{endpoint.url}/doorbell",
            "method": "POST",
        }
    ]


async def test_get_tools_reports_configured_tools(
    hass: HomeAssistant, hass_admin_user: User, tools: list[dict[str, Any]]
) -> None:
    """get_tools answers {ok, count, source, tools} for the options' tools."""
    response = await call_service(hass, "get_tools", user=hass_admin_user)

    assert response["ok"] is True
    assert response["count"] == 2
    assert response["source"] == "options"
    assert tool_names(response) == ["get_weather", "send_webhook"]
    assert response["tools"][0]["url"] == tools[0]["url"]
    # Header values (often keys) never reach a response: traces get shared.
    assert response["tools"][1]["headers"] == {"X-Tool": "**REDACTED**"}


async def test_set_then_reset_tools(
    hass: HomeAssistant, hass_admin_user: User, tool_endpoint: ToolEndpoint
) -> None:
    """set_tools replaces the set (source request); reset_tools restores it."""
    response = await call_service(
        hass, "set_tools", {"tools": guest_tools(tool_endpoint)}, user=hass_admin_user
    )
    assert response == {
        "ok": True,
        "count": 1,
        "source": "request",
        "enabled": True,
        "tools": [
            {
                "name": "ring_doorbell",
                "description": "Ring the doorbell chime.",
                "parameters": {"type": "object", "properties": {}},
                "url": f"{tool_endpoint.url}/doorbell",
                "method": "POST",
            }
        ],
    }
    assert (await call_service(hass, "get_tools"))["source"] == "request"

    response = await call_service(hass, "reset_tools", user=hass_admin_user)
    assert response["source"] == "options"
    assert tool_names(response) == ["get_weather", "send_webhook"]
    assert tool_names(await call_service(hass, "get_tools")) == [
        "get_weather",
        "send_webhook",
    ]


async def test_set_tools_accepts_json_text(
    hass: HomeAssistant, tool_endpoint: ToolEndpoint
) -> None:
    """`tools` may be JSON text, as an automation template renders it."""
    text = json.dumps(guest_tools(tool_endpoint))
    response = await call_service(hass, "set_tools", {"tools": text})
    assert tool_names(response) == ["ring_doorbell"]


async def test_set_and_reset_without_response(
    hass: HomeAssistant, tool_endpoint: ToolEndpoint
) -> None:
    """An automation may call set_tools and reset_tools without a response."""
    await call_service(
        hass,
        "set_tools",
        {"tools": guest_tools(tool_endpoint)},
        return_response=False,
    )
    assert tool_names(await call_service(hass, "get_tools")) == ["ring_doorbell"]
    await call_service(hass, "reset_tools", return_response=False)
    assert tool_names(await call_service(hass, "get_tools")) == [
        "get_weather",
        "send_webhook",
    ]


@pytest.mark.parametrize(
    ("tools_value", "translation_key", "fragment"),
    [
        ([], "no_tool_definition", None),
        ("[]", "no_tool_definition", None),
        ("", "invalid_tools", "empty"),
        ("[{", "invalid_tools", "not valid JSON"),
        ('{"name": "x"}', "invalid_tools", "must be a JSON array"),
        (
            [{"name": "get_weather", "url": "ftp://x/{city}"}],
            "invalid_tools",
            "tool #0 'get_weather': url",
        ),
        (
            [{"name": "ok", "url": "http://a/"}, {"name": "bad", "metod": "GET"}],
            "invalid_tools",
            "tool #1 'bad': metod: unknown field (did you mean 'method'?)",
        ),
        (42, "invalid_tools", "must be a JSON array"),
    ],
)
async def test_invalid_set_tools_keeps_active_tools(
    hass: HomeAssistant,
    hass_admin_user: User,
    tool_endpoint: ToolEndpoint,
    tools_value: Any,
    translation_key: str,
    fragment: str | None,
) -> None:
    """A bad update names the problem; the active tools stay as they were."""
    await call_service(hass, "set_tools", {"tools": guest_tools(tool_endpoint)})

    with pytest.raises(ServiceValidationError) as err:
        await call_service(
            hass, "set_tools", {"tools": tools_value}, user=hass_admin_user
        )

    assert err.value.translation_domain == DOMAIN
    assert err.value.translation_key == translation_key
    message = str(err.value)
    assert message.startswith("The tools were not changed")
    if fragment is not None:
        assert fragment in message
    response = await call_service(hass, "get_tools")
    assert response["source"] == "request"
    assert tool_names(response) == ["ring_doorbell"]


@pytest.mark.parametrize("service", ["set_tools", "get_tools", "reset_tools"])
async def test_non_admin_is_refused(
    hass: HomeAssistant,
    hass_read_only_user: User,
    tool_endpoint: ToolEndpoint,
    service: str,
) -> None:
    """A non-admin user can neither read nor change the tools."""
    data = {"tools": guest_tools(tool_endpoint)} if service == "set_tools" else {}
    with pytest.raises(Unauthorized):
        await call_service(hass, service, data, user=hass_read_only_user)
    assert tool_names(await call_service(hass, "get_tools")) == [
        "get_weather",
        "send_webhook",
    ]


async def test_entry_not_loaded(
    hass: HomeAssistant, config_entry: MockConfigEntry
) -> None:
    """With the entry unloaded the services say so (the REST view's 503)."""
    assert await hass.config_entries.async_unload(config_entry.entry_id)
    assert config_entry.state is ConfigEntryState.NOT_LOADED

    for data in ({}, {"config_entry_id": config_entry.entry_id}):
        with pytest.raises(ServiceValidationError) as err:
            await call_service(hass, "get_tools", data)
        assert err.value.translation_key == "service_config_entry_not_loaded"
        assert str(err.value) == (
            f"Config entry {config_entry.title} for integration {DOMAIN} is not loaded"
        )


async def test_unknown_entry_id(hass: HomeAssistant) -> None:
    """An id that names no entry is a validation error."""
    with pytest.raises(ServiceValidationError) as err:
        await call_service(hass, "get_tools", {"config_entry_id": "nope"})
    assert err.value.translation_key == "service_config_entry_not_found"
    assert "nope" in str(err.value)


async def test_two_entries_need_an_id(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    second_entry: MockConfigEntry,
    tool_endpoint: ToolEndpoint,
) -> None:
    """With two loaded entries, config_entry_id picks one; without it, an error."""

    with pytest.raises(ServiceValidationError) as err:
        await call_service(hass, "get_tools")
    assert err.value.translation_key == "service_found_multiple_config_entry_for_domain"
    assert str(err.value) == f"Found multiple config entries for integration {DOMAIN}"

    response = await call_service(
        hass,
        "set_tools",
        {"config_entry_id": second_entry.entry_id, "tools": guest_tools(tool_endpoint)},
    )
    assert response["source"] == "request"
    first = await call_service(
        hass, "get_tools", {"config_entry_id": config_entry.entry_id}
    )
    assert first["source"] == "options"
    assert tool_names(first) == ["get_weather", "send_webhook"]


async def test_override_lives_in_memory_only(
    hass: HomeAssistant, config_entry: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """A reload (as a restart) brings back the configured tools."""
    await call_service(hass, "set_tools", {"tools": guest_tools(tool_endpoint)})
    assert await hass.config_entries.async_reload(config_entry.entry_id)
    await hass.async_block_till_done()

    response = await call_service(hass, "get_tools")
    assert response["source"] == "options"
    assert tool_names(response) == ["get_weather", "send_webhook"]
    assert "tools" in config_entry.options
    assert "ring_doorbell" not in json.dumps(dict(config_entry.options))


async def test_override_used_by_next_turn(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """The model is offered the new tools and can run them."""
    await call_service(hass, "set_tools", {"tools": guest_tools(tool_endpoint)})
    llm_server.add(
        tool_calls_stream(("ring_doorbell", {})),
        text_stream("Ding dong."),
    )

    assert speech(await converse(hass, "Ring the bell")) == "Ding dong."
    offered = [t["function"]["name"] for t in llm_server.requests[0]["tools"]]
    assert offered == ["ring_doorbell", "GetDateTime"]
    assert [(r.method, r.path) for r in tool_endpoint.requests] == [
        ("POST", "/doorbell")
    ]


async def test_set_tools_while_a_turn_runs(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """The running turn keeps its tools; the next turn gets the new ones."""
    slow_call = tool_calls_stream(("get_weather", {"city": "Rome"}))
    slow_call.delay = 0.5
    llm_server.add(
        slow_call,
        text_stream("Sunny in Rome."),
        tool_calls_stream(("ring_doorbell", {})),
        text_stream("Ding dong."),
    )

    # Know when the model has been asked, without polling.
    asked = asyncio.Event()

    class SignallingList(list[dict[str, Any]]):
        def append(self, item: dict[str, Any]) -> None:
            super().append(item)
            asked.set()

    llm_server.requests = SignallingList()
    turn = hass.async_create_task(converse(hass, "Weather in Rome?"))
    async with asyncio.timeout(5):
        await asked.wait()
    # The model is still "thinking" about the first round.
    assert not turn.done()
    response = await call_service(
        hass, "set_tools", {"tools": guest_tools(tool_endpoint)}
    )
    assert tool_names(response) == ["ring_doorbell"]

    first = await turn
    assert speech(first) == "Sunny in Rome."
    # The weather tool of the running turn still ran, after the replacement.
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    first_turn_tools = [
        [t["function"]["name"] for t in request["tools"]]
        for request in llm_server.requests
    ]
    assert first_turn_tools == [
        ["get_weather", "send_webhook", "GetDateTime"],
        ["get_weather", "send_webhook", "GetDateTime"],
    ]
    tool_message = llm_server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert "Rome" in tool_message["content"]

    second = await converse(
        hass, "Ring the bell", conversation_id=first.conversation_id
    )
    assert speech(second) == "Ding dong."
    assert [t["function"]["name"] for t in llm_server.requests[2]["tools"]] == [
        "ring_doorbell",
        "GetDateTime",
    ]
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome", "/doorbell"]
