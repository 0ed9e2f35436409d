"""A busy server (429, 503) or a dropped connection: reads and changes marked
idempotent are tried again within the tool's time limit, other changes never
(docs/tool-format.md, "What a tool does")."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
import time
from typing import Any

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.call_steps import Outcome
from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinition,
    parse_tools,
)
from custom_components.http_tools_agent.engine.executor import run_tool
from custom_components.http_tools_agent.engine.retries import (
    RETRY_DELAYS,
    retry_after,
)
from custom_components.http_tools_agent.engine.sessions import SessionStore

from .conftest import RecordingServer

# Short pauses keep the tests fast; the behaviour is the default's.
FAST = (0.05, 0.1)


def tool(server: RecordingServer, **fields: Any) -> ToolDefinition:
    """One validated tool on the recording server (GET /status by default)."""
    raw = {
        "name": "status",
        "description": "Read the printer's status.",
        "parameters": {"type": "object", "properties": {}},
        "url": server.base + "/status",
        "method": "GET",
        **fields,
    }
    return parse_tools([raw])[0]


async def test_a_read_that_gets_503_is_read_on_the_second_try(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    server.reply_once("/status", status=503, body=b"warming up")
    server.reply("/status", body=b'{"state":"printing"}')
    result = await run_tool(session, tool(server), {}, retry_delays=FAST)
    assert result.ok
    assert result.text == '{"state":"printing"}'
    assert result.retries == 1
    assert len(server.requests) == 2


async def test_429_waits_as_long_as_retry_after_says(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    server.reply_once("/status", status=429, headers={"Retry-After": "1"})
    server.reply("/status", body=b"idle")
    started = time.monotonic()
    result = await run_tool(session, tool(server), {}, retry_delays=FAST)
    waited = time.monotonic() - started
    assert result.text == "idle"
    assert result.retries == 1
    # The server's second, not the tool's own 0.05 s pause.
    assert 0.9 <= waited < 3


async def test_a_retry_after_past_the_time_limit_gives_the_error_at_once(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    server.reply_once(
        "/status", status=503, headers={"Retry-After": "30"}, body=b"busy"
    )
    server.reply("/status", body=b"idle")
    started = time.monotonic()
    result = await run_tool(session, tool(server, timeout=2), {}, retry_delays=FAST)
    assert time.monotonic() - started < 1
    assert result.text == "Error: HTTP 503 \u2014 busy"
    assert result.status == 503
    assert result.outcome is Outcome.HTTP_ERROR
    assert result.retries == 0
    assert len(server.requests) == 1


async def test_a_retry_after_date_is_honoured(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    later = datetime.now(UTC) + timedelta(minutes=5)
    server.reply_once(
        "/status",
        status=503,
        headers={"Retry-After": format_datetime(later, usegmt=True)},
    )
    server.reply("/status", body=b"idle")
    result = await run_tool(session, tool(server, timeout=3), {}, retry_delays=FAST)
    # Five minutes do not fit in three seconds: the 503 stands.
    assert result.status == 503
    assert len(server.requests) == 1


def test_retry_after_reads_seconds_and_dates() -> None:
    now = datetime(2026, 12, 3, 5, 0, tzinfo=UTC)
    assert retry_after({"Retry-After": "2"}, now) == 2.0
    assert retry_after({"Retry-After": "Thu, 03 Dec 2026 05:00:07 GMT"}, now) == 7.0
    assert retry_after({"Retry-After": "Thu, 03 Dec 2026 04:59:00 GMT"}, now) == 0.0
    # A date with no zone (`-0000`) is read as GMT.
    assert retry_after({"Retry-After": "Thu, 03 Dec 2026 05:00:03 -0000"}, now) == 3.0
    assert retry_after({"Retry-After": "soon"}, now) is None
    assert retry_after({}, now) is None


async def test_a_dropped_connection_is_tried_again(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """aiohttp itself resends a GET once on a dropped connection (RFC 9112
    9.3.1.1); the second drop is ours to try again."""
    server.reply_once("/status", drop=True)
    server.reply_once("/status", drop=True)
    server.reply("/status", body=b"idle")
    result = await run_tool(session, tool(server), {}, retry_delays=FAST)
    assert result.ok
    assert result.text == "idle"
    assert result.retries == 1
    assert len(server.requests) == 3


async def test_a_dropped_post_marked_idempotent_is_tried_again(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    server.reply_once("/status", drop=True)
    server.reply("/status", body=b"set")
    definition = tool(server, method="POST", idempotent=True)
    result = await run_tool(session, definition, {}, retry_delays=FAST)
    assert result.text == "set"
    assert result.retries == 1
    assert len(server.requests) == 2


async def test_a_change_is_never_sent_twice(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    server.reply("/status", body=b"done")
    for method in ("POST", "PUT", "PATCH", "DELETE"):
        server.requests.clear()
        server.reply_once("/status", status=503, body=b"busy")
        result = await run_tool(
            session, tool(server, method=method), {}, retry_delays=FAST
        )
        assert result.text == "Error: HTTP 503 \u2014 busy", method
        assert result.retries == 0
        assert [r.method for r in server.requests] == [method]


async def test_a_dropped_post_is_not_sent_again(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    server.reply_once("/status", drop=True)
    server.reply("/status", body=b"done")
    result = await run_tool(session, tool(server, method="POST"), {}, retry_delays=FAST)
    assert result.outcome is Outcome.UNREACHABLE
    assert result.text.startswith("Error: tool request failed: ")
    assert len(server.requests) == 1


async def test_a_change_marked_idempotent_is_tried_again(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    server.reply_once("/status", status=503)
    server.reply("/status", body=b"set")
    definition = tool(server, method="POST", idempotent=True)
    result = await run_tool(session, definition, {"level": 3}, retry_delays=FAST)
    assert result.text == "set"
    assert result.retries == 1
    assert [(r.method, r.body) for r in server.requests] == [
        ("POST", b'{"level":3}'),
        ("POST", b'{"level":3}'),
    ]


async def test_a_get_that_acts_is_not_tried_again(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """ntfy's publish-by-GET: `read_only: false` says it acts."""
    server.reply_once("/status", status=503)
    server.reply("/status", body=b"sent")
    result = await run_tool(
        session, tool(server, read_only=False), {}, retry_delays=FAST
    )
    assert result.status == 503
    assert len(server.requests) == 1


