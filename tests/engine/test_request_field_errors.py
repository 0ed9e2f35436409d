"""A tool whose body, authentication or steps cannot be used is refused with
a problem that names the tool and the field, and says what is wrong."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinitionError,
    parse_tools,
)

PARAMETERS = {
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
}


def tool(**fields: Any) -> dict[str, Any]:
    """A valid POST tool with `fields` over it (`...` removes one)."""
    data: dict[str, Any] = {
        "name": "t",
        "method": "POST",
        "url": "https://example.com/x",
        "parameters": PARAMETERS,
    }
    for key, value in fields.items():
        if value is ...:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def problem(data: dict[str, Any]) -> tuple[str | None, str | None, str]:
    """The first problem of `data`: (tool, field, message)."""
    with pytest.raises(ToolDefinitionError) as info:
        parse_tools([data])
    found = info.value.problems[0]
    return found.tool, found.field, found.message


@pytest.mark.parametrize(
    ("fields", "field", "says"),
    [
        ({"body_format": "xml"}, "body_format", "must be one of"),
        ({"body_format": "text"}, "body", "is required with"),
        (
            {"method": "GET", "body_format": "form"},
            "body_format",
            "sends its arguments in the query",
        ),
        ({"body": {"x": float("nan")}}, "body", "must be JSON"),
        ({"body_format": "text", "body": {"x": "{a}"}}, "body", "must be a string"),
        ({"body_format": "form", "body": ["{a}"]}, "body", "must be an object"),
        (
            {"body_format": "form", "body": {"x": {"y": "{a}"}}},
            "body.x",
            "a form field is a string",
        ),
        ({"body": {"x": "{a\u0007}"}}, "body.x", "control characters"),
        ({"body": {"x": "{nope}"}}, "body.x", "nope"),
        ({"auth": "basic"}, "auth", "must be an object"),
        (
            {"auth": {"type": "basic", "username": "u", "password": "p", "x": 1}},
            "auth.x",
            "unknown field",
        ),
        (
            {"auth": {"type": "basic", "user": "u", "password": "p"}},
            "auth.user",
            "unknown field (did you mean 'username'?)",
        ),
        (
            {"auth": {"type": "bearer", "username": "u", "password": "p"}},
            "auth.type",
            "must be one of",
        ),
        (
            {"auth": {"type": "basic", "username": "{a}", "password": "p"}},
            "auth.username",
            "the model never chooses credentials",
        ),
        (
            {"auth": {"type": "basic", "username": "a:b", "password": "p"}},
            "auth.username",
            "RFC 7617",
        ),
        (
            {"auth": {"type": "digest", "username": "u", "password": "p\u0001"}},
            "auth.password",
            "control characters",
        ),
    ],
    ids=[
        "unknown-body-format",
        "text-without-body",
        "form-on-get",
        "body-not-json",
        "text-body-object",
        "form-body-list",
        "form-field-object",
        "body-control-character",
        "body-unknown-placeholder",
        "auth-not-object",
        "auth-unknown-field",
        "auth-misspelt-field",
        "auth-unknown-type",
        "username-from-argument",
        "username-with-colon",
        "password-control-character",
    ],
)
def test_a_body_or_auth_that_cannot_be_used_is_named(
    fields: dict[str, Any], field: str, says: str
) -> None:
    name, where, message = problem(tool(**fields))

    assert name == "t"
    assert where == field
    assert says in message


def step(**fields: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"name": "first", "url": "https://example.com/{a}"}
    data.update(fields)
    return data


@pytest.mark.parametrize(
    ("steps", "field", "says"),
    [
        (["geocode"], "steps[0]", "must be an object"),
        ([step(nam="x")], "steps[0].nam", "did you mean 'name'"),
        ([step(name="two words")], "steps[0].name", "is required"),
        ([step(), step()], "steps[1].name", "duplicates step 'first'"),
        ([step(url="https://example.com/{later.id}")], "steps[0].url", "later"),
    ],
    ids=["not-object", "misspelt-field", "bad-name", "duplicate-name", "unknown-step"],
)
def test_a_step_that_cannot_run_is_named(
    steps: list[Any], field: str, says: str
) -> None:
    name, where, message = problem(tool(url=..., method=..., steps=steps))

    assert name == "t"
    assert where == field
    assert says in message


@pytest.mark.parametrize(
    ("response", "field", "says"),
    [
        ("current", "response", "must be an object"),
        ({"pth": "current"}, "response.pth", "unknown field"),
        ({"path": 3}, "response.path", "must be a path"),
        ({"fields": []}, "response.fields", "must not be empty"),
        ({"fields": {}}, "response.fields", "must not be empty"),
        ({"max_items": 0}, "response.max_items", "must be an integer from 1"),
        ({"values": ["code"]}, "response.values", "must be an object of paths"),
        ({"values": {"code": "clear"}}, "response.values.code", "codes and words"),
        ({"values": {"code": {"0": 1}}}, "response.values.code.0", "must be a string"),
        ({"values": {"code": {"9-3": "x"}}}, "response.values.code.9-3", "low to high"),
        ({"times": "time"}, "response.times", "must be an object of paths"),
        ({"times": {"time": "weeks"}}, "response.times.time", "the unit is one of"),
        (
            {"times": {"time": {"unit": "s", "when": 1}}},
            "response.times.time.when",
            "unknown field",
        ),
        (
            {"times": {"time": {"unit": "s", "show": "year"}}},
            "response.times.time.show",
            "must be one of",
        ),
        ({"timezone": 1}, "response.timezone", "must be a time zone name"),
        ({"timezone": "Mars/Olympus"}, "response.timezone", "no IANA time zone"),
    ],
    ids=[
        "not-object",
        "misspelt-field",
        "path-not-string",
        "no-fields",
        "no-named-fields",
        "no-items",
        "values-not-object",
        "codes-not-object",
        "word-not-string",
        "range-backwards",
        "times-not-object",
        "unknown-unit",
        "time-unknown-field",
        "unknown-show",
        "timezone-not-string",
        "unknown-timezone",
    ],
)
def test_a_response_shape_that_cannot_be_read_is_named(
    response: object, field: str, says: str
) -> None:
    name, where, message = problem(tool(method="GET", response=response))

    assert (name, where) == ("t", field)
    assert says in message


@pytest.mark.parametrize(
    ("speech", "says"),
    [
        (3, "must be a string"),
        ("  ", "must not be empty"),
        ("x" * 2000, "must be at most"),
        ("{city", "is not closed"),
        ("city}", "unmatched '}'"),
        ("{a..b}", "'{a..b}' at position 0"),
    ],
    ids=["not-string", "empty", "too-long", "unclosed", "unmatched", "bad-path"],
)
def test_a_sentence_that_cannot_be_said_is_named(speech: object, says: str) -> None:
    name, where, message = problem(tool(method="GET", speech=speech))

    assert (name, where) == ("t", "speech")
    assert says in message
