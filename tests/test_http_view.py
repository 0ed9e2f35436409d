"""GET/POST /api/http_tools_agent/tools with real HA authentication."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from .kit import call_service
from .servers import ToolEndpoint

URL = "/api/http_tools_agent/tools"

pytestmark = pytest.mark.usefixtures("setup_integration")


def wttr_tool() -> list[dict[str, Any]]:
    """The curl example body of docs/automations.md."""
    return [
        {
            "name": "get_weather",
            "description": "Current weather for a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
            "url": "https://wttr.in/{city}?format=3",
            "method": "GET",
        }
    ]


async def test_get_reports_active_tools(hass_client: ClientSessionGenerator) -> None:
    """GET answers 200 {ok, count, source, tools}."""
    client = await hass_client()
    response = await client.get(URL)
    assert response.status == 200
    body = await response.json()
    assert body["ok"] is True
    assert body["count"] == 2
    assert body["source"] == "options"
    assert [t["name"] for t in body["tools"]] == ["get_weather", "send_webhook"]
    assert body["tools"][1]["headers"] == {"X-Tool": "http-tools-agent"}


async def test_post_replaces_tools_then_get_reports_them(
    hass: HomeAssistant, hass_client: ClientSessionGenerator
) -> None:
    """POST an array of tools: 200, source request; GET agrees; service too."""
    client = await hass_client()
    response = await client.post(
        URL,
        data=json.dumps(wttr_tool()),
        headers={"Content-Type": "application/json"},
    )
    assert response.status == 200
    body = await response.json()
    assert body == {
        "ok": True,
        "count": 1,
        "source": "request",
        "enabled": True,
        "tools": wttr_tool(),
    }
    assert await (await client.get(URL)).json() == body
    assert await call_service(hass, "get_tools") == body


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"", "empty"),
        (b"   \n", "empty"),
        (b"\xff\xfe[]", "not valid UTF-8"),
        (b"[{", "not valid JSON"),
        (b'{"name": "get_weather"}', "must be a JSON array, got object"),
        (b"[]", "holds no definition"),
        (
            b'[{"name": "get_weather", "url": "https://wttr.in/{town}"}]',
            "tool #0 'get_weather': url: placeholder '{town}' names no declared",
        ),
        (
            b'[{"name": "a b", "url": "https://x/"}]',
            "tool #0: name: 'a b' may only contain",
        ),
    ],
)
async def test_post_bad_body_is_400_and_keeps_tools(
    hass_client: ClientSessionGenerator, body: bytes, fragment: str
) -> None:
    """Every bad body is a 400 naming the problem; the tools stay active."""
    client = await hass_client()
    response = await client.post(URL, data=body)
    assert response.status == 400
    answer = await response.json()
    assert answer["ok"] is False
    assert fragment in answer["error"]

    after = await (await client.get(URL)).json()
    assert after["source"] == "options"
    assert after["count"] == 2


async def test_non_admin_can_get_but_not_post(
    hass_client_no_auth: ClientSessionGenerator, hass_read_only_access_token: str
) -> None:
    """A read-only user's token: GET 200, POST 403 and nothing changes."""
    client = await hass_client_no_auth()
    headers = {"Authorization": f"Bearer {hass_read_only_access_token}"}

    response = await client.get(URL, headers=headers)
    assert response.status == 200
    body = await response.json()
    assert [t["name"] for t in body["tools"]] == ["get_weather", "send_webhook"]
    # Header values may be credentials: only administrators see them.
    assert body["tools"][1]["headers"] == {"X-Tool": "**REDACTED**"}

    response = await client.post(URL, data=json.dumps(wttr_tool()), headers=headers)
    assert response.status == 403
    assert (await response.json())["ok"] is False

    after = await (await client.get(URL, headers=headers)).json()
    assert after["source"] == "options"


async def test_no_token_is_401(hass_client_no_auth: ClientSessionGenerator) -> None:
    """Without a token nothing is answered."""
    client = await hass_client_no_auth()
    assert (await client.get(URL)).status == 401
    assert (await client.post(URL, data=json.dumps(wttr_tool()))).status == 401


async def test_entry_not_loaded_is_503(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    config_entry: MockConfigEntry,
) -> None:
    """An unloaded entry: 503 for GET and POST, with and without an id."""
    client = await hass_client()
    assert await hass.config_entries.async_unload(config_entry.entry_id)

    for method in ("get", "post"):
        for query in ("", f"?config_entry_id={config_entry.entry_id}"):
            response = await client.request(
                method, URL + query, data=json.dumps(wttr_tool())
            )
            assert response.status == 503, (method, query)
            body = await response.json()
            assert body["ok"] is False
            assert "unavailable" in body["error"]


async def test_unknown_entry_id_is_404(hass_client: ClientSessionGenerator) -> None:
    """An id naming nothing: 404."""
    client = await hass_client()
    response = await client.get(URL, params={"config_entry_id": "nope"})
    assert response.status == 404
    assert "nope" in (await response.json())["error"]


async def test_two_entries_pick_with_query_parameter(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    config_entry: MockConfigEntry,
    second_entry: MockConfigEntry,
    tool_endpoint: ToolEndpoint,
) -> None:
    """Several loaded entries: 400 without config_entry_id, 200 with it."""
    client = await hass_client()

    response = await client.get(URL)
    assert response.status == 400
    assert "config_entry_id" in (await response.json())["error"]

    response = await client.post(
        URL,
        params={"config_entry_id": second_entry.entry_id},
        data=json.dumps(wttr_tool()),
    )
    assert response.status == 200
    assert (await response.json())["source"] == "request"

    first = await client.get(URL, params={"config_entry_id": config_entry.entry_id})
    assert (await first.json())["source"] == "options"
    second_now = await client.get(
        URL, params={"config_entry_id": second_entry.entry_id}
    )
    assert (await second_now.json())["tools"] == wttr_tool()


async def test_posted_array_works_as_file_and_service(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    config_entry: MockConfigEntry,
    config_dir: Path,
) -> None:
    """An array accepted here loads as a tools file and through the service."""
    body = json.dumps(wttr_tool())
    client = await hass_client()
    assert (await client.post(URL, data=body)).status == 200

    response = await call_service(hass, "set_tools", {"tools": body})
    assert response["tools"] == wttr_tool()

    (config_dir / "tools.json").write_text(body, encoding="utf-8")
    hass.config_entries.async_update_entry(
        config_entry, options={"tools": [], "tools_file": "tools.json"}
    )
    await hass.async_block_till_done()
    after = await (await client.get(URL)).json()
    assert after["source"] == "file"
    assert after["tools"] == wttr_tool()
