"""What the model reads of a response, served by a server on 127.0.0.1: by
content type (JSON compacted, text, HTML as its text, binary described), a
tool's shape (path, fields, items, codes into words, epoch times into local
times) and its own limit."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinition,
    ToolDefinitionError,
    parse_tools,
)
from custom_components.http_tools_agent.engine.executor import Outcome, run_tool

from .conftest import RecordingServer

EPISODES = [
    {
        "seriesId": 7,
        "seasonNumber": 2,
        "episodeNumber": number,
        "title": f"Episode {number}",
        "airDateUtc": f"2026-12-0{number}T02:00:00Z",
        "overview": "A long overview of what happens in this episode. " * 6,
        "hasFile": False,
        "monitored": True,
    }
    for number in range(1, 6)
]
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + bytes(range(256)) * 192
BAD_GATEWAY = (
    b"<html>\r\n<head><title>502 Bad Gateway</title>"
    b"<style>body{color:red}</style></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    b"<script>var tracking = 1;</script></body>\r\n</html>\r\n"
)


def tool(server: RecordingServer, **fields: Any) -> ToolDefinition:
    """A GET tool of the server's `/r`."""
    raw: dict[str, Any] = {"name": "t", "url": server.base + "/r", "method": "GET"}
    raw.update(fields)
    (definition,) = parse_tools([raw])
    return definition


def serve_json(server: RecordingServer, value: Any, indent: int | None = 2) -> None:
    """`/r` answers `value` as indented JSON (as many services write it)."""
    body = json.dumps(value, indent=indent).encode()
    server.reply("/r", body=body, headers={"Content-Type": "application/json"})


