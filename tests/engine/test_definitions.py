"""Parsing and validation of tool definitions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from custom_components.http_tools_agent.engine.definitions import (
    DefinitionProblem,
    ToolDefinition,
    ToolDefinitionError,
    parse_tools,
    parse_tools_json,
)
from custom_components.http_tools_agent.engine.fields import DEFAULT_PARAMETERS
from custom_components.http_tools_agent.engine.templates import parse_template

EXAMPLE_FILE = Path(__file__).resolve().parents[2] / "tools.example.json"


def tool(**fields: Any) -> dict[str, Any]:
    """A minimal valid definition, with ``fields`` merged in (None deletes)."""
    data: dict[str, Any] = {
        "name": "t",
        "url": "https://example.com/x",
        "parameters": {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        },
    }
    for key, value in fields.items():
        if value is ...:
            data.pop(key, None)
        else:
            data[key] = value
    return data


def problems(data: object) -> list[DefinitionProblem]:
    """The problems ``parse_tools`` reports for ``data``."""
    with pytest.raises(ToolDefinitionError) as info:
        parse_tools(data)
    return info.value.problems


def one_problem(data: object) -> DefinitionProblem:
    """Exactly one problem."""
    found = problems(data)
    assert len(found) == 1, found
    return found[0]


def test_example_file_loads() -> None:
    """tools.example.json passes the validator and holds every guide example."""
    definitions = parse_tools_json(EXAMPLE_FILE.read_bytes())
    by_name = {d.name: d for d in definitions}
    assert list(by_name) == [
        "get_weather",
        "create_note",
        "send_webhook",
        "list_items",
        "get_item",
        "add_item",
        "update_item",
        "replace_item",
        "delete_item",
        "item_exists",
        "geocode_city",
        "get_forecast",
        "weather_now",
    ]
    methods = {name: d.method for name, d in by_name.items()}
    assert methods["list_items"] == "GET"
    assert methods["update_item"] == "PATCH"
    assert methods["replace_item"] == "PUT"
    assert methods["delete_item"] == "DELETE"
    assert methods["item_exists"] == "HEAD"
    assert methods["add_item"] == "POST"
    assert by_name["get_weather"].url == "https://wttr.in/{city}?format=3"
    assert by_name["create_note"].header_placeholders == {"token"}
    assert by_name["geocode_city"].url.startswith(
        "https://geocoding-api.open-meteo.com/v1/search?count=1&language=en"
    )
    forecast = by_name["get_forecast"]
    props = forecast.parameters["properties"]
    assert props["latitude"]["type"] == props["longitude"]["type"] == "number"
    assert all(len(d.description) > 20 for d in definitions)


def test_round_trip() -> None:
    """as_dict goes back through parse_tools unchanged."""
    definitions = parse_tools_json(EXAMPLE_FILE.read_text(encoding="utf-8"))
    again = parse_tools([d.as_dict() for d in definitions])
    assert again == definitions
    assert json.loads(json.dumps([d.as_dict() for d in definitions])) == [
        d.as_dict() for d in definitions
    ]


def test_empty_list_and_defaults() -> None:
    """[] is valid; optional fields take their defaults (null too)."""
    assert parse_tools([]) == []
    assert parse_tools_json("[]") == []
    (parsed,) = parse_tools([{"name": "hook", "url": "http://h.example/x"}])
    assert parsed == ToolDefinition(
        name="hook",
        description="",
        parameters=DEFAULT_PARAMETERS,
        url="http://h.example/x",
        method="POST",
        headers={},
        timeout=None,
    )
    assert parsed.as_dict() == {
        "name": "hook",
        "description": "",
        "parameters": {"type": "object", "properties": {}},
        "url": "http://h.example/x",
        "method": "POST",
    }
    (nulls,) = parse_tools(
        [
            tool(
                description=None,
                parameters=None,
                method=None,
                headers=None,
                timeout=None,
            )
        ]
    )
    assert nulls.method == "POST"
    assert nulls.parameters == DEFAULT_PARAMETERS
    assert nulls.timeout is None


def test_parameters_are_copied() -> None:
    """Mutating the input afterwards does not change the definition."""
    raw = tool()
    (parsed,) = parse_tools([raw])
    raw["parameters"]["properties"]["a"]["type"] = "integer"
    assert parsed.parameters["properties"]["a"]["type"] == "string"


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("get", "GET"),
        ("Patch", "PATCH"),
        ("PURGE", "PURGE"),
        ("options", "OPTIONS"),
        ("trace", "TRACE"),
        ("m-search", "M-SEARCH"),
    ],
)
def test_method_any_token(method: str, expected: str) -> None:
    """Any RFC 9110 token, case-insensitive, stored upper-cased."""
    (parsed,) = parse_tools([tool(method=method)])
    assert parsed.method == expected


@pytest.mark.parametrize("method", ["GE T", "", "GET\r\n", "(GET)", "GÉT", 5])
def test_invalid_method(method: object) -> None:
    """Not a token: rejected naming the field."""
    problem = one_problem([tool(method=method)])
    assert (problem.index, problem.tool, problem.field) == (0, "t", "method")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (..., "name: is required"),
        (None, "name: is required"),
        (3, "name: must be a string, got number"),
        ("", "name: must not be empty"),
        ("a" * 65, "name: must be at most 64 characters"),
        ("get weather", "name: 'get weather' may only contain letters, digits"),
        ("città", "name: 'città' may only contain"),
        ("a.b", "name: 'a.b' may only contain"),
    ],
)
def test_invalid_names(name: object, message: str) -> None:
    """Name rules: letters, digits, _ and -, 1..64 characters."""
    problem = one_problem([tool(name=name)])
    assert problem.tool is None
    assert str(problem).startswith(f"tool #0: {message}")


def test_valid_names() -> None:
    """Edge of the name rule."""
    names = ["a" * 64, "A-b_9", "0"]
    parsed = parse_tools([tool(name=n) for n in names])
    assert [d.name for d in parsed] == names


def test_duplicate_names() -> None:
    """A repeated name is an error naming both positions."""
    problem = one_problem([tool(), tool(name="u"), tool()])
    assert (problem.index, problem.tool, problem.field) == (2, "t", "name")
    assert str(problem) == "tool #2 't': name: duplicate name (already used by tool #0)"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (..., "is required"),
        (5, "must be a string, got number"),
        ("", "must not be empty"),
        (" https://a.example/", "must not start or end with whitespace"),
        ("https://a.example/\nx", "must not contain control characters"),
        ("ftp://a.example/", "must be an http or https URL"),
        ("/api/items", "must be an absolute http or https URL"),
        ("a.example/x", "must be an absolute http or https URL"),
        ("https:///x", "must include a host"),
        ("https://a.example:99999/", "is not a valid URL"),
        (
            "https://{a}.example/x",
            "placeholders and secrets are only allowed in the path",
        ),
        (
            "https://a.example{a}",
            "placeholders and secrets are only allowed in the path",
        ),
        ("https://a.example/{c}", "placeholder '{c}' names no declared parameter"),
        ("https://a.example/{a", "invalid placeholder at position 18"),
        ("https://a.example/{a b}", "invalid placeholder"),
        ("https://a.example/{}", "invalid placeholder"),
        ("https://a.example/a}", "unmatched '}' at position 19"),
    ],
)
def test_invalid_urls(url: object, message: str) -> None:
    """URL rules, each error naming tool and field."""
    problem = one_problem([tool(url=url)])
    assert (problem.index, problem.tool, problem.field) == (0, "t", "url")
    assert problem.message.startswith(message), problem.message


def test_url_literal_braces_and_placeholders() -> None:
    """{{ and }} are literal braces; placeholders are collected."""
    (parsed,) = parse_tools(
        [tool(url="https://a.example/{a}/q?f={{x}}&b={b}#{{}}", method="GET")]
    )
    assert parsed.placeholders == {"a", "b"}
    assert parsed.header_placeholders == frozenset()
    assert parse_template("x{{y}}{a}") == ("x{y}", parse_template("{a}")[0])


@pytest.mark.parametrize(
    ("headers", "field", "message"),
    [
        ("Bearer", "headers", "must be an object, got string"),
        ({"X-A": 1}, "headers.X-A", "must be a string, got number"),
        ({"X A": "v"}, "headers", "'X A' is not a valid header name"),
        ({"": "v"}, "headers", "'' is not a valid header name"),
        ({"X-A": "v\r\nX-B: 1"}, "headers.X-A", "must not contain control characters"),
        ({"X-A": "v\x00"}, "headers.X-A", "must not contain control characters"),
        (
            {"Authorization": "Bearer {token}"},
            "headers.Authorization",
            "placeholder '{token}' names no declared parameter",
        ),
        ({"X-A": "{a"}, "headers.X-A", "invalid placeholder"),
        ({"X-A": "1", "x-a": "2"}, "headers.x-a", "duplicates header 'X-A'"),
    ],
)
def test_invalid_headers(headers: object, field: str, message: str) -> None:
    """Header rules."""
    problem = one_problem([tool(headers=headers)])
    assert (problem.tool, problem.field) == ("t", field)
    assert problem.message.startswith(message), problem.message


def test_headers_with_placeholders() -> None:
    """Header placeholders are reported separately (they are secrets)."""
    (parsed,) = parse_tools(
        [
            tool(
                url="https://a.example/{a}",
                headers={"Authorization": "Bearer {b}", "X-Tab": "a\tb"},
            )
        ]
    )
    assert parsed.placeholders == {"a", "b"}
    assert parsed.header_placeholders == {"b"}


@pytest.mark.parametrize(
    ("parameters", "field", "message"),
    [
        ([], "parameters", "must be a JSON Schema object, got array"),
        ({"properties": {}}, "parameters.type", 'must be "object"'),
        ({"type": "string"}, "parameters.type", 'must be "object"'),
        (
            {"type": "object", "properties": []},
            "parameters.properties",
            "must be an object, got array",
        ),
        (
            {"type": "object", "properties": {"a": "string"}},
            "parameters.properties.a",
            "must be an object (a JSON Schema), got string",
        ),
        (
            {"type": "object", "properties": {"a": {}}, "required": "a"},
            "parameters.required",
            "must be a list of strings, got string",
        ),
        (
            {"type": "object", "properties": {"a": {}}, "required": ["b"]},
            "parameters.required",
            "'b' is not a declared property",
        ),
        (
            {"type": "object", "required": ["a"]},
            "parameters.required",
            "'a' is not a declared property",
        ),
        (
            {"type": "object", "properties": {"a": {}}, "required": [1]},
            "parameters.required",
            "must contain strings only, got number",
        ),
        (
            {"type": "object", "default": object()},
            "parameters",
            "must be JSON-serialisable",
        ),
    ],
)
def test_invalid_parameters(parameters: object, field: str, message: str) -> None:
    """JSON Schema checks."""
    problem = one_problem([tool(url="https://a.example/", parameters=parameters)])
    assert (problem.tool, problem.field) == ("t", field)
    assert problem.message.startswith(message), problem.message


def test_parameters_extra_keywords_kept() -> None:
    """Other JSON Schema keywords pass through."""
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string", "enum": ["x"]}},
        "required": ["a"],
        "additionalProperties": False,
    }
    (parsed,) = parse_tools([tool(url="https://a.example/{a}", parameters=schema)])
    assert parsed.parameters == schema


@pytest.mark.parametrize("timeout", [True, "10", 0, -1, 300.5, float("nan")])
def test_invalid_timeout(timeout: object) -> None:
    """timeout: a positive number of seconds, at most 300."""
    problem = one_problem([tool(timeout=timeout)])
    assert problem.field == "timeout"


def test_valid_timeout() -> None:
    """Integers become floats; 300 is the cap."""
    parsed = parse_tools([tool(name="a", timeout=300), tool(name="b", timeout=0.2)])
    assert [d.timeout for d in parsed] == [300.0, 0.2]
    assert parsed[0].as_dict()["timeout"] == 300.0


def test_unknown_field_named_with_hint() -> None:
    """A typo is not silently ignored."""
    problem = one_problem([tool(metod="GET")])
    assert (problem.index, problem.tool, problem.field) == (0, "t", "metod")
    assert problem.message.startswith("unknown field (did you mean 'method'?)")
    other = one_problem([tool(colour="red")])
    assert other.message.startswith("unknown field; allowed fields: name, description")


def test_description_must_be_text() -> None:
    """description is a string."""
    problem = one_problem([tool(description=["x"])])
    assert str(problem) == "tool #0 't': description: must be a string, got array"


def test_every_problem_is_reported() -> None:
    """All problems of all tools in one error, joined with '; '."""
    data = [
        tool(),
        "not an object",
        {"name": "bad", "url": "ftp://x/", "method": "G T", "metod": "x"},
        tool(name="t"),
    ]
    with pytest.raises(ToolDefinitionError) as info:
        parse_tools(data)
    found = [(p.index, p.tool, p.field) for p in info.value.problems]
    assert found == [
        (1, None, None),
        (2, "bad", "metod"),
        (2, "bad", "url"),
        (2, "bad", "method"),
        (3, "t", "name"),
    ]
    assert str(info.value) == "; ".join(str(p) for p in info.value.problems)
    assert str(info.value.problems[0]) == "tool #1: must be an object, got string"
    assert isinstance(info.value, ValueError)


def test_problem_str_forms() -> None:
    """Readable with or without index, name and field."""
    assert str(DefinitionProblem(None, None, None, "boom")) == "boom"
    assert str(DefinitionProblem(None, "x", "url", "bad")) == "tool 'x': url: bad"
    assert str(DefinitionProblem(2, "get_weather", "url", "m")) == (
        "tool #2 'get_weather': url: m"
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"[\xff]", "tool definitions are not valid UTF-8 (byte 1)"),
        ("", "tool definitions are empty: expected a JSON array"),
        (b"  \n", "tool definitions are empty: expected a JSON array"),
        (
            "[{]",
            "tool definitions are not valid JSON: Expecting property name "
            "enclosed in double quotes (line 1, column 3)",
        ),
        ("{}", "tool definitions must be a JSON array, got object"),
        ('"x"', "tool definitions must be a JSON array, got string"),
        ("[NaN]", "tool definitions are not valid JSON: NaN is not valid JSON"),
    ],
)
def test_parse_tools_json_errors(raw: str | bytes, message: str) -> None:
    """Whole-input problems have index None and a clear message."""
    with pytest.raises(ToolDefinitionError) as info:
        parse_tools_json(raw)
    (problem,) = info.value.problems
    assert (problem.index, problem.tool, problem.field) == (None, None, None)
    assert problem.message == message
    assert str(info.value) == message


def test_parse_tools_json_bom_and_item_errors() -> None:
    """A UTF-8 BOM is tolerated; item problems carry their index."""
    assert parse_tools_json("\ufeff[]".encode()) == []
    with pytest.raises(ToolDefinitionError) as info:
        parse_tools_json(json.dumps([tool(), tool(name="x", url=1)]))
    assert [str(p) for p in info.value.problems] == [
        "tool #1 'x': url: must be a string, got number"
    ]


def test_parse_tools_requires_a_list() -> None:
    """Not a list: one whole-input problem."""
    problem = one_problem({"name": "t"})
    assert problem.index is None
    assert (
        problem.message
        == "tool definitions must be a JSON array of objects, got object"
    )


def test_deeply_nested_json_is_a_clear_error() -> None:
    """JSON nested past the parser's depth is an error, not a crash."""
    with pytest.raises(ToolDefinitionError, match="nested too deeply"):
        parse_tools_json("[" * 100_000)
