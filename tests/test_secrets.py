"""Secrets: `{secret:name}` in URLs and headers, kept from the model and from
every output a user or an automation sees."""

from __future__ import annotations

import json
import logging
from typing import Any

from homeassistant.components.conversation.trace import async_get_traces
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_capture_events,
)
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.http_tools_agent.const import DOMAIN, EVENT_TOOL_CALL

from .kit import call_service, converse, load_integration, speech
from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream

SECRET = "wk-7f3a9c21-very-secret"


@pytest.fixture
def extra_options() -> dict[str, Any]:
    """The entry's secrets."""
    return {"secrets": {"weather_key": SECRET}}


@pytest.fixture
def tools(tool_endpoint: ToolEndpoint) -> list[dict[str, Any]]:
    """A weather tool keyed in a header and the query, and an echoing one."""
    return [
        {
            "name": "get_weather",
            "description": "Weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
            "url": f"{tool_endpoint.url}/weather/{{city}}?key={{secret:weather_key}}",
            "method": "GET",
            "headers": {"X-Api-Key": "{secret:weather_key}"},
        },
        {
            "name": "echo",
            "description": "Echo the request.",
            "parameters": {
                "type": "object",
                "properties": {"weather_key": {"type": "string"}},
            },
            "url": f"{tool_endpoint.url}/echo?appid={{secret:weather_key}}",
            "method": "GET",
            "headers": {"Authorization": "Bearer {secret:weather_key}"},
        },
        {
            "name": "refused",
            "description": "A server that quotes the key in its error.",
            "url": f"{tool_endpoint.url}/echo-error?key={{secret:weather_key}}",
            "method": "GET",
        },
    ]