async def test_json_is_compacted(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Indentation never reaches the model: the same episodes in fewer
    characters, every value kept."""
    serve_json(server, EPISODES[:1])

    result = await run_tool(session, tool(server), {})

    assert result.outcome is Outcome.DONE
    assert result.text == json.dumps(EPISODES[:1], separators=(",", ":"))
    assert result.content_type == "application/json"


async def test_shape_picks_path_fields_and_items(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A path into the body, at most N items, named fields of each: three
    episodes' titles fit where the raw body kept one, and the model reads
    that the list held five."""
    serve_json(server, {"page": 1, "records": EPISODES})
    raw = await run_tool(session, tool(server), {}, max_chars=400)
    shaped_tool = tool(
        server,
        response={
            "path": "records",
            "max_items": 3,
            "fields": {"episode": "episodeNumber", "title": "title"},
        },
    )

    shaped = await run_tool(session, shaped_tool, {}, max_chars=400)

    assert raw.truncated
    assert "Episode 2" not in raw.text
    assert shaped.text == (
        '{"items":[{"episode":1,"title":"Episode 1"},{"episode":2,"title":"Episode 2"},'
        '{"episode":3,"title":"Episode 3"}],"of":5}'
    )
    assert not shaped.truncated


async def test_listed_fields_keep_dotted_paths(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Fields given as a list keep their dotted path as the name; an item
    without one is kept without it."""
    serve_json(server, [{"a": {"b": 1}, "c": 2}, {"c": 3}])

    result = await run_tool(
        session, tool(server, response={"fields": ["a.b", "c"]}), {}
    )

    assert result.text == '[{"a.b":1,"c":2},{"c":3}]'


async def test_a_path_that_finds_nothing_shows_the_body(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A service that explains itself in a 200 is heard."""
    serve_json(server, {"error": True, "reason": "no such city"}, indent=None)

    result = await run_tool(session, tool(server, response={"path": "results[0]"}), {})

    assert result.ok
    assert result.text == (
        'no \'results[0]\' in the response: {"error":true,"reason":"no such city"}'
    )


async def test_codes_become_words_ranges_included(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Exact codes first, then ranges; a code in no table stays as it is;
    every item of a list is translated."""
    serve_json(server, {"current": {"code": 3}, "daily": {"code": [0, 61, 95, 42]}})
    words = {"0": "clear sky", "1-3": "cloudy", "61-65": "rain", "95": "storm"}

    result = await run_tool(
        session,
        tool(server, response={"values": {"current.code": words, "daily.code": words}}),
        {},
    )

    assert json.loads(result.text) == {
        "current": {"code": "cloudy"},
        "daily": {"code": ["clear sky", "rain", "storm", 42]},
    }


async def test_epoch_and_iso_times_become_local_times(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Seconds, milliseconds and ISO times in the tool's time zone (or the
    caller's), said as a date and time, a time or a weekday."""
    serve_json(
        server,
        {
            "sunrise": 1764745200,
            "updated": 1764745200000,
            "air": "2025-12-03T07:00:00Z",
        },
    )
    shape = {
        "times": {
            "sunrise": {"unit": "s", "show": "time"},
            "updated": "ms",
            "air": {"unit": "iso", "show": "weekday"},
        }
    }

    in_rome = await run_tool(
        session, tool(server, response={**shape, "timezone": "Europe/Rome"}), {}
    )
    callers = await run_tool(
        session, tool(server, response=shape), {}, time_zone="America/New_York"
    )

    assert json.loads(in_rome.text) == {
        "sunrise": "08:00",
        "updated": "2025-12-03 08:00",
        "air": "Wednesday",
    }
    assert json.loads(callers.text)["sunrise"] == "02:00"


async def test_the_tools_own_limit(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """`max_chars` of the shape bounds what the model reads, instead of the
    server's setting."""
    serve_json(server, EPISODES)

    result = await run_tool(
        session, tool(server, response={"max_chars": 120}), {}, max_chars=5000
    )

    assert result.truncated
    assert len(result.text) == 120
    assert result.text.endswith("… [truncated]")


@pytest.mark.parametrize(
    ("content_type", "expected"),
    [
        ("image/jpeg", "image/jpeg, 48 KB"),
        ("application/octet-stream", "image/jpeg, 48 KB"),
        ("", "image/jpeg, 48 KB"),
    ],
)
async def test_binary_is_described_never_read(
    server: RecordingServer,
    session: aiohttp.ClientSession,
    content_type: str,
    expected: str,
) -> None:
    """A snapshot reaches the model as its type and size (sniffed when the
    server does not say), never as characters."""
    headers = {"Content-Type": content_type} if content_type else {}
    server.reply("/r", body=JPEG, headers=headers)

    result = await run_tool(session, tool(server), {})

    assert result.outcome is Outcome.DONE
    assert result.text == expected
    assert result.content_type == "image/jpeg"


async def test_pdf_and_audio_are_described(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Every binary type, whatever its bytes."""
    server.reply(
        "/r",
        body=b"%PDF-1.7\n" + b"x" * 3000,
        headers={"Content-Type": "application/pdf"},
    )
    pdf = await run_tool(session, tool(server), {})
    server.reply(
        "/r", body=b"ID3" + b"\x00" * 100, headers={"Content-Type": "audio/mpeg"}
    )
    audio = await run_tool(session, tool(server), {})

    assert pdf.text == "application/pdf, 3 KB"
    assert audio.text == "audio/mpeg, 103 bytes"


async def test_html_error_page_is_its_text(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A proxy's 502 page: its title and words, no tags, scripts or styles."""
    server.reply(
        "/r", status=502, body=BAD_GATEWAY, headers={"Content-Type": "text/html"}
    )

    result = await run_tool(session, tool(server), {})

    assert result.outcome is Outcome.HTTP_ERROR
    assert result.text == "Error: HTTP 502 — 502 Bad Gateway\nnginx"


async def test_a_debug_page_is_summarised(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A framework's 500 page (title, heading, the reason, then pages of
    traceback and settings): the model reads its first lines only."""
    trace = "".join(
        f"<li>File /app/views.py, line {n}, in handler</li>" for n in range(400)
    )
    page = (
        "<!DOCTYPE html><html><head><title>ProgrammingError at /api/documents/"
        "</title></head><body><h1>ProgrammingError at /api/documents/</h1>"
        '<pre class="exception_value">relation "documents_document" does not '
        f"exist</pre><h2>Traceback</h2><ul>{trace}</ul></body></html>"
    )
    server.reply(
        "/r", status=500, body=page.encode(), headers={"Content-Type": "text/html"}
    )

    result = await run_tool(session, tool(server), {}, max_chars=5000)

    assert result.text == (
        "Error: HTTP 500 — ProgrammingError at /api/documents/\n"
        'relation "documents_document" does not exist\nTraceback\n'
        "File /app/views.py, line 0, in handler"
    )


async def test_html_untyped_and_text_as_they_are(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A page sent without a type is still read as a page; plain text stays
    as it is."""
    server.reply(
        "/r", body=b"<!DOCTYPE html><html><body><p>Hi &amp; bye</p></body></html>"
    )
    page = await run_tool(session, tool(server), {})
    server.reply("/r", body=b"OK\n", headers={"Content-Type": "text/plain"})
    text = await run_tool(session, tool(server), {})

    assert page.text == "Hi & bye"
    assert text.text == "OK\n"


async def test_ndjson_is_a_list(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """ntfy's poll: one JSON object a line, read as a list the shape can cut."""
    lines = b'{"id":"a","message":"one"}\n{"id":"b","message":"two"}\n'
    server.reply("/r", body=lines, headers={"Content-Type": "application/x-ndjson"})

    result = await run_tool(
        session, tool(server, response={"path": "[-1]", "fields": ["message"]}), {}
    )

    assert result.text == '{"message":"two"}'


async def test_an_empty_body_says_its_status(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """OctoPrint's 204: nothing to read but that it worked."""
    server.reply("/r", status=204, body=b"")

    result = await run_tool(session, tool(server), {})

    assert (result.ok, result.text) == (True, "HTTP 204")


@pytest.mark.parametrize(
    ("response", "field", "message"),
    [
        ({"path": "a..b"}, "response.path", "'a..b' is not a path"),
        ({"fields": []}, "response.fields", "must not be empty"),
        ({"max_items": 0}, "response.max_items", "must be an integer from 1"),
        ({"values": {"code": {"5-1": "x"}}}, "response.values.code.5-1", "a range"),
        ({"times": {"t": "hours"}}, "response.times.t", "the unit is one of"),
        ({"timezone": "Mars/Base"}, "response.timezone", "is no IANA time zone"),
        ({"shape": 1}, "response.shape", "unknown field"),
        ({"where": []}, "response.where", "must be an object of paths"),
        ({"where": {"a..b": 1}}, "response.where.a..b", "is not a path"),
        (
            {"where": {"state": {"is": 1}}},
            "response.where.state.is",
            "unknown condition",
        ),
        (
            {"where": {"state": {"above": [1]}}},
            "response.where.state.above",
            "a number or a text",
        ),
        (
            {"where": {"state": {"present": "yes"}}},
            "response.where.state.present",
            "true or false",
        ),
        ({"where": {"state": {}}}, "response.where.state", "must not be empty"),
        (
            {"where": {"state": ["on", "off"]}},
            "response.where.state",
            "a value or an object",
        ),
        ({"sort": 3}, "response.sort", "must be a path or"),
        (
            {"sort": {"by": "a", "order": "down"}},
            "response.sort.order",
            '"asc" or "desc"',
        ),
        ({"sort": {"by": "a", "how": 1}}, "response.sort.how", "unknown field"),
        ({"last_items": 0}, "response.last_items", "an integer from 1 to 1000"),
        ({"max_items": 2, "last_items": 2}, "response.last_items", "not both"),
        ({"count": "yes"}, "response.count", "true or false"),
        ({"count": True, "sort": "a"}, "response.sort", "does not apply with count"),
    ],
)
def test_bad_shapes_name_their_field(
    response: dict[str, Any], field: str, message: str
) -> None:
    """Every mistake names the tool's field that has it."""
    raw = {"name": "t", "url": "http://h/r", "response": response}

    with pytest.raises(ToolDefinitionError) as caught:
        parse_tools([raw])

    (problem,) = caught.value.problems
    assert problem.field == field
    assert message in problem.message


def test_shape_round_trips() -> None:
    """`as_dict` gives back what was written."""
    raw = {
        "name": "t",
        "description": "",
        "parameters": {"type": "object", "properties": {}},
        "url": "http://h/r",
        "method": "GET",
        "response": {
            "path": "list",
            "fields": {"n": "name"},
            "max_items": 2,
            "values": {"code": {"0": "off", "1-9": "on"}},
            "times": {"t": "s", "d": {"unit": "iso", "show": "date"}},
            "timezone": "Europe/Rome",
            "max_chars": 500,
        },
    }

    (definition,) = parse_tools([raw])

    assert definition.as_dict() == raw


async def test_text_labelled_json_keeps_its_spaces(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A tool server answering a sentence as application/json: the model
    reads the sentence, not `Rome:sunny,21C`."""
    server.reply(
        "/r", body=b"Rome: sunny, 21 C", headers={"Content-Type": "application/json"}
    )

    result = await run_tool(session, tool(server), {})

    assert (result.ok, result.text) == (True, "Rome: sunny, 21 C")


async def test_an_all_day_date_stays_a_date(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A calendar's all-day event is a day, said without a midnight; a
    moment beside it is still said with its time."""
    serve_json(server, [{"start": "2025-12-04"}, {"start": "2025-12-04T18:30:00Z"}])

    result = await run_tool(
        session,
        tool(server, response={"times": {"start": "iso"}, "timezone": "Europe/Rome"}),
        {},
    )

    assert json.loads(result.text) == [
        {"start": "2025-12-04"},
        {"start": "2025-12-04 19:30"},
    ]


STATES = [
    {"entity_id": "binary_sensor.kitchen_window", "state": "on",
     "attributes": {"friendly_name": "Kitchen window", "device_class": "window"},
     "last_changed": "2025-12-03T07:10:00Z"},
    {"entity_id": "binary_sensor.garage_door", "state": "on",
     "attributes": {"friendly_name": "Garage door", "device_class": "door"},
     "last_changed": "2025-12-03T09:30:00Z"},
    {"entity_id": "binary_sensor.bath_window", "state": "off",
     "attributes": {"friendly_name": "Bath window", "device_class": "window"},
     "last_changed": "2025-12-02T21:00:00Z"},
    {"entity_id": "sensor.living_temperature", "state": "21.5",
     "attributes": {"friendly_name": "Living room", "unit_of_measurement": "°C"},
     "last_changed": "2025-12-03T08:00:00Z"},
    {"entity_id": "sensor.attic_temperature", "state": "14",
     "attributes": {"friendly_name": "Attic"},
     "last_changed": "2025-12-03T06:00:00Z"},
    {"entity_id": "sensor.cellar_temperature", "state": "unavailable",
     "attributes": {"friendly_name": "Cellar"},
     "last_changed": "2025-12-01T00:00:00Z"},
]  # fmt: skip
NAME = {"name": "attributes.friendly_name"}


async def shaped(
    server: RecordingServer, session: aiohttp.ClientSession, **response: Any
) -> str:
    """What the model reads of STATES under `response`."""
    serve_json(server, STATES)
    result = await run_tool(
        session, tool(server, response=response), {}, max_chars=5000
    )
    assert result.ok, result.text
    return result.text


@pytest.mark.parametrize(
    ("where", "names"),
    [
        # equal (text ignoring case), and two conditions together
        ({"state": "ON", "attributes.device_class": "window"}, ["Kitchen window"]),
        # contains: a text's part
        (
            {"entity_id": {"contains": "temperature"}},
            ["Living room", "Attic", "Cellar"],
        ),
        # above and below: numbers (a state "21.5" is one), a range
        ({"state": {"above": 15}}, ["Living room"]),
        ({"state": {"above": 10, "below": 20}}, ["Attic"]),
        # ISO times order as text
        (
            {"last_changed": {"above": "2025-12-03T08:00"}},
            ["Garage door", "Living room"],
        ),
        # present: a field there (not null) or not
        ({"attributes.unit_of_measurement": {"present": True}}, ["Living room"]),
        (
            {"attributes.device_class": {"present": False}},
            ["Living room", "Attic", "Cellar"],
        ),
    ],
)
async def test_where_keeps_the_items_whose_field_holds(
    server: RecordingServer,
    session: aiohttp.ClientSession,
    where: dict[str, Any],
    names: list[str],
) -> None:
    """ "Which windows are open?": the items whose value is, contains, is
    above or below, or has a field; the model reads how many there were."""
    text = await shaped(server, session, where=where, fields=NAME)

    assert json.loads(text) == {"items": [{"name": n} for n in names], "of": 6}


async def test_sort_then_the_first_or_last_items(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """ "What changed last?": sorted by a field, newest first, the first N;
    or the last N of the order; items without the field go last."""
    newest = await shaped(
        server,
        session,
        sort={"by": "last_changed", "order": "desc"},
        max_items=2,
        fields=NAME,
    )
    coldest = await shaped(
        server,
        session,
        where={"entity_id": {"contains": "temperature"}},
        sort="state",
        max_items=1,
        fields=NAME,
    )
    oldest_two = await shaped(
        server, session, sort="last_changed", last_items=2, fields=NAME
    )
    last = await shaped(server, session, last_items=1, fields=NAME)

    assert newest == '{"items":[{"name":"Garage door"},{"name":"Living room"}],"of":6}'
    # "unavailable" is no number: after the numbers.
    assert coldest == '{"items":[{"name":"Attic"}],"of":6}'
    assert oldest_two == (
        '{"items":[{"name":"Living room"},{"name":"Garage door"}],"of":6}'
    )
    assert last == '{"items":[{"name":"Cellar"}],"of":6}'


async def test_count_reads_a_number(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """ "How many windows are open?": the number of items `where` keeps."""
    serve_json(server, STATES)
    definition = tool(
        server,
        response={"where": {"state": "on"}, "count": True},
        speech="{.} open.",
    )

    result = await run_tool(session, definition, {})

    assert (result.text, result.speech) == ("2", "2 open.")


def test_picks_round_trip() -> None:
    """`as_dict` gives back where, sort, last_items and count as written."""
    response = {
        "path": "records",
        "where": {"state": "on", "temperature": {"above": 20, "below": 30}},
        "sort": {"by": "date", "order": "desc"},
        "last_items": 3,
    }
    (definition,) = parse_tools(
        [{"name": "t", "url": "http://h/r", "response": response}]
    )
    assert definition.response is not None
    assert definition.response.as_dict() == response
    (counted,) = parse_tools(
        [
            {
                "name": "t",
                "url": "http://h/r",
                "response": {"sort": "a", "where": {"b": {"present": True}}},
            }
        ]
    )
    assert counted.response is not None
    assert counted.response.as_dict() == {
        "sort": "a",
        "where": {"b": {"present": True}},
    }


async def test_contains_finds_an_item_of_a_list(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Paperless documents tagged "insurance" (tag names in a list); `count`
    and `last_items` come back from `as_dict` as written."""
    serve_json(
        server,
        [
            {"title": "Car policy", "tags": ["Insurance", "car"]},
            {"title": "Ferry", "tags": ["travel"]},
            {"title": "Home policy", "tags": ["insurance"]},
        ],
    )
    definition = tool(
        server,
        response={"where": {"tags": {"contains": "insurance"}}, "fields": ["title"]},
    )

    result = await run_tool(session, definition, {})

    assert (
        result.text
        == '{"items":[{"title":"Car policy"},{"title":"Home policy"}],"of":3}'
    )
    (counted,) = parse_tools(
        [{"name": "t", "url": "http://h/r", "response": {"count": True}}]
    )
    assert counted.response is not None
    assert counted.response.as_dict() == {"count": True}
