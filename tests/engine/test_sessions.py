"""A step's `session` field (the tool's login kept across calls) and what a
step reads of an answer besides its JSON: `{header:step.Name}`,
`{cookie:step.name}` and the cookies a call's jar sends on."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinitionError,
    parse_tools,
)
from custom_components.http_tools_agent.engine.executor import run_tool
from custom_components.http_tools_agent.engine.hosts import HostPolicy
from custom_components.http_tools_agent.engine.sessions import (
    KeptLogin,
    SessionStore,
    new_jar,
)

from .conftest import RecordingServer

TOKEN = "tok-6f1d2a9c"


def login_tool(base: str, **login: Any) -> dict[str, Any]:
    return {
        "name": "status",
        "steps": [
            {
                "name": "login",
                "url": f"{base}/login",
                "method": "POST",
                "body": {"password": "{secret:pw}"},
                "session": {"keep_seconds": 600},
                **login,
            },
            {
                "name": "status",
                "url": f"{base}/status",
                "method": "GET",
                "headers": {"X-Token": "{login.token}"},
            },
        ],
    }


def problems(tool: dict[str, Any]) -> list[str]:
    with pytest.raises(ToolDefinitionError) as err:
        parse_tools([tool])
    return [f"{p.field}: {p.message}" for p in err.value.problems]


@pytest.mark.parametrize(
    ("session", "field"),
    [
        ({}, "steps[0].session.keep_seconds"),
        ({"keep_seconds": 0}, "steps[0].session.keep_seconds"),
        ({"keep_seconds": True}, "steps[0].session.keep_seconds"),
        ({"keep_seconds": 10**7}, "steps[0].session.keep_seconds"),
        ({"keep_seconds": 60, "keep": 1}, "steps[0].session.keep"),
        ("yes", "steps[0].session"),
        ({"keep_seconds": 60, "logout": []}, "steps[0].session.logout"),
        (
            {"keep_seconds": 60, "logout": {"url": "http://h/x", "verb": "DELETE"}},
            "steps[0].session.logout.verb",
        ),
    ],
)
def test_a_wrong_session_field_is_named(session: Any, field: str) -> None:
    """Each problem names its place inside the step."""
    tool = login_tool("http://h", session=session)
    assert any(p.startswith(f"{field}: ") for p in problems(tool))


def test_the_login_is_not_the_last_step_and_there_is_one() -> None:
    """The model never reads a login; a tool has one."""
    last = login_tool("http://h")
    last["steps"] = last["steps"][:1]
    assert problems(last) == [
        "steps[0].session: the login cannot be the last step: the steps after "
        "it use it, and the model never reads a login's answer"
    ]
    two = login_tool("http://h")
    two["steps"][1]["session"] = {"keep_seconds": 5}
    two["steps"].append({"name": "third", "url": "http://h/3", "method": "GET"})
    assert problems(two) == ["steps[1].session: a tool has one login"]


def test_the_logout_takes_no_argument_and_the_shape_no_login() -> None:
    """The logout is sent after the call (no argument); a shape never reads
    the session."""
    tool = login_tool("http://h")
    tool["parameters"] = {"type": "object", "properties": {"x": {"type": "string"}}}
    tool["steps"][1]["url"] = "http://h/status?x={x}"
    tool["steps"][0]["session"]["logout"] = {"url": "http://h/out?x={x}"}
    assert problems(tool) == [
        "steps[0].session.logout.url: placeholder '{x}' names no declared parameter"
    ]
    shaped = login_tool("http://h")
    shaped["response"] = {"fields": {"sid": "login.token"}}
    assert problems(shaped) == [
        "response.fields.sid: 'login.token' must start with a step's name "
        "('status'): the shape reads the steps' responses by name"
    ]


def test_a_session_round_trips() -> None:
    """`as_dict` gives back what was written."""
    tool = login_tool("http://h")
    tool["steps"][0]["session"]["logout"] = {
        "url": "http://h/logout",
        "method": "DELETE",
        "headers": {"X-Token": "{login.token}"},
        "body": {"all": False},
    }
    (definition,) = parse_tools([tool])
    steps = definition.as_dict()["steps"]
    assert steps[0]["session"] == tool["steps"][0]["session"]
    assert parse_tools([definition.as_dict()]) == [definition]


async def test_a_header_and_a_cookie_of_the_login_are_read(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """`{header:login.X-Subject-Token}` and `{cookie:login.csrftoken}` send
    what the login gave outside its body; the jar sends its cookies on."""
    server.reply(
        "/login",
        body=b"",
        headers={
            "X-Subject-Token": TOKEN,
            "Set-Cookie": "csrftoken=c5rf-44b1; Path=/",
        },
    )
    server.reply("/status", body=b'{"ok": true}')
    tool = login_tool(server.base)
    tool["steps"][1]["headers"] = {
        "X-Auth": "{header:login.x-subject-token}",
        "X-CSRFToken": "{cookie:login.csrftoken}",
    }
    (definition,) = parse_tools([tool])
    store = SessionStore()

    for _ in range(2):
        result = await run_tool(
            session, definition, {}, secrets={"pw": "hunter22"}, sessions=store
        )
        assert result.text == '{"ok":true}'

    assert [r.path for r in server.requests] == ["/login", "/status", "/status"]
    for sent in server.requests[1:]:
        assert sent.headers["X-Auth"] == TOKEN
        assert sent.headers["X-CSRFToken"] == "c5rf-44b1"
        assert sent.headers["Cookie"] == "csrftoken=c5rf-44b1"


async def test_what_the_login_lacks_is_said(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A header the login did not send: the step is named, with the header."""
    server.reply("/login", body=b"{}")
    tool = login_tool(server.base)
    tool["steps"][1]["headers"] = {"X-Auth": "{header:login.X-Subject-Token}"}
    (definition,) = parse_tools([tool])

    result = await run_tool(session, definition, {}, secrets={"pw": "hunter22"})

    assert result.text == (
        "Error: step 'status' was not sent: step 'login' gave no header 'x-subject-token'"
    )


