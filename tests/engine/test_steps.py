"""Composite tools and a tool's own sentence, against a server on 127.0.0.1:
geocode then forecast in one call, a failing step named, values of a step
placed without changing the next request, `speech` over the shaped result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import quote

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinition,
    ToolDefinitionError,
    parse_tools,
)
from custom_components.http_tools_agent.engine.executor import Outcome, run_tool
from custom_components.http_tools_agent.engine.speech import render_speech
from tests.service_cases import pointed

from .conftest import RecordingServer

EXAMPLE_FILE = Path(__file__).parents[2] / "tools.example.json"

GEOCODE = {
    "results": [
        {
            "name": "Berlin",
            "latitude": 52.52437,
            "longitude": 13.41053,
            "timezone": "Europe/Berlin",
            "country": "Deutschland",
        }
    ]
}
FORECAST = {
    "timezone": "Europe/Berlin",
    "current": {"time": "2024-05-10T14:15", "temperature_2m": 19.3, "weather_code": 61},
    "daily": {"time": ["2024-05-10"], "weather_code": [3]},
}
WMO = {"0": "clear sky", "1-3": "cloudy", "61": "light rain"}


def weather(server: RecordingServer, **extra: Any) -> ToolDefinition:
    """Open-Meteo's two requests as one tool, as tools.example.json has it."""
    raw: dict[str, Any] = {
        "name": "weather",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "steps": [
            {
                "name": "place",
                "method": "GET",
                "url": server.base + "/v1/search?name={city}&count=1",
            },
            {
                "name": "forecast",
                "method": "GET",
                "url": server.base + "/v1/forecast?latitude={place.results[0].latitude}"
                "&longitude={place.results[0].longitude}"
                "&timezone={place.results[0].timezone}&current=temperature_2m,weather_code",
            },
        ],
        "response": {
            "fields": {
                "city": "place.results[0].name",
                "temperature": "forecast.current.temperature_2m",
                "condition": "forecast.current.weather_code",
            },
            "values": {"forecast.current.weather_code": WMO},
        },
        "speech": "{city}: {condition}, {temperature} degrees",
    }
    raw.update(extra)
    (definition,) = parse_tools([raw])
    return definition


def serve_weather(server: RecordingServer, geocode: Any = GEOCODE) -> None:
    """Both answers of Open-Meteo."""
    json_type = {"Content-Type": "application/json"}
    server.reply("/v1/search", body=json.dumps(geocode).encode(), headers=json_type)
    server.reply("/v1/forecast", body=json.dumps(FORECAST).encode(), headers=json_type)


