"""Running tools against a real aiohttp server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
import socket
import tracemalloc
from typing import Any

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.call_steps import scrub
from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinition,
    parse_tools,
)
from custom_components.http_tools_agent.engine.executor import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_CHARS,
    DEFAULT_TIMEOUT,
    TRUNCATION_SUFFIX,
    Outcome,
    ToolRunResult,
    run_tool,
    truncate,
)

from .conftest import RecordingServer

EXAMPLE_FILE = Path(__file__).resolve().parents[2] / "tools.example.json"
EXAMPLE_HOSTS = (
    "https://api.example.local",
    "https://internal.example.local",
    "https://httpbin.org",
    "https://wttr.in",
    "https://geocoding-api.open-meteo.com",
    "https://api.open-meteo.com",
)


def example_tools(base: str) -> dict[str, ToolDefinition]:
    """tools.example.json with every URL pointed at the local server."""
    raw = json.loads(EXAMPLE_FILE.read_text(encoding="utf-8"))
    requests = [r for item in raw for r in (item, *item.get("steps", [])) if "url" in r]
    for item in requests:
        for host in EXAMPLE_HOSTS:
            if item["url"].startswith(host + "/"):
                item["url"] = base + item["url"].removeprefix(host)
                break
        else:
            pytest.fail(f"unexpected host in {item['url']}")
    return {d.name: d for d in parse_tools(raw)}


def tools_of(*items: dict[str, Any]) -> dict[str, ToolDefinition]:
    """Validated definitions by name."""
    return {d.name: d for d in parse_tools(list(items))}


def test_constants() -> None:
    """The public defaults."""
    assert DEFAULT_TIMEOUT == 15.0
    assert DEFAULT_MAX_CHARS == 2000
    assert DEFAULT_MAX_BYTES == 1_048_576
    assert TRUNCATION_SUFFIX == "\u2026 [truncated]"


@pytest.mark.parametrize(
    ("text", "limit", "expected", "cut"),
    [
        ("abc", 3, "abc", False),
        ("", 0, "", False),
        ("a" * 20, 20, "a" * 20, False),
        ("a" * 21, 20, "aaaaaaa… [truncated]", True),
        ("a" * 21, 13, "… [truncated]", True),
        ("a" * 21, 5, "… [truncated]", True),
    ],
)
def test_truncate(text: str, limit: int, expected: str, cut: bool) -> None:
    """The suffix counts toward the limit."""
    assert truncate(text, limit) == (expected, cut)
    if cut and limit >= len(TRUNCATION_SUFFIX):
        assert len(expected) == limit


async def test_rest_surface_of_the_guide(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """The request the tool format documents for these arguments, exactly."""
    tools = example_tools(server.base)
    server.reply("/api/items/5", body=b'{"id":"5","name":"Milk","qty":2}')
    calls: list[tuple[str, dict[str, Any]]] = [
        ("list_items", {"limit": 10}),
        ("get_item", {"id": "5"}),
        ("add_item", {"name": "Milk"}),
        ("update_item", {"id": "5", "qty": 2}),
        ("replace_item", {"id": 5, "name": "Milk"}),
        ("delete_item", {"id": "5"}),
        ("item_exists", {"id": "5"}),
    ]
    results = [await run_tool(session, tools[name], args) for name, args in calls]
    seen = [(r.target, r.body) for r in server.requests]
    assert seen == [
        ("GET /api/items?limit=10", b""),
        ("GET /api/items/5", b""),
        ("POST /api/items", b'{"name":"Milk"}'),
        ("PATCH /api/items/5", b'{"qty":2}'),
        ("PUT /api/items/5", b'{"name":"Milk"}'),
        ("DELETE /api/items/5", b""),
        ("HEAD /api/items/5", b""),
    ]
    body_verbs = {"POST", "PATCH", "PUT"}
    for request in server.requests:
        has_json = request.headers.get("Content-Type") == "application/json"
        assert has_json == (request.method in body_verbs), request.target
    assert [r.ok for r in results] == [True] * 7
    assert [r.status for r in results] == [200] * 7
    assert results[0].text == "ok"
    assert results[1].text == '{"id":"5","name":"Milk","qty":2}'
    assert results[6].text == "HTTP 200"
    assert results[6].method == "HEAD"
    assert all(r.error is None and not r.truncated for r in results)


async def test_item_exists_not_found(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """HEAD 404: the documented error text with an empty body."""
    tools = example_tools(server.base)
    server.reply("/api/items/9", status=404, body=b"no such item")
    result = await run_tool(session, tools["item_exists"], {"id": "9"})
    assert result.text == "Error: HTTP 404 \u2014 "
    assert (result.ok, result.status, result.error) == (False, 404, "HTTP 404")


async def test_get_weather_example(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """City in the path (encoded), format=3 kept, reply as text."""
    tools = example_tools(server.base)
    reply = "São Paulo: ☀️ +25°C"
    server.reply("/S%C3%A3o%20Paulo", body=reply.encode())
    result = await run_tool(session, tools["get_weather"], {"city": "São Paulo"})
    assert server.last.target == "GET /S%C3%A3o%20Paulo?format=3"
    assert server.last.body == b""
    assert result == ToolRunResult(
        tool="get_weather",
        text=reply,
        ok=True,
        method="GET",
        status=200,
        truncated=False,
        duration=result.duration,
        error=None,
        bytes_read=len(reply.encode()),
        outcome=Outcome.DONE,
        # What aiohttp's server declares for bytes it was given untyped.
        content_type="application/octet-stream",
    )
    assert 0 < result.duration < 5


async def test_create_note_and_webhook_examples(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Header placeholder consumed (not in the body); fixed headers sent."""
    tools = example_tools(server.base)
    note = await run_tool(
        session, tools["create_note"], {"token": "tok-123", "text": "Buy milk"}
    )
    assert note.ok
    assert server.last.target == "POST /api/notes"
    assert server.last.headers["Authorization"] == "Bearer tok-123"
    assert server.last.body == b'{"text":"Buy milk"}'
    hook = await run_tool(session, tools["send_webhook"], {"message": "Door open"})
    assert hook.ok
    assert server.last.target == "POST /post"
    assert server.last.headers["X-Tool"] == "audio-agent-engine"
    assert server.last.headers["Content-Type"] == "application/json"
    assert server.last.body == b'{"message":"Door open"}'


