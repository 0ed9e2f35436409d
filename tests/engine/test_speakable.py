"""Tool results read aloud when the model gives no answer: sentences a
person would say, in the user's language, never the result's keys."""

from __future__ import annotations

import pytest

from custom_components.http_tools_agent.engine.speakable import (
    ReadOutWords,
    says_all,
    speakable,
)
from custom_components.http_tools_agent.lexicon import LEXICONS

WEATHER = (
    '{"city": "Berlin", "temperature_c": 16, "condition": "clear",'
    ' "humidity_pct": 80, "wind_kmh": 12.5}'
)
SHOPPING = (
    '{"items": [{"id": "1", "name": "apples", "qty": 3},'
    ' {"id": "2", "name": "bananas", "qty": 6}, {"id": "3", "name": "milk", "qty": 1}]}'
)


@pytest.mark.parametrize(
    ("result", "spoken"),
    [
        ("Rome: ☀️ +14°C\n", "Rome: ☀️ +14°C"),
        # A named thing: its name, what it is, then its values with units.
        (WEATHER, "Berlin: clear, temperature 16 °C, humidity 80 %, wind 12.5 km/h"),
        ('{"name": "lamp", "watts": 40, "lumens": 470}', "lamp: watts 40, lumens 470"),
        ('{"id": "4", "name": "bread", "qty": 1}', "bread (1)"),
        # Named things in a list: counted, each with its one number, "and".
        (SHOPPING, "3 items: apples (3), bananas (6) and milk (1)"),
        (
            '[{"id": "1", "name": "widget", "qty": 2}, {"id": "2", "name": "gadget", "qty": 5}]',
            "2 items: widget (2) and gadget (5)",
        ),
        ('[{"title": "Rain tomorrow", "id": 7}]', "Rain tomorrow"),
        ('["apples", "pears", "milk"]', "apples, pears and milk"),
        # Other JSON: the key's words and the value; a status word is said bare.
        ('{"deleted": "3"}', "deleted 3"),
        ('{"ok": true, "note": null, "temp_c": 14.0}', "temperature 14 °C"),
        ('{"status": "charging", "battery_percent": 80}', "charging, battery 80 %"),
        # A webhook's acknowledgement: the message it received, not "ok yes".
        ('{"ok": true, "received": "Pizza tonight!"}', "received Pizza tonight!"),
        ('{"ok": false, "error": "full"}', "ok: no, error full"),
        ('{"items": [], "open": true}', "items: nothing, open: yes"),
        # A list beside other values is said under its key, not counted.
        (
            '{"items": [{"name": "tea", "qty": 2}, {"name": "jam", "qty": 1}], "total": 3}',
            "items: tea (2) and jam (1), total 3",
        ),
        (
            '{"forecast": {"max_c": 20, "rain_mm": 1.5}}',
            "forecast: max 20 °C, rain 1.5 mm",
        ),
        (
            '[{"day": "Mon", "max_c": 20}, {"day": "Tue", "max_c": 18}]',
            "day Mon, max 20 °C; day Tue, max 18 °C",
        ),
        ("[]", ""),
        ("HTTP 204", "HTTP 204"),
    ],
)
def test_results_become_words(result: str, spoken: str) -> None:
    """JSON becomes words that sound like an answer; text keeps its words,
    not its layout."""
    assert speakable(result) == spoken


@pytest.mark.parametrize(
    ("language", "result", "spoken"),
    [
        (
            "it",
            WEATHER,
            "Berlin: clear, temperatura 16 °C, umidità 80 %, vento 12,5 km/h",
        ),
        ("it", SHOPPING, "3 elementi: apples (3), bananas (6) e milk (1)"),
        ("it", '{"items": [], "open": true}', "items: niente, open: sì"),
        ("de", SHOPPING, "3 Einträge: apples (3), bananas (6) und milk (1)"),
        ("es", '{"open": false}', "open: no"),
        ("fr", '["a", "b"]', "a et b"),
    ],
)
def test_results_in_the_users_language(language: str, result: str, spoken: str) -> None:
    """The words a read-out adds are the user's language's."""
    assert speakable(result, words=LEXICONS[language].read_out) == spoken


def test_long_results_are_cut_at_a_word() -> None:
    """A long result is cut at a word boundary with an ellipsis."""
    text = speakable(" ".join(["word"] * 200), limit=50)
    assert text.endswith("…")
    assert len(text) <= 51
    assert "wor…" not in text


def test_the_words_default_to_english() -> None:
    """The engine's own callers (a tool's `speech` over nested values) get
    English words."""
    assert speakable("[true, false]") == "yes and no"
    assert speakable("[true]", words=ReadOutWords(yes="oui")) == "oui"


OPEN_WINDOWS = (
    '{"items":[{"name":"Kitchen window"},{"name":"Garage door"},'
    '{"name":"Attic hatch"}],"of":41}'
)


@pytest.mark.parametrize(
    ("language", "spoken"),
    [
        ("en", "3 of 41 items: Kitchen window, Garage door and Attic hatch"),
        ("de", "3 von 41 Einträgen: Kitchen window, Garage door und Attic hatch"),
        ("es", "3 de 41 elementos: Kitchen window, Garage door y Attic hatch"),
        ("fr", "3 sur 41 éléments: Kitchen window, Garage door et Attic hatch"),
        ("it", "3 di 41 elementi: Kitchen window, Garage door e Attic hatch"),
    ],
)
def test_a_shaped_list_says_how_many_it_left_out(language: str, spoken: str) -> None:
    """A shape that kept 3 of the 41 items: the read-out says so, in the
    user's language; none kept is nothing."""
    words = LEXICONS[language].read_out
    assert speakable(OPEN_WINDOWS, words=words) == spoken
    assert speakable('{"items":[],"of":41}', words=words) == words.nothing


@pytest.mark.parametrize(
    ("result", "whole"),
    [
        ("Rome: ☀️ +14°C\n", True),
        (WEATHER, True),
        # Names and their one number; ids are not for the ear.
        (SHOPPING, True),
        ('{"items": []}', True),
        # Places with coordinates: said by their names, the rest left out.
        (
            '[{"name": "Springfield", "lat": 39.8, "lon": -89.6},'
            ' {"name": "Springfield", "lat": 37.2, "lon": -93.3}]',
            False,
        ),
        # A second name-like field is left out too.
        ('[{"name": "Rain", "summary": "all day"}]', False),
        # Cut at the limit.
        ('{"text": "' + "word " * 100 + '"}', False),
        ("word " * 100, False),
    ],
)
def test_a_read_out_says_whether_it_said_everything(result: str, whole: bool) -> None:
    """What decides whether a small model is asked for the answer at all:
    when the read-out says everything a model could read in the result,
    the model's answer could add nothing (`Rules.own_answer`)."""
    assert says_all(result) is whole
