"""A tool's `sentences`: checked with errors naming the tool and the field,
written out for Home Assistant's matching (enum slots as their values)."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinitionError,
    parse_tools,
)
from custom_components.http_tools_agent.engine.sentences import (
    SentenceVariant,
    sentence_variants,
)

WEATHER: dict[str, Any] = {
    "name": "weather",
    "url": "http://h/weather/{city}",
    "method": "GET",
    "parameters": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "filters": {"type": "array"},
        },
        "required": ["city"],
    },
}


def with_sentences(sentences: object) -> dict[str, Any]:
    return {**WEATHER, "sentences": sentences}


def test_sentences_round_trip_and_write_out_enum_slots() -> None:
    """A template's enum slot is written out once per value (bound as the
    argument), a wildcard slot stays; the field round-trips."""
    raw = with_sentences(
        {"en": ["weather in {city} [in {unit}]"], "de": ["wetter in {city}"]}
    )
    (tool,) = parse_tools([raw])

    assert tool.as_dict()["sentences"] == raw["sentences"]
    assert sentence_variants(tool.sentences, tool.parameters) == (
        SentenceVariant("en", "weather in {city} [in celsius]", (("unit", "celsius"),)),
        SentenceVariant(
            "en", "weather in {city} [in fahrenheit]", (("unit", "fahrenheit"),)
        ),
        SentenceVariant("de", "wetter in {city}"),
    )


@pytest.mark.parametrize(
    ("sentences", "message"),
    [
        (
            {"en": ["weather in {town}"]},
            "sentences.en[0]: slot '{town}' is no parameter of the tool "
            "(parameters: city, filters, unit)",
        ),
        (
            {"en": ["weather [in {city}]"]},
            "sentences.en[0]: no slot fills the required parameter 'city'",
        ),
        (
            {"en": ["the weather", "weather in {city}?"]},
            "sentences.en[0]: no slot fills the required parameter 'city'",
        ),
        (
            {"en": ["weather in {city}", "weather in {city}?"]},
            "sentences.en[1]: 'weather in {city}?': no punctuation",
        ),
        (
            {"en": ["(weather in {city}"]},
            "sentences.en[0]: '(weather in {city}' is not a valid sentence template",
        ),
        (
            {"english": ["weather in {city}"]},
            "sentences.english: is not a language code",
        ),
        ({"en": "weather in {city}"}, "sentences.en: must be a non-empty list"),
        (["weather in {city}"], "sentences: must be an object of language codes"),
        (
            {"en": ["weather in {city} with {filters}"]},
            "sentences.en[0]: parameter 'filters' has type array: a slot fills only",
        ),
        (
            {"en": ["<weather> in {city}"]},
            "sentences.en[0]: '<weather>': expansion rules are not available",
        ),
    ],
)
def test_bad_sentences_are_named(sentences: object, message: str) -> None:
    """Each problem names the tool, the language, the template and why."""
    with pytest.raises(ToolDefinitionError) as err:
        parse_tools([with_sentences(sentences)])

    assert f"tool #0 'weather': {message}" in str(err.value)