async def test_open_meteo_pair(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Arguments appended after the URL's own query."""
    tools = example_tools(server.base)
    await run_tool(session, tools["geocode_city"], {"name": "São Paulo"})
    assert server.last.target == (
        "GET /v1/search?count=1&language=en&name=S%C3%A3o%20Paulo"
    )
    await run_tool(
        session, tools["get_forecast"], {"latitude": 41.89, "longitude": 12.0}
    )
    assert server.last.target == (
        "GET /v1/forecast?current=temperature_2m,wind_speed_10m,weather_code"
        "&latitude=41.89&longitude=12"
    )


@pytest.mark.parametrize(
    ("method", "query", "body"),
    [
        ("GET", "q=x%20y&n=1&f=true", b""),
        ("HEAD", "q=x%20y&n=1&f=true", b""),
        ("OPTIONS", "q=x%20y&n=1&f=true", b""),
        ("TRACE", "q=x%20y&n=1&f=true", b""),
        ("DELETE", "q=x%20y&n=1&f=true", b""),
        ("POST", "", b'{"q":"x y","n":1.0,"f":true}'),
        ("PUT", "", b'{"q":"x y","n":1.0,"f":true}'),
        ("PATCH", "", b'{"q":"x y","n":1.0,"f":true}'),
        ("PURGE", "", b'{"q":"x y","n":1.0,"f":true}'),
        ("purge", "", b'{"q":"x y","n":1.0,"f":true}'),
    ],
)
async def test_verb_table(
    server: RecordingServer,
    session: aiohttp.ClientSession,
    method: str,
    query: str,
    body: bytes,
) -> None:
    """Every row of the verb table (docs/tool-format.md), custom verbs included.

    Query values are rendered as text (1.0 -> 1); a JSON body keeps the JSON.
    """
    tools = tools_of(
        {
            "name": "v",
            "url": server.base + "/v/{id}",
            "method": method,
            "parameters": {
                "type": "object",
                "properties": {"id": {}, "q": {}, "n": {}},
            },
        }
    )
    result = await run_tool(
        session, tools["v"], {"id": "7", "q": "x y", "n": 1.0, "f": True}
    )
    seen = server.last
    assert (seen.method, seen.path, seen.query, seen.body) == (
        method.upper(),
        "/v/7",
        query,
        body,
    )
    assert ("Content-Type" in seen.headers) == bool(body)
    assert result.ok
    assert result.method == method.upper()


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ("a/b", "/api/items/a%2Fb"),
        ("x?y#z", "/api/items/x%3Fy%23z"),
        ("user@evil", "/api/items/user%40evil"),
        ("%2e%2e", "/api/items/%252e%252e"),
        ("São Paulo", "/api/items/S%C3%A3o%20Paulo"),
        ("a b", "/api/items/a%20b"),
    ],
)
async def test_injection_neutralised_on_the_wire(
    server: RecordingServer, session: aiohttp.ClientSession, value: str, path: str
) -> None:
    """The server sees exactly the encoded path and no query."""
    tools = example_tools(server.base)
    result = await run_tool(session, tools["get_item"], {"id": value})
    assert result.ok
    assert (server.last.path, server.last.query) == (path, "")


