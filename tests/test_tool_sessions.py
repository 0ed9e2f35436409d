"""Logins kept across calls in Home Assistant: Pi-hole's tools log in once
for every call of the entry's tools, the session is logged out when the
tools are replaced or the entry unloads, and no diagnostics show it."""

from __future__ import annotations

from collections.abc import AsyncGenerator
import json
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.setup import async_setup_component
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.diagnostics import (
    get_diagnostics_for_config_entry,
)
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator

from .kit import call_service
from .service_cases import ServiceServer, load_cases, load_tools, serve

PASSWORD = "c0rrect h0rse"
CASES = [case for case in load_cases() if case.service == "pi_hole"]

pytestmark = pytest.mark.usefixtures("setup_integration")


@pytest.fixture
async def pi_hole(socket_enabled: None) -> AsyncGenerator[ServiceServer]:
    """Pi-hole on loopback: both tools' routes, its sessions counted."""
    async with ServiceServer() as server:
        serve(server, CASES[0])
        for path, route, _ in CASES[1].routes:
            server.routes_by_path[path] = route
        yield server


def _pointed(tools: list[dict[str, Any]], base: str) -> list[dict[str, Any]]:
    text = json.dumps(tools).replace("https://pi.hole", base)
    pointed_tools: list[dict[str, Any]] = json.loads(text)
    return pointed_tools


@pytest.fixture
def tools(pi_hole: ServiceServer) -> list[dict[str, Any]]:
    """Pi-hole's tools, as docs/services.md offers them."""
    return _pointed(load_tools("pi_hole"), pi_hole.url)


@pytest.fixture
def extra_options() -> dict[str, Any]:
    """Pi-hole's password."""
    return {"secrets": {"pihole_password": PASSWORD}}


async def run(hass: HomeAssistant, tool: str, **arguments: Any) -> dict[str, Any]:
    """Run a tool through the action; its response."""
    response: dict[str, Any] = await call_service(
        hass, "run_tool", {"tool": tool, "arguments": arguments}
    )
    return response


async def test_the_tools_share_one_login(
    hass: HomeAssistant, pi_hole: ServiceServer
) -> None:
    """Three calls of two tools: one login, one Pi-hole session."""
    first = await run(hass, "pihole_blocked_today")
    await run(hass, "pihole_pause", seconds=300)
    again = await run(hass, "pihole_blocked_today")

    assert first["ok"]
    assert again["ok"]
    assert again["speech"] == "6291 of 48213 queries were blocked."
    assert pi_hole.sessions.logins == 1
    assert [r.target for r in pi_hole.arrived].count("POST /api/auth") == 1


async def test_replacing_the_tools_logs_the_session_out(
    hass: HomeAssistant, pi_hole: ServiceServer, tools: list[dict[str, Any]]
) -> None:
    """`set_tools` drops the kept login: Pi-hole's seat is freed at once
    (DELETE /api/auth with the session's id) and the next call logs in."""
    await run(hass, "pihole_blocked_today")
    (sid,) = pi_hole.sessions.live

    await call_service(hass, "set_tools", {"tools": tools})
    await hass.async_block_till_done(wait_background_tasks=True)

    logout = pi_hole.arrived[-1]
    assert logout.target == "DELETE /api/auth"
    assert logout.headers["X-FTL-SID"] == sid
    assert pi_hole.sessions.live == set()
    await run(hass, "pihole_blocked_today")
    assert pi_hole.sessions.logins == 2


async def test_unloading_logs_out_and_diagnostics_show_no_session(
    hass: HomeAssistant,
    hass_client: ClientSessionGenerator,
    setup_integration: MockConfigEntry,
    pi_hole: ServiceServer,
) -> None:
    """Diagnostics name no session id nor the password; unloading the entry
    ends the session."""
    assert await async_setup_component(hass, "diagnostics", {})
    await run(hass, "pihole_blocked_today")
    (sid,) = pi_hole.sessions.live

    diagnostics = await get_diagnostics_for_config_entry(
        hass, hass_client, setup_integration
    )
    dumped = json.dumps(diagnostics)
    assert sid not in dumped
    assert PASSWORD not in dumped
    logout = diagnostics["options"]["tools"][0]["steps"][0]["session"]["logout"]
    assert logout["headers"] == {"X-FTL-SID": "**REDACTED**"}

    assert await hass.config_entries.async_unload(setup_integration.entry_id)

    assert pi_hole.arrived[-1].target == "DELETE /api/auth"
    assert pi_hole.sessions.logouts == 1
