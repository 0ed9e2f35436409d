"""JSON answers larger than the byte cap, from a server on 127.0.0.1: a
shape over a list reads them as they stream (the same answer as one read
whole), and what cannot be shaped is one line, never raw JSON."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinition,
    parse_tools,
)
from custom_components.http_tools_agent.engine.executor import Outcome, run_tool
from custom_components.http_tools_agent.engine.problems import FieldProblems
from custom_components.http_tools_agent.engine.responses import parse_response
from custom_components.http_tools_agent.engine.shapes import shape_answer
from custom_components.http_tools_agent.engine.stream_shape import StreamShaper

from .conftest import RecordingServer

CAP = 20_000
JSON_TYPE = {"Content-Type": "application/json; charset=utf-8"}

ENTITIES = [
    {
        "entity_id": f"{'binary_sensor' if n % 7 == 0 else 'sensor'}.thing_{n}",
        "state": "on" if n % 3 == 0 else str(n / 10),
        "attributes": {"friendly_name": f"Thing {n} «ü»", "note": "x" * 40},
        "last_changed": f"2025-12-{1 + n % 28:02d}T{n % 24:02d}:00:00+00:00",
    }
    for n in range(1500)
]
STATES = {
    "count": len(ENTITIES),
    "meta": {"page": 1, "of": [1, 2]},
    "data": {"states": ENTITIES},
}
SHAPES: list[dict[str, Any]] = [
    {
        "path": "data.states",
        "where": {"entity_id": {"contains": "binary_sensor"}, "state": "on"},
        "fields": {"name": "attributes.friendly_name"},
    },
    {
        "path": "data.states",
        "sort": {"by": "last_changed", "order": "desc"},
        "max_items": 3,
        "fields": ["entity_id", "last_changed"],
        "times": {"last_changed": {"unit": "iso", "show": "date"}},
    },
    {"path": "data.states", "where": {"state": {"above": 100}}, "count": True},
    {"path": "data.states", "last_items": 2, "fields": ["entity_id"]},
]


def tool(server: RecordingServer, **fields: Any) -> ToolDefinition:
    raw: dict[str, Any] = {"name": "t", "url": server.base + "/r", "method": "GET"}
    raw.update(fields)
    (definition,) = parse_tools([raw])
    return definition


@pytest.mark.parametrize("shape", SHAPES, ids=["where", "sort", "count", "last"])
async def test_a_shape_reads_a_list_larger_than_the_cap(
    server: RecordingServer, session: aiohttp.ClientSession, shape: dict[str, Any]
) -> None:
    """A 300 KB answer over a 20 KB cap: the model reads what the shape
    gives of the whole list, as if it had been read whole."""
    body = json.dumps(STATES, indent=1).encode()
    assert len(body) > 10 * CAP
    server.reply("/r", body=body, headers=JSON_TYPE)
    whole = await run_tool(session, tool(server, response=shape), {}, max_chars=5000)
    expected = shape_answer(STATES, parsed(shape))
    assert expected is not None

    result = await run_tool(
        session, tool(server, response=shape), {}, max_chars=5000, max_bytes=CAP
    )

    assert (result.ok, result.outcome) == (True, Outcome.DONE)
    assert result.text == expected[1] == whole.text
    assert not result.truncated
    # The list ends the last member the shape needs: read to its end.
    assert result.bytes_read > len(body) - 100


def parsed(raw: dict[str, Any]) -> Any:
    out = FieldProblems()
    shape = parse_response(raw, out)
    assert out.count == 0
    return shape


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_every_chunk_boundary_reads_the_same(size: int) -> None:
    """Numbers, escapes and multi-byte characters split between chunks."""
    body = json.dumps(
        {
            "skip": [1.5, {"a": '}]\\"'}],
            "list": [12345, -0.5e3, "é\\u00e9", None, [1], True],
        },
        ensure_ascii=False,
    ).encode()
    shape = parsed({"path": "list"})
    shaper = StreamShaper(shape, None, "utf-8")
    for at in range(0, len(body), size):
        if shaper.feed(body[at : at + size]):
            break
    shaper.close()
    assert shaper.answer() == shape_answer(json.loads(body), shape)


@pytest.mark.parametrize(
    ("body", "shape", "why"),
    [
        (
            b'{"data": {"states": {"a": 1}}}',
            {"path": "data.states"},
            "'data.states' is no list",
        ),
        (b'{"data": {}}', {"path": "data.states"}, "no 'data.states' in the response"),
        (b'[{"a": 1}, {"a": 2}', {}, "the answer ended before its list did"),
        (b'[{"a": 1} {"a": 2}]', {}, "it is not JSON"),
        (b'[{"a": 1}]', {"path": "[0]"}, "only member names are followed"),
    ],
)
def test_what_cannot_be_streamed_says_why(
    body: bytes, shape: dict[str, Any], why: str
) -> None:
    shaper = StreamShaper(parsed(shape), None, None)
    shaper.feed(body)
    shaper.close()
    assert shaper.answer() is None
    assert shaper.failure is not None
    assert why in shaper.failure


async def test_an_answer_that_cannot_be_shaped_is_one_line(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Home Assistant's 1.2 MB /api/states read by `[0]`, an item over the
    limit, a composite tool's answer over the cap: one line, never raw
    JSON, not ok (the request did run)."""
    body = json.dumps(ENTITIES).encode()
    server.reply("/r", body=body, headers=JSON_TYPE)
    indexed = await run_tool(
        session, tool(server, response={"path": "[0]"}), {}, max_bytes=CAP
    )
    server.reply(
        "/big", body=b'[{"blob": "' + b"x" * 1_100_000 + b'"}]', headers=JSON_TYPE
    )
    huge = await run_tool(
        session,
        tool(server, url=server.base + "/big", response={"fields": ["blob"]}),
        {},
        max_bytes=CAP,
    )
    steps = tool(
        server,
        url=None,
        method=None,
        steps=[{"name": "states", "url": server.base + "/r", "method": "GET"}],
        response={"path": "states", "max_items": 1},
    )
    composite = await run_tool(session, steps, {}, max_bytes=CAP)

    assert indexed.text == (
        "Error: the answer is too large to shape (more than 20 KB): its path "
        "reaches the list by an index or '[]'; only member names are followed "
        "in a streamed answer"
    )
    assert huge.text == (
        "Error: the answer is too large to shape (more than 20 KB): a value "
        "is larger than 1024 KB"
    )
    assert composite.text == (
        "Error: the answer is too large to shape (more than 20 KB): a shape "
        "over several steps reads each answer whole"
    )
    for result in (indexed, huge, composite):
        assert (result.ok, result.outcome, result.speech) == (False, Outcome.DONE, None)
        assert "entity_id" not in result.text


async def test_an_answer_cut_short_says_so(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A server that stops inside its list: the line says it ended early."""
    body = json.dumps(ENTITIES).encode()[:-1000]
    server.reply("/r", body=body, headers=JSON_TYPE)

    result = await run_tool(
        session, tool(server, response={"max_items": 1}), {}, max_bytes=CAP
    )

    assert result.text == (
        "Error: the answer is too large to shape (more than 20 KB): it is not "
        "JSON (or it was cut short)"
    )
    assert result.bytes_read == len(body)
