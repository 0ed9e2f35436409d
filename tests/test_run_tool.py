"""The run_tool action, TLS for LAN devices (verify_ssl) and the host policy."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError, Unauthorized
import pytest
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    async_capture_events,
)

from custom_components.http_tools_agent.const import EVENT_TOOL_CALL
from dev.loopback import free_port

from .kit import call_service, converse, speech, weather_tool
from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream
from .service_cases import ServiceServer
from .tls import HttpsToolEndpoint, LanDevice, self_signed_context

pytestmark = pytest.mark.usefixtures("setup_integration")


@pytest.fixture
async def https_endpoint(
    socket_enabled: None, tmp_path: Path
) -> AsyncGenerator[HttpsToolEndpoint]:
    """A LAN device: HTTPS on 127.0.0.1 with a self-signed certificate."""
    async with LanDevice(self_signed_context(tmp_path)) as server:
        yield server


@pytest.fixture
def extra_options() -> dict[str, Any]:
    """A secret, a short timeout."""
    return {"secrets": {"key": "k-123456"}, "tool_timeout": 1}


@pytest.fixture
def tools(
    tool_endpoint: ToolEndpoint, https_endpoint: HttpsToolEndpoint
) -> list[dict[str, Any]]:
    """Tools for every outcome."""
    base = tool_endpoint.url
    return [
        weather_tool(base),
        {"name": "broken", "url": f"{base}/fail", "method": "GET"},
        {
            "name": "item",
            "parameters": {
                "type": "object",
                "properties": {"id": {"type": "string"}},
                "required": ["id"],
            },
            "url": f"{base}/items/{{id}}",
            "method": "GET",
        },
        {"name": "nobody_home", "url": f"http://127.0.0.1:{free_port()}/x"},
        {"name": "lan_strict", "url": f"{https_endpoint.url}/weather/Lan"},
        {
            "name": "lan_device",
            "url": f"{https_endpoint.url}/weather/Lan",
            "method": "GET",
            "verify_ssl": False,
        },
        {"name": "keyed", "url": f"{base}/k?key={{secret:key}}", "method": "GET"},
        {"name": "off", "url": f"{base}/off", "method": "GET", "enabled": False},
    ]


async def run(hass: HomeAssistant, tool: str, **arguments: Any) -> dict[str, Any]:
    """Run a tool through the action; its response."""
    data: dict[str, Any] = {"tool": tool}
    if arguments:
        data["arguments"] = arguments
    response: dict[str, Any] = await call_service(hass, "run_tool", data)
    return response


async def test_run_tool_success(
    hass: HomeAssistant, tool_endpoint: ToolEndpoint, hass_admin_user: User
) -> None:
    """`{ok, status, result, elapsed_ms}`, the same request an agent makes, the
    same event."""
    events = async_capture_events(hass, EVENT_TOOL_CALL)
    response = await call_service(
        hass,
        "run_tool",
        {"tool": "get_weather", "arguments": '{"city": "Rome"}'},
        user=hass_admin_user,
    )
    assert response["ok"] is True
    assert response["status"] == 200
    assert response["result"] == "Rome: ☀️ +14°C"
    assert "speech" not in response
    assert isinstance(response["elapsed_ms"], int)
    assert response["elapsed_ms"] >= 0
    assert [r.target for r in tool_endpoint.requests] == ["GET /weather/Rome"]
    assert [(e.data["tool"], e.data["ok"], e.data["agent_id"]) for e in events] == [
        ("get_weather", True, None)
    ]


async def test_run_tool_gives_the_tools_sentence(
    hass: HomeAssistant, tool_endpoint: ToolEndpoint, hass_admin_user: User
) -> None:
    """A tool with its own sentence: the response carries it."""
    tool = {**weather_tool(tool_endpoint.url), "speech": "Now in {.}."}
    await call_service(hass, "set_tools", {"tools": [tool]})
    response = await call_service(
        hass,
        "run_tool",
        {"tool": "get_weather", "arguments": {"city": "Rome"}},
        user=hass_admin_user,
    )
    assert response["speech"] == "Now in Rome: ☀️ +14°C."


@pytest.mark.parametrize(
    ("tool", "arguments", "status", "text"),
    [
        ("get_wether", {}, None, "Error: unknown tool 'get_wether'"),
        ("broken", {}, 500, "Error: HTTP 500 — backend exploded"),
        ("item", {}, None, "Error: missing required argument 'id' for tool 'item'"),
        (
            "item",
            {"id": ".."},
            None,
            "Error: invalid value for argument 'id' in tool 'item': "
            "'.' and '..' are not allowed as a URL path segment",
        ),
        ("nobody_home", {}, None, "Error: tool request failed: Cannot connect"),
    ],
)
async def test_run_tool_errors_are_the_models_texts(
    hass: HomeAssistant,
    tool: str,
    arguments: dict[str, Any],
    status: int | None,
    text: str,
) -> None:
    """Each failure is `ok: false` with the text the model would read."""
    response = await run(hass, tool, **arguments)
    assert response["ok"] is False
    assert response["status"] == status
    assert response["result"].startswith(text), response["result"]


async def test_run_tool_reports_a_missing_secret(
    hass: HomeAssistant, setup_integration: MockConfigEntry
) -> None:
    """Secrets removed from storage by hand: the tool says which one is missing."""
    hass.config_entries.async_update_entry(
        setup_integration, options={**setup_integration.options, "secrets": {}}
    )
    await hass.async_block_till_done()
    response = await run(hass, "keyed")
    assert response == {
        "ok": False,
        "status": None,
        "result": "Error: secret 'key' of tool 'keyed' is not defined",
        "elapsed_ms": response["elapsed_ms"],
    }


async def test_run_tool_input_errors(
    hass: HomeAssistant, hass_read_only_user: User
) -> None:
    """Arguments that are no object fail the call; non-admins may not run it."""
    with pytest.raises(ServiceValidationError, match="must be an object"):
        await call_service(hass, "run_tool", {"tool": "item", "arguments": "[1]"})
    with pytest.raises(ServiceValidationError, match="not valid JSON"):
        await call_service(hass, "run_tool", {"tool": "item", "arguments": "{id"})
    with pytest.raises(Unauthorized):
        await call_service(
            hass, "run_tool", {"tool": "get_weather"}, user=hass_read_only_user
        )


async def test_disabled_tool_runs_but_is_not_offered(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """`enabled: false` keeps the tool out of the model's list; get_tools shows
    it with `enabled: false`; an administrator can still test it."""
    llm_server.add(text_stream("Hi."))
    await converse(hass, "Hello")
    offered = [t["function"]["name"] for t in llm_server.requests[0]["tools"]]
    assert "off" not in offered
    assert "get_weather" in offered
    listed = (await call_service(hass, "get_tools"))["tools"]
    assert next(t for t in listed if t["name"] == "off")["enabled"] is False
    assert (await run(hass, "off"))["ok"] is True


async def test_self_signed_certificate(
    hass: HomeAssistant, https_endpoint: HttpsToolEndpoint
) -> None:
    """`verify_ssl: false` reaches a LAN device with a self-signed certificate;
    the default refuses it with a readable reason."""
    response = await run(hass, "lan_device")
    assert (response["ok"], response["result"]) == (True, "Lan: ☀️ +14°C")

    response = await run(hass, "lan_strict")
    assert response["ok"] is False
    assert response["result"] == (
        f"Error: tool request failed: the TLS certificate of 127.0.0.1:"
        f"{https_endpoint.port} is not trusted (self-signed certificate); for a "
        'device with its own certificate, set "verify_ssl": false on the tool'
    )
    assert [r.path for r in https_endpoint.requests] == ["/weather/Lan"]


@pytest.mark.parametrize(
    ("allowed", "ok"),
    [
        ([], True),
        (["127.0.0.1"], True),
        (["127.0.0.0/8"], True),
        (["example.com", "*.lan"], False),
    ],
)
async def test_host_policy(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    allowed: list[str],
    ok: bool,
) -> None:
    """Requests to hosts outside `allowed_hosts` are refused, with a text for
    the model; nothing reaches the server."""
    hass.config_entries.async_update_entry(
        setup_integration,
        options={**setup_integration.options, "allowed_hosts": allowed},
    )
    await hass.async_block_till_done()
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})), text_stream("Done.")
    )
    assert speech(await converse(hass, "Weather in Rome?")) == "Done."
    result = next(
        m["content"] for m in llm_server.requests[1]["messages"] if m["role"] == "tool"
    )
    if ok:
        assert result == "Rome: ☀️ +14°C"
        assert len(tool_endpoint.requests) == 1
    else:
        assert result == "Error: host '127.0.0.1' is not allowed for tool 'get_weather'"
        assert tool_endpoint.requests == []


async def test_run_tool_timeout_and_host_policy(
    hass: HomeAssistant,
    setup_integration: MockConfigEntry,
    tool_endpoint: ToolEndpoint,
) -> None:
    """The tool's timeout and the entry's allowed hosts apply to run_tool too."""
    tool_endpoint.delay = 0.5
    await call_service(
        hass,
        "set_tools",
        {"tools": [{"name": "slow", "url": f"{tool_endpoint.url}/s", "timeout": 0.1}]},
    )
    response = await run(hass, "slow")
    assert (response["ok"], response["result"]) == (
        False,
        "Error: tool request failed: timeout after 0.1 s",
    )

    hass.config_entries.async_update_entry(
        setup_integration,
        options={**setup_integration.options, "allowed_hosts": ["*.lan"]},
    )
    await hass.async_block_till_done()
    response = await run(hass, "get_weather", city="Rome")
    assert response["result"] == (
        "Error: host '127.0.0.1' is not allowed for tool 'get_weather'"
    )
    assert [r.path for r in tool_endpoint.requests] == ["/s"]


async def test_digest_through_home_assistants_session(
    hass: HomeAssistant,
    hass_admin_user: User,
    setup_integration: MockConfigEntry,
    socket_enabled: None,
) -> None:
    """A Shelly with its password set: the digest challenge is answered on
    Home Assistant's own session (its middlewares kept), the password from
    the secrets."""
    async with ServiceServer() as shelly:
        shelly.route(
            "/rpc/Switch.GetStatus",
            body=b'{"id":0,"output":true}',
            content_type="application/json",
            digest=("admin", "plug-password"),
        )
        tool = {
            "name": "plug",
            "url": f"{shelly.url}/rpc/Switch.GetStatus?id=0",
            "method": "GET",
            "auth": {
                "type": "digest",
                "username": "admin",
                "password": "{secret:shelly}",
            },
        }
        hass.config_entries.async_update_entry(
            setup_integration,
            options={
                **setup_integration.options,
                "secrets": {"shelly": "plug-password"},
                "tools": [tool],
            },
        )
        await hass.async_block_till_done()
        response = await call_service(
            hass, "run_tool", {"tool": "plug"}, user=hass_admin_user
        )

    assert (response["ok"], response["result"]) == (True, '{"id":0,"output":true}')
    assert len(shelly.arrived) == 2
