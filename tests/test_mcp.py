"""The HTTP tools over MCP: the `mcp` SDK's client against Home Assistant's
`mcp_server`, which serves the HTTP Tools API at `/api/mcp/<API id>`.

Home Assistant's HTTP server listens on 127.0.0.1 (the test client's real
socket); the client speaks Streamable HTTP with an admin's token, as Claude
Desktop or another agent would. It lists the HTTP tools with their risk
labels and calls them: a read runs, a tool that asks before it acts is
refused with the text its model reads.
"""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient
from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent
import pytest
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from .kit import API_ID, weather_tool
from .servers import ToolEndpoint
from .test_confirm import item_tools


@pytest.fixture
def tools(tool_endpoint: ToolEndpoint) -> list[dict[str, Any]]:
    """A read (weather), a delete that asks first, an add, a POST that always
    asks."""
    delete, add = item_tools(tool_endpoint.url)
    notify = {**add, "name": "notify_everyone", "confirm": "always"}
    return [weather_tool(tool_endpoint.url), delete, add, notify]


@pytest.mark.usefixtures("setup_integration")
async def test_an_mcp_client_sees_the_labels_and_calls_a_tool(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    hass_access_token: str,
    tool_endpoint: ToolEndpoint,
) -> None:
    """Every HTTP tool is listed with read-only, destructive, idempotent and
    open-world from its settings; the weather runs; the delete does not."""
    assert await async_setup_component(hass, "mcp_server", {})
    client: TestClient[Any, Any] = await hass_client()
    url = str(client.make_url(f"/api/mcp/{API_ID}"))
    headers = {"Authorization": f"Bearer {hass_access_token}"}

    async with (
        httpx.AsyncClient(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        weather = await session.call_tool("get_weather", {"city": "Rome"})
        delete = await session.call_tool("delete_item", {"item_id": "3"})

    labels = {
        name: (
            tool.annotations.readOnlyHint,
            tool.annotations.destructiveHint,
            tool.annotations.idempotentHint,
            tool.annotations.openWorldHint,
        )
        for name, tool in listed.items()
        if tool.annotations is not None
    }
    assert labels == {
        "get_weather": (True, False, True, True),
        "delete_item": (False, True, True, True),
        "add_item": (False, False, False, True),
        "notify_everyone": (False, True, False, True),
        "GetDateTime": (True, False, False, False),
    }
    assert isinstance(text := weather.content[0], TextContent)
    assert "Rome: ☀️ +14°C" in text.text
    assert isinstance(refused := delete.content[0], TextContent)
    assert "needs the user's confirmation" in refused.text
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
