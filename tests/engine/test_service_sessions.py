"""Logins kept across calls, against services that check them as Pi-hole v6
and Frigate's authenticated port do (`tests/service_sessions.py`): the
server counts logins; a second call reuses the session; a session the
service ended (401) logs in again once; a wrong password is said naming
the tool and the step, without the secret; the tools' logins are logged out
when the store is closed."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.executor import (
    Outcome,
    ToolRunResult,
    run_tool,
)
from custom_components.http_tools_agent.engine.sessions import SessionStore
from tests.service_cases import Case, ServiceServer, load_cases, serve, tools_at

SESSION_CASES = [
    case for case in load_cases() if any(r.login for _, r, _ in case.routes)
]


class Clock:
    """A clock the test moves."""

    def __init__(self) -> None:
        """At zero."""
        self.now = 0.0

    def __call__(self) -> float:
        """The time."""
        return self.now


async def call(
    case: Case,
    service: ServiceServer,
    session: aiohttp.ClientSession,
    store: SessionStore,
    *,
    tool: str | None = None,
    secrets: dict[str, str] | None = None,
) -> ToolRunResult:
    definition = tools_at(case.service, service.url)[tool or case.tool]
    return await run_tool(
        session,
        definition,
        case.arguments,
        secrets=case.secrets if secrets is None else secrets,
        sessions=store,
    )


def targets(service: ServiceServer) -> list[str]:
    return [request.target for request in service.arrived]


def test_pi_hole_and_frigate_have_session_logins() -> None:
    """Both services' tools log in once per session."""
    assert {case.service for case in SESSION_CASES} == {"pi_hole", "frigate"}


