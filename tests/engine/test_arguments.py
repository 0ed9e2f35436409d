"""Arguments checked against the tool's JSON Schema: lossless conversions,
and errors that name the argument and what is allowed."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.http_tools_agent.engine.arguments import (
    check_arguments,
    compile_validator,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "unit": {"type": "string", "enum": ["C", "F"]},
        "days": {"type": "integer", "minimum": 1, "maximum": 10},
        "code": {"type": "string", "pattern": "^[a-z]+$"},
        "loud": {"type": "boolean"},
        "label": {"type": "string"},
        "when": {"type": "string", "format": "date-time"},
        "level": {"enum": [1, 2, 3]},
        "place": {
            "type": "object",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "required": ["lat"],
            "additionalProperties": False,
        },
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["unit"],
}


def check(arguments: dict[str, Any], schema: dict[str, Any] = SCHEMA) -> Any:
    return check_arguments("set_unit", schema, compile_validator(schema), arguments)


@pytest.mark.parametrize(
    ("given", "sent"),
    [
        ({"unit": "C", "days": "2"}, {"unit": "C", "days": 2}),
        ({"unit": "C", "days": 2.0}, {"unit": "C", "days": 2}),
        ({"unit": "C", "loud": "true"}, {"unit": "C", "loud": True}),
        ({"unit": "C", "loud": "False"}, {"unit": "C", "loud": False}),
        ({"unit": "C", "label": 5}, {"unit": "C", "label": "5"}),
        ({"unit": "C", "label": 2.5}, {"unit": "C", "label": "2.5"}),
        ({"unit": "C", "level": "2"}, {"unit": "C", "level": 2}),
        ({"unit": "C", "tags": '["a", 3]'}, {"unit": "C", "tags": ["a", "3"]}),
        (
            {"unit": "C", "place": {"lat": "41.9"}},
            {"unit": "C", "place": {"lat": 41.9}},
        ),
        # A null for an optional argument that takes none: not given.
        ({"unit": "C", "days": None}, {"unit": "C"}),
        # Unlisted arguments are allowed (JSON Schema's default)...
        ({"unit": "C", "extra": 1}, {"unit": "C", "extra": 1}),
        # ...and `format` is an annotation, not a check.
        ({"unit": "C", "when": "tomorrow"}, {"unit": "C", "when": "tomorrow"}),
    ],
    ids=[
        "int-text",
        "int-float",
        "bool-text",
        "bool-text-case",
        "int-to-string",
        "float-to-string",
        "enum-number",
        "array-json-text",
        "nested-number",
        "null-optional",
        "unlisted",
        "format",
    ],
)
def test_lossless_conversions(given: dict[str, Any], sent: dict[str, Any]) -> None:
    checked = check(given)
    assert checked.error is None
    assert checked.arguments == sent


@pytest.mark.parametrize(
    ("given", "error"),
    [
        (
            {"unit": "K"},
            "Error: invalid value for argument 'unit' of tool 'set_unit': "
            "'K' is not one of 'C', 'F'",
        ),
        ({}, "Error: missing required argument 'unit' for tool 'set_unit'"),
        (
            {"unit": "C", "days": "2.5"},
            "Error: invalid value for argument 'days' of tool 'set_unit': "
            "'2.5' is not an integer",
        ),
        (
            {"unit": "C", "days": 11},
            "Error: invalid value for argument 'days' of tool 'set_unit': "
            "11 is more than the maximum 10",
        ),
        (
            {"unit": "C", "days": "0"},
            "Error: invalid value for argument 'days' of tool 'set_unit': "
            "0 is less than the minimum 1",
        ),
        (
            {"unit": "C", "code": "AB"},
            "Error: invalid value for argument 'code' of tool 'set_unit': "
            "'AB' does not match the pattern '^[a-z]+$'",
        ),
        (
            {"unit": "C", "place": {"lat": "north"}},
            "Error: invalid value for argument 'place.lat' of tool 'set_unit': "
            "'north' is not a number",
        ),
        (
            {"unit": "C", "place": {"lon": 1}},
            "Error: missing required argument 'place.lat' for tool 'set_unit'",
        ),
        (
            {"unit": "C", "place": {"lat": 1, "alt": 2}},
            "Error: unknown argument 'place.alt' for tool 'set_unit' "
            "(allowed: 'lat', 'lon')",
        ),
        (
            {"unit": "C", "tags": ["a", {"b": 1}]},
            "Error: invalid value for argument 'tags[1]' of tool 'set_unit': "
            '{"b": 1} is not a string',
        ),
        (
            {"unit": "C", "loud": "yes"},
            "Error: invalid value for argument 'loud' of tool 'set_unit': "
            "'yes' is not a boolean",
        ),
    ],
    ids=[
        "enum",
        "required",
        "not-integer",
        "maximum",
        "minimum",
        "pattern",
        "nested-type",
        "nested-required",
        "nested-unknown",
        "array-item",
        "bool",
    ],
)
def test_errors_name_the_argument_and_what_is_allowed(
    given: dict[str, Any], error: str
) -> None:
    assert check(given).error == error


def test_several_problems_are_all_named() -> None:
    checked = check({"unit": "K", "days": 99})
    assert checked.error is not None
    assert checked.error.splitlines() == [
        "Error: invalid value for argument 'days' of tool 'set_unit': "
        "99 is more than the maximum 10",
        "Error: invalid value for argument 'unit' of tool 'set_unit': "
        "'K' is not one of 'C', 'F'",
    ]


def test_closed_root_refuses_unknown_arguments() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "additionalProperties": False,
    }
    assert check({"city": "Rome", "country": "IT"}, schema).error == (
        "Error: unknown argument 'country' for tool 'set_unit' (allowed: 'city')"
    )


def test_a_pattern_probatio_refuses_leaves_the_other_checks() -> None:
    """probatio refuses a pattern that could backtrack for ever; the types
    are still checked."""
    schema = {
        "type": "object",
        "properties": {
            "x": {"type": "string", "pattern": "(a+)+$"},
            "n": {"type": "integer"},
        },
    }
    assert compile_validator(schema) is not None
    assert check({"x": "aaa", "n": "2"}, schema).arguments == {"x": "aaa", "n": 2}
    assert check({"x": "aaa", "n": "two"}, schema).error == (
        "Error: invalid value for argument 'n' of tool 'set_unit': "
        "'two' is not an integer"
    )


def test_properties_named_like_keywords() -> None:
    """A property called `format` or `pattern` is an argument, not a keyword."""
    schema = {
        "type": "object",
        "properties": {"format": {"type": "integer"}, "pattern": {"type": "string"}},
        "required": ["format"],
    }
    assert check({"format": "3", "pattern": "x"}, schema).arguments == {
        "format": 3,
        "pattern": "x",
    }
    assert check({}, schema).error == (
        "Error: missing required argument 'format' for tool 'set_unit'"
    )


@pytest.mark.parametrize("blank", ["", "   "])
def test_an_empty_required_text_is_missing(blank: str) -> None:
    """`delete_item` with `id` "" would send `DELETE /api/items/` and ask
    "Should I delete item: id ?": the model is told the id is missing."""
    schema = {
        "type": "object",
        "properties": {"id": {"type": "string"}, "note": {"type": "string"}},
        "required": ["id"],
    }
    checked = check_arguments(
        "delete_item", schema, compile_validator(schema), {"id": blank, "note": ""}
    )
    assert checked.error == (
        "Error: missing required argument 'id' for tool 'delete_item' (it is empty)"
    )


WEATHER: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
}


@pytest.mark.parametrize(
    ("given", "sent"),
    [
        # The schema's shape around the real arguments: unwrapped.
        ({"properties": {"city": "Prague"}, "required": ["city"]}, {"city": "Prague"}),
        (
            {"type": "object", "properties": {"city": "Oslo", "days": "2"}},
            {"city": "Oslo", "days": 2},
        ),
    ],
)
def test_arguments_written_as_a_schema_are_unwrapped(
    given: dict[str, Any], sent: dict[str, Any]
) -> None:
    checked = check(given, WEATHER)
    assert (checked.arguments, checked.error) == (sent, None)


@pytest.mark.parametrize(
    ("given", "schema"),
    [
        # The values are schemas themselves: no arguments to read.
        ({"properties": {"city": {"type": "string"}}}, WEATHER),
        # A name the tool does not have: not its arguments.
        ({"properties": {"town": "Prague"}}, WEATHER),
        # Beside a real argument: another reading exists.
        ({"city": "Rome", "properties": {"city": "Prague"}}, WEATHER),
        # The tool has a parameter named `properties`: it is the argument.
        (
            {"properties": {"city": "Prague"}},
            {
                "type": "object",
                "properties": {"properties": {"type": "object"}},
                "required": ["properties"],
            },
        ),
    ],
)
def test_a_schema_shape_with_another_reading_is_left_alone(
    given: dict[str, Any], schema: dict[str, Any]
) -> None:
    assert check(given, schema).arguments == given


@pytest.mark.parametrize(
    ("given", "at_fault"),
    [
        ({"unit": "K"}, ("unit",)),
        ({"unit": "C", "days": 11}, ("days",)),
        ({"unit": " "}, ("unit",)),
        ({"days": 2}, ("unit",)),
        ({"unit": "C", "place": {"lon": 3}}, ("place",)),
        ({"unit": "K", "code": "A1"}, ("code", "unit")),
        ({"unit": "C"}, ()),
    ],
)
def test_the_arguments_at_fault_are_named(
    given: dict[str, Any], at_fault: tuple[str, ...]
) -> None:
    """Each problem names the argument it is in (a nested one by its
    top-level argument), so a form can show it under that field."""
    checked = check(given)
    assert checked.at_fault == at_fault
    assert (checked.error is None) == (not at_fault)
    for name in at_fault:
        assert f"'{name}" in (checked.error or "")
