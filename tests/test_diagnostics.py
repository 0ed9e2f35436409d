"""Config entry diagnostics: useful, and without a single secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from homeassistant.const import CONF_API_KEY
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from custom_components.http_tools_agent.const import CONF_BASE_URL
from custom_components.http_tools_agent.redact import redact_tools, redact_url

from .kit import call_service, converse, load_integration
from .servers import FakeLLMServer, ToolEndpoint, text_stream, tool_calls_stream

API_KEY = "sk-very-secret-api-key"
HEADER_SECRET = "hdr-secret-value-42"
FILE_HEADER_SECRET = "file-header-secret-77"
OVERRIDE_SECRET = "override-secret-99"
URL_SECRET = "url-secret-query-5"
ARG_SECRET = "argument-token-secret-3"
SECRETS = (
    API_KEY,
    HEADER_SECRET,
    FILE_HEADER_SECRET,
    OVERRIDE_SECRET,
    URL_SECRET,
    ARG_SECRET,
)


@pytest.fixture
def tools(tool_endpoint: ToolEndpoint) -> list[dict[str, Any]]:
    """Tools whose headers and URL carry secrets."""
    return [
        {
            "name": "get_weather",
            "description": "Weather.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
            },
            "url": f"{tool_endpoint.url}/weather/{{city}}?format=3&apikey={URL_SECRET}",
            "method": "GET",
            "headers": {"X-Api-Key": HEADER_SECRET},
        },
        {
            "name": "broken",
            "description": "Always fails.",
            "parameters": {
                "type": "object",
                "properties": {"token": {"type": "string"}},
            },
            "url": f"{tool_endpoint.url}/fail",
            "method": "GET",
            "headers": {"Authorization": "Bearer {token}"},
        },
    ]


@pytest.fixture
async def loaded_entry(
    hass: HomeAssistant,
    config_entry: MockConfigEntry,
    llm_server: FakeLLMServer,
    config_dir: Path,
) -> MockConfigEntry:
    """An entry with an API key and a tools file, loaded."""
    llm_server.api_key = API_KEY
    (config_dir / "tools.json").write_text(
        json.dumps(
            [
                {
                    "name": "from_file",
                    "url": "https://example.org/x",
                    "headers": {"X-Token": FILE_HEADER_SECRET},
                }
            ]
        ),
        encoding="utf-8",
    )
    hass.config_entries.async_update_entry(
        config_entry,
        data={CONF_BASE_URL: llm_server.base_url, CONF_API_KEY: API_KEY},
        options={**config_entry.options, "tools_file": "tools.json"},
    )
    await load_integration(hass)
    return config_entry


async def test_diagnostics_redact_every_secret(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    loaded_entry: MockConfigEntry,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
) -> None:
    """API key, header values, URL credentials: none leaks; the rest is there."""
    assert await async_setup_component(hass, "diagnostics", {})
    # A failed tool run whose token went into a header.
    llm_server.add(
        tool_calls_stream(("broken", {"token": ARG_SECRET})),
        text_stream("It failed."),
    )
    await converse(hass, "Try it")
    assert tool_endpoint.requests[-1].headers["Authorization"] == (
        f"Bearer {ARG_SECRET}"
    )

    diagnostics = await get_diagnostics_for_config_entry(
        hass, hass_client, loaded_entry
    )

    dumped = json.dumps(diagnostics)
    for secret in SECRETS:
        assert secret not in dumped, secret
    assert diagnostics["data"] == {
        CONF_BASE_URL: llm_server.base_url,
        CONF_API_KEY: "**REDACTED**",
    }
    options_tools = diagnostics["options"]["tools"]
    assert options_tools[0]["headers"] == {"X-Api-Key": "**REDACTED**"}
    assert options_tools[0]["url"].endswith(
        "/weather/{city}?format=3&apikey=**REDACTED**"
    )
    assert options_tools[1]["headers"] == {"Authorization": "**REDACTED**"}
    assert diagnostics["tools"] == {
        "active": ["from_file", "get_weather", "broken"],
        "disabled": [],
        "secrets_used": [],
        "source": "options",
        "enabled": True,
        "enabled_mode": "auto",
        "options_tools": ["get_weather", "broken"],
        "file_tools": ["from_file"],
        "tools_file": "tools.json",
        "tools_file_error": None,
    }
    assert diagnostics["settings"] == {
        "max_tool_iterations": 4,
        "tool_timeout": 15.0,
        "tool_result_max_chars": 2000,
        "allowed_hosts": "any",
    }
    errors = diagnostics["recent_errors"]
    assert [e["kind"] for e in errors] == ["tool:broken"]
    assert "HTTP 500" in errors[0]["message"]
    assert diagnostics["agents"][0]["data"]["model"] == "local"


async def test_diagnostics_override_and_file_problem(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    loaded_entry: MockConfigEntry,
    config_dir: Path,
) -> None:
    """The source of a runtime override and a broken tools file are shown."""
    assert await async_setup_component(hass, "diagnostics", {})
    (config_dir / "tools.json").write_text("[{", encoding="utf-8")
    assert await hass.config_entries.async_reload(loaded_entry.entry_id)
    await hass.async_block_till_done()
    await call_service(
        hass,
        "set_tools",
        {
            "tools": [
                {
                    "name": "guest",
                    "url": "https://example.org/guest",
                    "headers": {"X-Secret": OVERRIDE_SECRET},
                }
            ]
        },
    )

    diagnostics = await get_diagnostics_for_config_entry(
        hass, hass_client, loaded_entry
    )

    assert OVERRIDE_SECRET not in json.dumps(diagnostics)
    assert diagnostics["tools"]["active"] == ["guest"]
    assert diagnostics["tools"]["source"] == "request"
    assert diagnostics["tools"]["file_tools"] == []
    assert "not valid JSON" in diagnostics["tools"]["tools_file_error"]


async def test_diagnostics_of_an_unloaded_entry(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    loaded_entry: MockConfigEntry,
) -> None:
    """Configuration is still shown (redacted) when the entry is not loaded."""
    assert await async_setup_component(hass, "diagnostics", {})
    assert await hass.config_entries.async_unload(loaded_entry.entry_id)
    diagnostics = await get_diagnostics_for_config_entry(
        hass, hass_client, loaded_entry
    )
    assert diagnostics["state"] == "not_loaded"
    assert "tools" not in diagnostics
    for secret in SECRETS:
        assert secret not in json.dumps(diagnostics)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://a/b?format=3", "https://a/b?format=3"),
        ("https://a/b?token=abc&q={q}", "https://a/b?token=**REDACTED**&q={q}"),
        ("https://a/b?api_key={key}", "https://a/b?api_key={key}"),
        ("https://user:pw@a/b", "https://**REDACTED**@a/b"),
        ("https://a/b?Secret=x#frag", "https://a/b?Secret=**REDACTED**#frag"),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
    ],
)
def test_redact_url(url: str, expected: str) -> None:
    """Credentials in URLs are hidden, placeholders and plain values kept."""
    assert redact_url(url) == expected


def test_redact_tools_hides_bodies_passwords_and_steps() -> None:
    """A body's fixed credential-like values, an `auth` password and every
    step's headers, URL and body are hidden; placeholders and secret
    references stay (they are no secret)."""
    tools: list[dict[str, Any]] = [
        {
            "name": "push",
            "url": "https://api.pushover.net/1/messages.json",
            "body_format": "form",
            "body": {"token": "azGDORePK8", "user": "{secret:user}", "message": "{m}"},
            "auth": {"type": "basic", "username": "admin", "password": "hunter2"},
        },
        {
            "name": "composite",
            "steps": [
                {
                    "name": "login",
                    "url": "https://h/login?apikey=abc",
                    "headers": {"X-Key": "k1"},
                    "body": {"password": "plain", "nested": {"api_key": "k2"}},
                }
            ],
        },
    ]

    redacted = redact_tools(tools)

    dumped = json.dumps(redacted)
    for secret in ("azGDORePK8", "hunter2", "abc", "k1", "plain", "k2"):
        assert secret not in dumped, secret
    assert redacted[0]["body"]["user"] == "{secret:user}"
    assert redacted[0]["body"]["message"] == "{m}"
    assert redacted[0]["auth"]["username"] == "admin"
    assert tools[0]["body"]["token"] == "azGDORePK8"  # the input is not changed