@pytest.mark.parametrize("value", ["..", ".", "../admin", "x/../../etc"])
async def test_dot_segments_never_sent(
    server: RecordingServer, session: aiohttp.ClientSession, value: str
) -> None:
    """Traversal attempts are refused before any request."""
    tools = example_tools(server.base)
    result = await run_tool(session, tools["delete_item"], {"id": value})
    assert result.text == (
        "Error: invalid value for argument 'id' in tool 'delete_item': "
        "'.' and '..' are not allowed as a URL path segment"
    )
    assert (result.ok, result.status, result.method) == (False, None, "DELETE")
    assert result.error == result.text.removeprefix("Error: ")
    assert result.outcome is Outcome.NOT_SENT
    assert server.requests == []


async def test_query_injection_neutralised(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Values cannot add query parameters or a fragment."""
    tools = example_tools(server.base)
    await run_tool(session, tools["list_items"], {"search": "a&limit=999#x"})
    assert server.last.query == "search=a%26limit%3D999%23x"


async def test_header_injection_refused(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """CR/LF in a header value: error text, nothing sent, no secret echoed."""
    tools = example_tools(server.base)
    secret = "s3cr3t\r\nX-Admin: yes"
    result = await run_tool(
        session, tools["create_note"], {"token": secret, "text": "x"}
    )
    assert result.text == (
        "Error: invalid value for argument 'token' in tool 'create_note': "
        "header values cannot contain control characters (CR, LF, NUL)"
    )
    assert server.requests == []
    assert "s3cr3t" not in (result.error or "")


async def test_missing_argument(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A required argument missing: text for the model, nothing sent."""
    tools = example_tools(server.base)
    result = await run_tool(session, tools["get_weather"], {})
    assert (
        result.text == "Error: missing required argument 'city' for tool 'get_weather'"
    )
    assert result.error == "missing required argument 'city' for tool 'get_weather'"
    assert server.requests == []
    bad = await run_tool(session, tools["get_weather"], None)  # type: ignore[arg-type]
    assert bad.text == "Error: arguments for tool 'get_weather' must be a JSON object"


async def test_invalid_method_at_run_time(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A hand-built definition with a bad verb: the documented text."""
    definition = ToolDefinition(
        name="bad_verb",
        description="",
        parameters={"type": "object", "properties": {}},
        url=server.base + "/x",
        method="GE T",
        headers={},
        timeout=None,
    )
    result = await run_tool(session, definition, {})
    assert result.text == "Error: invalid HTTP method 'GE T' for tool 'bad_verb'"
    assert result.error == "invalid HTTP method"
    assert (result.tool, result.method) == ("bad_verb", None)
    assert server.requests == []


@pytest.mark.parametrize(
    ("status", "body", "text"),
    [
        (404, b"not found", "Error: HTTP 404 \u2014 not found"),
        (500, b'{"error":"boom"}', 'Error: HTTP 500 \u2014 {"error":"boom"}'),
        (503, b"", "Error: HTTP 503 \u2014 "),
        (301, b"moved", "Error: HTTP 301 \u2014 moved"),
    ],
)
async def test_http_errors(
    server: RecordingServer,
    session: aiohttp.ClientSession,
    status: int,
    body: bytes,
    text: str,
) -> None:
    """Non-2xx: 'Error: HTTP <status> — <body>' byte for byte."""
    tools = example_tools(server.base)
    server.reply("/api/items/1", status=status, body=body)
    result = await run_tool(session, tools["get_item"], {"id": "1"})
    assert result.text.encode() == text.encode()
    assert (result.ok, result.status, result.error) == (False, status, f"HTTP {status}")
    assert result.outcome is Outcome.HTTP_ERROR


async def test_http_error_body_truncated(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """The error text, prefix included, respects max_chars."""
    tools = example_tools(server.base)
    server.reply("/api/items/1", status=500, body=b"e" * 5000)
    result = await run_tool(session, tools["get_item"], {"id": "1"}, max_chars=100)
    assert len(result.text) == 100
    assert result.text == (
        "Error: HTTP 500 \u2014 " + "e" * (100 - 18 - 13) + "\u2026 [truncated]"
    )
    assert result.truncated
    assert result.status == 500


async def test_success_truncated_and_empty_bodies(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Long bodies cut to max_chars; empty 2xx bodies give 'HTTP <status>'."""
    tools = example_tools(server.base)
    server.reply("/api/items/1", body=b"a" * 3000)
    long = await run_tool(session, tools["get_item"], {"id": "1"})
    assert long.text == "a" * (2000 - 13) + TRUNCATION_SUFFIX
    assert long.truncated
    assert long.ok
    server.reply("/api/items/2", status=204, body=b"")
    empty = await run_tool(session, tools["delete_item"], {"id": "2"})
    assert (empty.text, empty.ok, empty.status) == ("HTTP 204", True, 204)


async def test_decoding(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """UTF-8 with replacement; a declared charset is honoured."""
    tools = example_tools(server.base)
    server.reply("/api/items/1", body=b"a\xffb")
    assert (await run_tool(session, tools["get_item"], {"id": "1"})).text == "a\ufffdb"
    server.reply(
        "/api/items/2",
        body=b"caf\xe9",
        headers={"Content-Type": "text/plain; charset=latin-1"},
    )
    assert (await run_tool(session, tools["get_item"], {"id": "2"})).text == "café"
    server.reply(
        "/api/items/3",
        body=b"x",
        headers={"Content-Type": "text/plain; charset=no-such-codec"},
    )
    assert (await run_tool(session, tools["get_item"], {"id": "3"})).text == "x"


@pytest.mark.parametrize(
    "charset", ["base64", "hex", "zlib", "rot13", "idna", "utf-16"]
)
async def test_hostile_charset_is_read_as_utf8(
    server: RecordingServer, session: aiohttp.ClientSession, charset: str
) -> None:
    """A charset that names a non-text codec (or one the body breaks) never
    raises: the body is read as UTF-8."""
    tools = example_tools(server.base)
    server.reply(
        "/api/items/1",
        body=b"milk x2",
        headers={"Content-Type": f"text/plain; charset={charset}"},
    )
    result = await run_tool(session, tools["get_item"], {"id": "1"})
    assert result.ok
    if charset != "utf-16":  # a real text codec: decoded as declared
        assert result.text == "milk x2"


async def test_byte_cap(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """max_bytes bounds the read; hitting it marks the text truncated."""
    tools = example_tools(server.base)
    server.reply("/api/items/1", body="é".encode() * 10)
    cut = await run_tool(
        session, tools["get_item"], {"id": "1"}, max_bytes=5, max_chars=1000
    )
    assert cut.text == "éé" + TRUNCATION_SUFFIX
    assert (cut.truncated, cut.bytes_read, cut.ok) == (True, 5, True)
    exact = await run_tool(
        session, tools["get_item"], {"id": "1"}, max_bytes=20, max_chars=1000
    )
    assert (exact.text, exact.truncated) == ("é" * 10, False)


async def test_huge_streamed_body(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """100 MB streamed: the client stops early, memory stays small."""
    total = 100 * 1024 * 1024
    tools = example_tools(server.base)
    server.reply("/api/items/big", stream_bytes=total)
    tracemalloc.start()
    try:
        result = await run_tool(session, tools["get_item"], {"id": "big"})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.ok
    assert result.truncated
    assert result.text == "x" * (2000 - 13) + TRUNCATION_SUFFIX
    assert result.bytes_read == 4 * 2000 + 16
    await asyncio.wait_for(server.stream.done.wait(), 10)
    assert server.stream.aborted
    assert server.stream.written < total // 4
    assert peak < 8 * 1024 * 1024


async def test_timeout(server: RecordingServer, session: aiohttp.ClientSession) -> None:
    """Slow server: the network error text says timeout."""
    tools = example_tools(server.base)
    server.reply("/api/items/slow", delay=2.0)
    result = await run_tool(session, tools["get_item"], {"id": "slow"}, timeout=0.2)
    assert result.text == "Error: tool request failed: timeout after 0.2 s"
    assert result.error == "timeout after 0.2 s"
    assert (result.ok, result.status, result.method) == (False, None, "GET")
    assert result.outcome is Outcome.UNREACHABLE
    assert 0.15 < result.duration < 1.5


async def test_definition_timeout_wins(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A per-tool timeout overrides the global one."""
    tools = tools_of(
        {"name": "slow", "url": server.base + "/slow", "method": "GET", "timeout": 0.2}
    )
    server.reply("/slow", delay=2.0)
    result = await run_tool(session, tools["slow"], {}, timeout=30)
    assert result.text == "Error: tool request failed: timeout after 0.2 s"


async def test_connection_refused(session: aiohttp.ClientSession) -> None:
    """A closed port: network error text, no header value in it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    tools = tools_of(
        {
            "name": "down",
            "url": f"http://127.0.0.1:{port}/x",
            "parameters": {"type": "object", "properties": {"key": {}}},
            "headers": {"X-Api-Key": "secret-{key}"},
        }
    )
    result = await run_tool(session, tools["down"], {"key": "k9"})
    assert result.text.startswith(
        f"Error: tool request failed: Cannot connect to host 127.0.0.1:{port}"
    )
    assert result.error == result.text.removeprefix("Error: tool request failed: ")
    assert result.outcome is Outcome.UNREACHABLE
    assert (result.ok, result.status, result.method) == (False, None, "POST")
    assert "secret" not in result.text


def test_scrub_removes_header_values() -> None:
    """Header values never appear in an error message."""
    message = "bad header value 'Bearer abc123' for host x"
    assert scrub(message, {"Authorization": "Bearer abc123", "X": "1"}) == (
        "bad header value '***' for host x"
    )


async def test_redirects(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Same host: followed (303 -> GET); another host: not followed."""
    tools = example_tools(server.base)
    server.reply("/api/items/1", status=302, headers={"Location": "/api/items/2"})
    server.reply("/api/items/2", body=b"two")
    followed = await run_tool(session, tools["get_item"], {"id": "1"})
    assert (followed.text, followed.status) == ("two", 200)
    assert [r.target for r in server.requests] == [
        "GET /api/items/1",
        "GET /api/items/2",
    ]

    server.requests.clear()
    server.reply("/api/items", status=303, headers={"Location": "/api/items/2"})
    created = await run_tool(session, tools["add_item"], {"name": "x"})
    assert created.text == "two"
    assert [(r.target, r.body) for r in server.requests] == [
        ("POST /api/items", b'{"name":"x"}'),
        ("GET /api/items/2", b""),
    ]

    server.requests.clear()
    elsewhere = f"http://localhost:{server.port}/steal"
    server.reply("/notes", status=307, body=b"moved", headers={"Location": elsewhere})
    note = await run_tool(
        session,
        tools_of(
            {
                "name": "n",
                "url": server.base + "/notes",
                "headers": {"X-Api-Key": "k"},
            }
        )["n"],
        {},
    )
    assert note.text == "Error: HTTP 307 \u2014 moved"
    assert note.error == "HTTP 307 (redirect to another host not followed)"
    assert [r.target for r in server.requests] == ["POST /notes"]

    server.requests.clear()
    server.reply("/loop", status=302, headers={"Location": "/loop"})
    loop = await run_tool(
        session, tools_of({"name": "l", "url": server.base + "/loop"})["l"], {}
    )
    assert loop.error == "HTTP 302 (more than 5 redirects)"
    assert len(server.requests) == 6


async def test_cancellation_propagates(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """CancelledError is the one exception run_tool lets through."""
    tools = example_tools(server.base)
    server.reply("/api/items/slow", delay=2.0)
    task = asyncio.ensure_future(run_tool(session, tools["get_item"], {"id": "slow"}))
    await asyncio.wait_for(server.arrived.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
