"""Paths into a JSON document: one small syntax, read and never evaluated."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.http_tools_agent.engine.paths import (
    MISSING,
    Each,
    Index,
    Key,
    find,
    format_path,
    parse_path,
    transform,
)

WEATHER: dict[str, Any] = {
    "results": [
        {"name": "Berlin", "latitude": 52.52437, "postcodes": ["10967", "13347"]},
        {"name": "Bern", "latitude": 46.94809},
    ],
    "service_response": {"weather.home": {"forecast": [{"condition": "sunny"}]}},
    "rain": {"1h": 3.16},
    "client::display": {"contentType": "text/markdown"},
    "empty": None,
}


@pytest.mark.parametrize(
    ("text", "segments"),
    [
        ("results", (Key("results"),)),
        ("results[0].latitude", (Key("results"), Index(0), Key("latitude"))),
        ("results[-1]", (Key("results"), Index(-1))),
        ("results[].name", (Key("results"), Each(), Key("name"))),
        (
            'service_response["weather.home"]',
            (Key("service_response"), Key("weather.home")),
        ),
        ("[0].id", (Index(0), Key("id"))),
        ("rain.1h", (Key("rain"), Key("1h"))),
        ("client::display", (Key("client::display"),)),
        (".", ()),
    ],
)
def test_syntax(text: str, segments: tuple[object, ...]) -> None:
    """Keys, items, every item, quoted keys, the whole document."""
    assert parse_path(text) == segments
    assert parse_path(format_path(parse_path(text))) == segments


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "non-empty"),
        ("a..b", "unexpected '.'"),
        ("a.", "must stand between two keys"),
        (".a", "must stand between two keys"),
        ("a[x]", "use [n] for an item"),
        ("a[0", "is not closed"),
        ('a["b', "is not closed"),
        ("a b", "unexpected ' '"),
        ("a{b}", "unexpected '{'"),
        ("a" * 301, "at most 300 characters"),
        (".".join("a" * 33), "at most 32 segments"),
    ],
)
def test_refused(text: str, why: str) -> None:
    """A path that cannot be read says why."""
    with pytest.raises(ValueError, match=why.replace("[", r"\[")):
        parse_path(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("results[0].latitude", 52.52437),
        ("results[-1].name", "Bern"),
        ("results[].name", ["Berlin", "Bern"]),
        ("results[].postcodes[0]", ["10967"]),
        ('service_response["weather.home"].forecast[0].condition', "sunny"),
        ("rain.1h", 3.16),
        ("empty", None),
        ("results[2]", MISSING),
        ("results.name", MISSING),
        ("nothing", MISSING),
        ("results[0].name.first", MISSING),
    ],
)
def test_find(text: str, value: object) -> None:
    """A value, `null` as a value, MISSING where nothing is."""
    assert find(WEATHER, parse_path(text)) == value


def test_transform_copies() -> None:
    """A changed copy; the document itself is untouched; nothing there:
    the same document."""
    changed = transform(WEATHER, parse_path("results[].name"), str.upper)
    assert find(changed, parse_path("results[].name")) == ["BERLIN", "BERN"]
    assert WEATHER["results"][0]["name"] == "Berlin"
    assert transform(WEATHER, parse_path("nothing.here"), str.upper) is WEATHER
    assert transform([1, 2], parse_path("[5]"), str) == [1, 2]
    assert transform([1, 2], parse_path("[-1]"), str) == [1, "2"]