@pytest.mark.parametrize("case", SESSION_CASES, ids=lambda case: case.name)
async def test_a_second_call_reuses_the_session(
    case: Case, service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """One login for two calls: the second sends only its own request."""
    serve(service, case)
    store = SessionStore()
    first = await call(case, service, session, store)
    login, request = (e.target for e in case.requests)
    assert targets(service) == [login, request]
    service.arrived.clear()

    second = await call(case, service, session, store)

    assert targets(service) == [request]
    assert service.sessions.logins == 1
    assert (second.ok, second.text) == (True, first.text)


@pytest.mark.parametrize("case", SESSION_CASES, ids=lambda case: case.name)
async def test_a_session_the_service_ended_logs_in_again_once(
    case: Case, service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """The service answers 401 to the kept session: one new login, and the
    request again, and the user hears the answer."""
    serve(service, case)
    store = SessionStore()
    await call(case, service, session, store)
    service.sessions.expire()
    service.arrived.clear()

    result = await call(case, service, session, store)

    login, request = (e.target for e in case.requests)
    assert targets(service) == [request, login, request]
    assert service.sessions.logins == 2
    assert result.ok, result.text
    assert case.needle in result.text


@pytest.mark.parametrize("case", SESSION_CASES, ids=lambda case: case.name)
async def test_a_wrong_password_names_the_tool_and_the_step(
    case: Case, service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """The login is refused: the error says which tool and step, and what
    the service said, never the password; nothing is kept."""
    serve(service, case)
    store = SessionStore()
    wrong = dict.fromkeys(case.secrets, "not-the-password")
    if "frigate_user" in wrong:
        wrong["frigate_user"] = case.secrets["frigate_user"]

    result = await call(case, service, session, store, secrets=wrong)

    assert result.ok is False
    assert (result.outcome, result.status, result.step) == (
        Outcome.HTTP_ERROR,
        401,
        "login",
    )
    assert result.text.startswith(
        f"Error: step 'login' of tool '{case.tool}' failed: the login was "
        "refused (check its secrets): HTTP 401"
    )
    assert "not-the-password" not in result.text
    assert "not-the-password" not in (result.error or "")
    assert targets(service) == [case.requests[0].target]
    assert len(store) == 0


async def test_the_session_is_never_sent_after_a_refused_retry(
    service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """A service that refuses the new session too: the call fails after one
    new login (no loop), naming the step."""
    case = next(c for c in SESSION_CASES if c.tool == "pihole_blocked_today")
    serve(service, case)
    store = SessionStore()
    await call(case, service, session, store)
    service.sessions.expire()
    guarded = service.routes_by_path["/api/stats/summary"]
    service.routes_by_path["/api/stats/summary"] = type(guarded)(
        status=403, body=b'{"error":{"key":"forbidden"}}', method="GET"
    )
    service.arrived.clear()

    result = await call(case, service, session, store)

    assert targets(service) == [
        "GET /api/stats/summary",
        "POST /api/auth",
        "GET /api/stats/summary",
    ]
    assert result.text.startswith("Error: step 'summary' failed: HTTP 403")


async def test_the_tools_of_one_service_share_its_login(
    service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """Pi-hole's two tools send the same login: one session for both (it
    allows 16)."""
    pause, summary = (c for c in SESSION_CASES if c.service == "pi_hole")
    serve(service, pause)
    for path, route, _ in summary.routes:
        service.routes_by_path[path] = route
    store = SessionStore()

    await call(pause, service, session, store)
    result = await call(summary, service, session, store)

    assert service.sessions.logins == 1
    assert result.speech == summary.speech


async def test_calls_at_once_log_in_once(
    service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """Three calls at the same time wait for one login."""
    case = next(c for c in SESSION_CASES if c.tool == "pihole_blocked_today")
    serve(service, case)
    store = SessionStore()

    results = await asyncio.gather(
        *(call(case, service, session, store) for _ in range(3))
    )

    assert [r.ok for r in results] == [True, True, True]
    assert service.sessions.logins == 1


async def test_an_expired_login_is_logged_out_and_made_again(
    service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """After `keep_seconds` the kept login is logged out (Pi-hole frees the
    seat) and the call logs in again."""
    case = next(c for c in SESSION_CASES if c.tool == "pihole_blocked_today")
    serve(service, case)
    clock = Clock()
    store = SessionStore(clock)
    await call(case, service, session, store)
    clock.now = 1499.0
    await call(case, service, session, store)
    assert service.sessions.logins == 1
    clock.now = 1500.0
    service.arrived.clear()

    result = await call(case, service, session, store)

    assert targets(service) == [
        "DELETE /api/auth",
        "POST /api/auth",
        "GET /api/stats/summary",
    ]
    assert (service.sessions.logins, service.sessions.logouts) == (2, 1)
    assert len(service.sessions.live) == 1
    assert result.ok


async def test_closing_the_store_logs_every_login_out(
    service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """Tools replaced: Pi-hole's session is deleted with its own id; Frigate
    (a JWT, no logout) is forgotten."""
    pihole = next(c for c in SESSION_CASES if c.tool == "pihole_blocked_today")
    frigate = next(c for c in SESSION_CASES if c.tool == "recent_events")
    serve(service, pihole)
    for path, route, _ in frigate.routes:
        service.routes_by_path[path] = route
    store = SessionStore()
    await call(pihole, service, session, store)
    await call(frigate, service, session, store)
    assert len(store) == 2
    sid = service.sessions.live.copy()
    service.arrived.clear()

    await store.async_close()

    assert targets(service) == ["DELETE /api/auth"]
    assert service.arrived[0].headers["X-FTL-SID"] in sid
    assert service.sessions.logouts == 1
    assert len(store) == 0
    assert repr(store) == "SessionStore(0 kept)"


@pytest.mark.parametrize("case", SESSION_CASES, ids=lambda case: case.name)
async def test_without_a_store_the_login_runs_on_every_call(
    case: Case, service: ServiceServer, session: aiohttp.ClientSession
) -> None:
    """No store (a caller that keeps nothing): each call logs in."""
    serve(service, case)
    definition = tools_at(case.service, service.url)[case.tool]
    for _ in range(2):
        result = await run_tool(
            session, definition, case.arguments, secrets=case.secrets
        )
        assert result.ok, result.text
    assert service.sessions.logins == 2