async def test_a_service_that_echoes_the_session_shows_no_session(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """The session id, reused or new, is a secret in every text."""
    server.reply("/login", body=f'{{"token": "{TOKEN}"}}'.encode())
    server.reply("/status", status=500, body=f"bad token {TOKEN}".encode())
    (definition,) = parse_tools([login_tool(server.base)])
    store = SessionStore()

    for _ in range(2):
        result = await run_tool(
            session, definition, {}, secrets={"pw": "hunter22"}, sessions=store
        )
        assert result.text == "Error: step 'status' failed: HTTP 500 — bad token ***"
    assert [r.path for r in server.requests] == ["/login", "/status", "/status"]


async def test_nothing_kept_shows_in_a_repr() -> None:
    """Logs and diagnostics that print the store see a count."""
    kept = KeptLogin({"login": {"token": TOKEN}}, new_jar(), 10.0)
    store = SessionStore()
    store.keep("key", kept)
    assert TOKEN not in repr(kept)
    assert TOKEN not in repr(store)
    assert repr(store) == "SessionStore(1 kept)"


async def test_a_login_that_fails_otherwise_is_a_failing_step(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A 500 is no refusal; a 401 without a store is one, named as well."""
    (definition,) = parse_tools([login_tool(server.base)])
    server.reply("/login", status=500, body=b"down")
    result = await run_tool(
        session, definition, {}, secrets={"pw": "hunter22"}, sessions=SessionStore()
    )
    assert result.text == "Error: step 'login' failed: HTTP 500 — down"

    server.reply("/login", status=401, body=b"hunter22 is wrong")
    result = await run_tool(session, definition, {}, secrets={"pw": "hunter22"})
    assert result.text == (
        "Error: step 'login' of tool 'status' failed: the login was refused "
        "(check its secrets): HTTP 401 — *** is wrong"
    )


@pytest.mark.parametrize(
    "logout_url",
    [
        "http://127.0.0.1:{port}/out?t={{login.missing}}",
        # The same server by another name, which the host policy refuses.
        "http://localhost:{port}/out",
    ],
)
async def test_a_logout_that_cannot_be_sent_is_never_sent(
    server: RecordingServer, session: aiohttp.ClientSession, logout_url: str
) -> None:
    """A logout missing what it reads, or to a host the policy refuses: the
    session is forgotten without it."""
    server.reply("/login", body=f'{{"token": "{TOKEN}"}}'.encode())
    tool = login_tool(server.base)
    tool["steps"][0]["session"]["logout"] = {
        "url": logout_url.format(port=server.port),
        "method": "DELETE",
    }
    (definition,) = parse_tools([tool])
    store = SessionStore()
    result = await run_tool(
        session,
        definition,
        {},
        secrets={"pw": "hunter22"},
        sessions=store,
        hosts=HostPolicy.parse(["127.0.0.1"]),
    )
    assert result.ok
    assert len(store) == 1

    await store.async_close()

    assert [r.path for r in server.requests] == ["/login", "/status"]
    assert len(store) == 0