async def test_geocode_then_forecast_in_one_call(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """One call, two requests in order; the second reads the first's
    coordinates; the model reads one shaped result with the code in words,
    and the tool's sentence is ready to say."""
    serve_weather(server)
    definition = weather(server)

    result = await run_tool(session, definition, {"city": "Berlin"})

    assert [r.target for r in server.requests] == [
        "GET /v1/search?name=Berlin&count=1",
        "GET /v1/forecast?latitude=52.52437&longitude=13.41053"
        "&timezone=Europe%2FBerlin&current=temperature_2m,weather_code",
    ]
    assert result.outcome is Outcome.DONE
    assert (
        result.text == '{"city":"Berlin","temperature":19.3,"condition":"light rain"}'
    )
    assert result.speech == "Berlin: light rain, 19.3 degrees"
    assert definition.read_only


async def test_a_failing_step_is_named(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A step that answers an error stops the call, and its name is in the
    text; the later step is never sent."""
    server.reply("/v1/search", status=400, body=b'{"error":true,"reason":"bad"}')

    result = await run_tool(session, weather(server), {"city": "Berlin"})

    assert result.outcome is Outcome.HTTP_ERROR
    assert result.step == "place"
    assert (
        result.text
        == 'Error: step \'place\' failed: HTTP 400 — {"error":true,"reason":"bad"}'
    )
    assert result.speech is None
    assert len(server.requests) == 1


async def test_a_step_without_the_value_the_next_needs(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """No city found: the forecast is never asked for, and the model reads
    which step could not be built, why, and what the search gave."""
    serve_weather(server, geocode={"generationtime_ms": 0.4})

    result = await run_tool(session, weather(server), {"city": "Atlantis"})

    assert result.outcome is Outcome.NOT_SENT
    assert result.step == "forecast"
    assert result.text == (
        "Error: step 'forecast' was not sent: step 'place' gave no "
        "'results[0].latitude'. What the steps before it gave: "
        '{"place":{"generationtime_ms":0.4}}'
    )
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "hostile",
    ["52.5&longitude=0", "1\r\nX-Evil: 1", "{secret:key}", "../admin", '"}{'],
)
async def test_a_steps_value_never_changes_the_next_request(
    server: RecordingServer, session: aiohttp.ClientSession, hostile: str
) -> None:
    """What a service answered is a value in the next request, encoded where
    it stands, like an argument."""
    serve_weather(
        server, geocode={"results": [{**GEOCODE["results"][0], "latitude": hostile}]}
    )

    await run_tool(session, weather(server), {"city": "Berlin"})

    forecast = server.requests[1]
    assert forecast.query.count("&") == 3
    assert "\r" not in forecast.query
    assert "X-Evil" not in forecast.headers
    assert forecast.query.startswith("latitude=" + _encoded(hostile) + "&")


def _encoded(text: str) -> str:
    return quote(text, safe="")


async def test_the_example_files_composite_weather(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """tools.example.json's `weather_now`, pointed at the server: one call,
    the code in words, its sentence."""
    raw = next(
        tool
        for tool in json.loads(EXAMPLE_FILE.read_text(encoding="utf-8"))
        if tool["name"] == "weather_now"
    )
    for step in raw["steps"]:
        step["url"] = pointed(step["url"], server.base)
    (definition,) = parse_tools([raw])
    serve_weather(server)

    result = await run_tool(session, definition, {"city": "Berlin"})

    assert result.text == ('{"city":"Berlin","temperature":19.3,"condition":"rain"}')
    assert result.speech == "Berlin: rain, 19.3 degrees."


def test_steps_are_checked() -> None:
    """A reference to no earlier step, a step field at the top: each named."""
    raw = {
        "name": "t",
        "url": "http://h/x",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
        "steps": [
            {"name": "a", "url": "http://h/a?x={b.id}"},
            {"name": "b", "url": "http://h/b"},
        ],
    }

    with pytest.raises(ToolDefinitionError) as caught:
        parse_tools([raw])

    found = {(p.field, p.message.split(":")[0]) for p in caught.value.problems}
    assert ("url", "not allowed with steps") in found
    assert (
        "steps[0].url",
        "'{b.id}' names no earlier step (this is the first step)",
    ) in found


def test_steps_round_trip() -> None:
    """`as_dict` gives back the steps as written."""
    definition = weather(RecordingServer())
    (again,) = parse_tools([definition.as_dict()])
    assert again == definition


@pytest.mark.parametrize(
    ("template", "result", "said"),
    [
        ("{city}: {temp} degrees", {"city": "Rome", "temp": 21.0}, "Rome: 21 degrees"),
        ("Lights on: {on}", {"on": True}, "Lights on: yes"),
        ("{.}", "OK\n", "OK"),
        (
            "Next: {items[].title}",
            {"items": [{"title": "A"}, {"title": "B"}]},
            "Next: A, B",
        ),
        ("{{braces}} {a}", {"a": "{b}"}, "{braces} {b}"),
        ("{missing} here", {"a": 1}, None),
        ("Nothing: {items[].title}", {"items": []}, None),
    ],
)
def test_speech_over_the_result(template: str, result: Any, said: str | None) -> None:
    """Values are inserted as text, never read as a template; a field that is
    not there leaves the sentence to the model."""
    assert render_speech(template, result) == said


PAPERLESS_SEARCH = {
    "count": 3,
    "results": [
        {"id": 12, "title": "Beach house rental", "correspondent": None},
        {"id": 9, "title": "Ferry tickets", "correspondent": 4},
        {"id": 3, "title": "Sunscreen receipt", "correspondent": 2},
    ],
}


def paperless(server: RecordingServer, **extra: Any) -> ToolDefinition:
    """Search Paperless-ngx, then name the best hit's correspondent."""
    raw: dict[str, Any] = {
        "name": "find_document",
        "parameters": {
            "type": "object",
            "properties": {"query": {"type": "string"}},
            "required": ["query"],
        },
        "steps": [
            {
                "name": "search",
                "method": "GET",
                "url": server.base + "/api/documents/?query={query}",
            },
            {
                "name": "sender",
                "method": "GET",
                "url": server.base
                + "/api/correspondents/{search.results[0].correspondent}/",
            },
        ],
    }
    raw.update(extra)
    (definition,) = parse_tools([raw])
    return definition


async def test_a_null_read_by_a_later_step_keeps_the_earlier_results(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """The best hit has no correspondent: the step that could not be built
    is named with why, and the three documents found are still read."""
    server.reply(
        "/api/documents/",
        body=json.dumps(PAPERLESS_SEARCH).encode(),
        headers={"Content-Type": "application/json"},
    )

    result = await run_tool(session, paperless(server), {"query": "beach"})
    shaped = await run_tool(
        session,
        paperless(
            server,
            response={"path": "search.results", "fields": ["title"]},
        ),
        {"query": "beach"},
    )

    assert len(server.requests) == 2  # the correspondent never asked for
    assert result.outcome is Outcome.NOT_SENT
    assert result.step == "sender"
    assert result.text == (
        "Error: step 'sender' was not sent: step 'search' gave null for "
        "'results[0].correspondent'. What the steps before it gave: "
        + json.dumps({"search": PAPERLESS_SEARCH}, separators=(",", ":"))
    )
    assert shaped.text.endswith(
        'What the steps before it gave: [{"title":"Beach house rental"},'
        '{"title":"Ferry tickets"},{"title":"Sunscreen receipt"}]'
    )