async def test_a_full_turn_never_shows_the_secret(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    hass_client: ClientSessionGenerator,
    chat_contents: list[dict[str, Any]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The secret reaches the tool server and nothing else: not the model, the
    chat log, the trace, the events, a log line, diagnostics, the services or
    the REST endpoint."""
    caplog.set_level(logging.DEBUG)
    events = async_capture_events(hass, EVENT_TOOL_CALL)
    llm_server.add(
        tool_calls_stream(
            ("get_weather", {"city": "Rome"}), ("echo", {}), ("refused", {})
        ),
        text_stream("Rome is sunny."),
    )
    result = await converse(hass, "Weather in Rome?")
    assert speech(result) == "Rome is sunny."

    # The tool server got the key, in the header and the query.
    weather = next(r for r in tool_endpoint.requests if r.path == "/weather/Rome")
    assert weather.headers["X-Api-Key"] == SECRET
    assert weather.query == f"key={SECRET}"
    assert next(r for r in tool_endpoint.requests if r.path == "/echo").headers[
        "Authorization"
    ] == (f"Bearer {SECRET}")

    outputs: dict[str, Any] = {
        "llm requests (tools offered, results read)": llm_server.requests,
        "chat log": chat_contents,
        # Each event as Python shows it (its data holds objects: the tools,
        # the prompt, the chat log's content).
        "traces": [repr(trace._events) for trace in async_get_traces()],
        "events": [event.data for event in events],
        "log": caplog.text,
    }
    # The echo's result reached the model with the key replaced.
    tool_results = [
        m["content"] for m in llm_server.requests[1]["messages"] if m["role"] == "tool"
    ]
    assert any("Bearer ***" in text for text in tool_results), tool_results
    assert any("Error: HTTP 401" in text for text in tool_results), tool_results

    assert await async_setup_component(hass, "diagnostics", {})
    outputs["diagnostics"] = await get_diagnostics_for_config_entry(
        hass, hass_client, setup_integration
    )
    assert outputs["diagnostics"]["options"]["secrets"] == ["weather_key"]
    outputs["get_tools"] = await call_service(hass, "get_tools")
    outputs["run_tool"] = await call_service(hass, "run_tool", {"tool": "echo"})
    client = await hass_client()
    response = await client.get(f"/api/{DOMAIN}/tools")
    outputs["REST GET (admin)"] = await response.json()
    # The reference is shown to administrators, never the value.
    assert "{secret:weather_key}" in outputs["REST GET (admin)"]["tools"][0]["url"]

    assert "get_weather" in outputs["traces"][-1]  # the trace of this turn
    for where, value in outputs.items():
        text = value if isinstance(value, str) else json.dumps(value, default=str)
        assert SECRET not in text, f"the secret leaked into {where}"


async def test_the_model_cannot_fill_a_secret(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """An argument named like the secret fills nothing: the stored value is sent,
    and the secret is no parameter the model is offered."""
    llm_server.add(
        tool_calls_stream(("echo", {"weather_key": "model-made-up"})),
        text_stream("Done."),
    )
    await converse(hass, "Echo")
    offered = {t["function"]["name"]: t for t in llm_server.requests[0]["tools"]}
    assert "secret" not in json.dumps(offered["get_weather"]["function"])
    echo = next(r for r in tool_endpoint.requests if r.path == "/echo")
    assert echo.headers["Authorization"] == f"Bearer {SECRET}"
    assert echo.query == f"appid={SECRET}&weather_key=model-made-up"


async def test_set_tools_refuses_an_undefined_secret(
    hass: HomeAssistant, setup_integration: MockConfigEntry, tool_endpoint: ToolEndpoint
) -> None:
    """A replacement naming a secret the entry lacks is refused, naming tool and
    field; the tools stay as they were."""
    tool = {
        "name": "hue",
        "url": f"{tool_endpoint.url}/api/{{secret:hue_user}}/lights",
        "method": "GET",
    }
    with pytest.raises(ServiceValidationError) as info:
        await call_service(hass, "set_tools", {"tools": [tool]})
    assert "tool #0 'hue': url: secret 'hue_user' is not defined" in str(info.value)
    active = await call_service(hass, "get_tools")
    assert [t["name"] for t in active["tools"]] == ["get_weather", "echo", "refused"]


async def test_rest_post_refuses_an_undefined_secret(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    hass_client: ClientSessionGenerator,
) -> None:
    """The REST endpoint answers 400 naming tool, field and secret."""
    client = await hass_client()
    body = [
        {
            "name": "hue",
            "url": "http://hue.lan/api",
            "headers": {"X-Key": "{secret:nope}"},
        }
    ]
    response = await client.post(f"/api/{DOMAIN}/tools", json=body)
    assert response.status == 400
    error = (await response.json())["error"]
    assert error == "tool #0 'hue': headers.X-Key: secret 'nope' is not defined"


async def test_tools_file_with_an_undefined_secret_is_a_repair_issue(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    config_dir: Any,
    issue_registry: ir.IssueRegistry,
) -> None:
    """The file is not used; Repairs names the tool, field and secret."""
    (config_dir / "tools.json").write_text(
        json.dumps(
            [
                {
                    "name": "hue_lights",
                    "url": "http://hue.lan/api/{secret:hue_user}/lights",
                    "method": "GET",
                }
            ]
        ),
        encoding="utf-8",
    )
    hass.config_entries.async_update_entry(
        config_entry, options={**config_entry.options, "tools_file": "tools.json"}
    )
    await load_integration(hass)
    issue = issue_registry.async_get_issue(
        DOMAIN, f"tools_file_{config_entry.entry_id}"
    )
    assert issue is not None
    assert issue.translation_placeholders is not None
    assert (
        "tool #0 'hue_lights': url: secret 'hue_user' is not defined"
        in issue.translation_placeholders["error"]
    )
    active = await call_service(hass, "get_tools")
    assert "hue_lights" not in [t["name"] for t in active["tools"]]
    # Define the secret: after the reload the file is used and the issue gone.
    hass.config_entries.async_update_entry(
        config_entry,
        options={
            **config_entry.options,
            "secrets": {"weather_key": SECRET, "hue_user": "hue-user-1"},
        },
    )
    await hass.async_block_till_done()
    assert (
        issue_registry.async_get_issue(DOMAIN, f"tools_file_{config_entry.entry_id}")
        is None
    )
    active = await call_service(hass, "get_tools")
    assert "hue_lights" in [t["name"] for t in active["tools"]]