async def test_three_busy_answers_give_up_naming_the_status(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    server.reply("/status", status=503, body=b"overloaded")
    result = await run_tool(session, tool(server), {}, retry_delays=FAST)
    assert not result.ok
    assert result.text == "Error: HTTP 503 \u2014 overloaded"
    assert result.status == 503
    assert result.retries == 2
    assert len(server.requests) == 3


async def test_the_default_pauses_back_off(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    server.reply("/status", status=503)
    started = time.monotonic()
    result = await run_tool(session, tool(server), {})
    waited = time.monotonic() - started
    assert result.retries == len(RETRY_DELAYS) == 2
    assert sum(RETRY_DELAYS) <= waited < sum(RETRY_DELAYS) + 1.5


async def test_a_composite_step_is_tried_again_on_its_own(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    server.reply("/login", body=b'{"token":"abc123"}')
    server.reply_once("/jobs", status=503)
    server.reply("/jobs", body=b'{"jobs":[1,2]}')
    definition = parse_tools(
        [
            {
                "name": "jobs",
                "description": "List the jobs.",
                "parameters": {"type": "object", "properties": {}},
                "steps": [
                    {
                        "name": "login",
                        "url": server.base + "/login",
                        "method": "POST",
                        "session": {"keep_seconds": 60},
                    },
                    {
                        "name": "list",
                        "url": server.base + "/jobs",
                        "method": "GET",
                        "headers": {"Authorization": "Bearer {login.token}"},
                    },
                ],
            }
        ]
    )[0]
    result = await run_tool(
        session, definition, {}, sessions=SessionStore(), retry_delays=FAST
    )
    assert result.text == '{"jobs":[1,2]}'
    assert result.ok
    assert result.retries == 1
    assert [r.path for r in server.requests] == ["/login", "/jobs", "/jobs"]


@pytest.mark.parametrize("status", [500, 502, 504])
async def test_other_errors_are_not_tried_again(
    server: RecordingServer, session: aiohttp.ClientSession, status: int
) -> None:
    server.reply_once("/status", status=status)
    server.reply("/status", body=b"idle")
    result = await run_tool(session, tool(server), {}, retry_delays=FAST)
    assert result.status == status
    assert len(server.requests) == 1
