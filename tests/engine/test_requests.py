"""Definition + arguments -> HTTP request (no network)."""

from __future__ import annotations

from typing import Any

import pytest
from yarl import URL

from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinition,
    parse_tools,
)
from custom_components.http_tools_agent.engine.requests import (
    QUERY_METHODS,
    PreparedRequest,
    RequestBuildError,
    build_request,
    render_value,
)


def make(
    url: str,
    method: str = "GET",
    props: tuple[str, ...] = ("a", "b"),
    required: tuple[str, ...] = (),
    headers: dict[str, str] | None = None,
) -> ToolDefinition:
    """A validated definition."""
    data: dict[str, Any] = {
        "name": "t",
        "url": url,
        "method": method,
        "parameters": {
            "type": "object",
            "properties": {p: {} for p in props},
            "required": list(required),
        },
    }
    if headers is not None:
        data["headers"] = headers
    (definition,) = parse_tools([data])
    return definition


def build_error(definition: ToolDefinition, arguments: Any) -> str:
    """The model-facing text of a refused request."""
    with pytest.raises(RequestBuildError) as info:
        build_request(definition, arguments)
    assert str(info.value) == info.value.text
    return info.value.text


def test_query_methods_constant() -> None:
    """The verbs that send their arguments in the query."""
    assert frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "DELETE"}) == QUERY_METHODS


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("Rome", "Rome"),
        (5, "5"),
        (-3, "-3"),
        (2.0, "2"),
        (1.5, "1.5"),
        (41.8933, "41.8933"),
        (1e-7, "1e-07"),
        (True, "true"),
        (False, "false"),
        ([1, "a"], '[1,"a"]'),
        ({"k": "ü"}, '{"k":"ü"}'),
    ],
)
def test_render_value(value: Any, text: str) -> None:
    """Strings unquoted, integers without .0, booleans as true/false."""
    assert render_value(value) == text


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ("Rome", "/w/Rome"),
        (5, "/w/5"),
        (2.0, "/w/2"),
        (True, "/w/true"),
        ("a/b", "/w/a%2Fb"),
        ("x?y#z", "/w/x%3Fy%23z"),
        ("user@evil", "/w/user%40evil"),
        ("%2e%2e", "/w/%252e%252e"),
        ("São Paulo", "/w/S%C3%A3o%20Paulo"),
        ("a b+c&d=e", "/w/a%20b%2Bc%26d%3De"),
        ("...", "/w/..."),
        ("..x", "/w/..x"),
        ("\r\n", "/w/%0D%0A"),
    ],
)
def test_path_values_are_encoded(value: Any, path: str) -> None:
    """A path value cannot change host, path structure, query or fragment."""
    prepared = build_request(make("https://h.example/w/{a}"), {"a": value})
    assert prepared.url == f"https://h.example{path}"
    parsed = URL(prepared.url, encoded=True)
    assert parsed.host == "h.example"
    assert parsed.raw_query_string == ""
    assert parsed.raw_fragment == ""
    assert parsed.raw_path == path


@pytest.mark.parametrize(
    "value", ["..", ".", "", "../admin", "a/../b", "..\\x", "x/..", "a\\.."]
)
def test_dot_segments_refused(value: str) -> None:
    """'.', '..' or empty as a path segment would address another resource.

    `..` next to a slash is refused too: encoded it is harmless by RFC 3986,
    but servers that decode %2F before normalising would climb out.
    """
    text = build_error(make("https://h.example/api/{a}/x"), {"a": value})
    assert text.startswith("Error: invalid value for argument 'a' in tool 't': ")
    assert text.endswith("URL path segment")


def test_dot_segment_texts() -> None:
    """Exact texts."""
    definition = make("https://h.example/api/{a}{b}")
    assert build_error(definition, {"a": ".", "b": "."}) == (
        "Error: invalid value for argument 'b' in tool 't': "
        "'.' and '..' are not allowed as a URL path segment"
    )
    assert build_error(definition, {"a": "", "b": ""}) == (
        "Error: invalid value for argument 'b' in tool 't': "
        "an empty value cannot fill a URL path segment"
    )
    # Dots next to literal text, or in the query, are harmless.
    ok = build_request(make("https://h.example/{a}.json?q={b}"), {"a": ".", "b": ".."})
    assert ok.url == "https://h.example/..json?q=.."


@pytest.mark.parametrize(
    ("value", "query"),
    [
        ("1&admin=true#x", "q=1%26admin%3Dtrue%23x&format=3"),
        ("São Paulo", "q=S%C3%A3o%20Paulo&format=3"),
        ("a/b?c", "q=a%2Fb%3Fc&format=3"),
        ("", "q=&format=3"),
    ],
)
def test_query_values_are_encoded(value: str, query: str) -> None:
    """A query value cannot add parameters or a fragment."""
    prepared = build_request(make("https://h.example/s?q={a}&format=3"), {"a": value})
    assert prepared.url == f"https://h.example/s?{query}"


def test_fragment_and_query_key_placeholders() -> None:
    """Values in a query key or a fragment are encoded too; extra query goes before #."""
    prepared = build_request(
        make("https://h.example/s?{a}=1#{b}"), {"a": "x=y&z", "b": "#f g", "c": 1}
    )
    assert prepared.url == "https://h.example/s?x%3Dy%26z=1&c=1#%23f%20g"


def test_literal_template_text() -> None:
    """Template text: spaces/non-ASCII encoded, {{ }} literal braces, lone %."""
    prepared = build_request(
        make("https://Bücher.example/a b/é?j={{%22k%22}}&p=100%&q=%41"), {}
    )
    assert prepared.url == (
        "https://xn--bcher-kva.example/a%20b/%C3%A9?j=%7B%22k%22%7D&p=100%25&q=%41"
    )


def test_host_cannot_be_changed() -> None:
    """Values that look like an authority stay in the path."""
    for value in ("@evil.example", "//evil.example", "evil.example:80/x", "http://e"):
        prepared = build_request(make("https://h.example:8443/{a}"), {"a": value})
        parsed = URL(prepared.url, encoded=True)
        assert (parsed.host, parsed.port) == ("h.example", 8443)
        assert parsed.raw_path.count("/") == 1


def test_weather_example() -> None:
    """The example get_weather: city in the path, format=3 kept, no body."""
    definition = make(
        "https://wttr.in/{city}?format=3", props=("city",), required=("city",)
    )
    prepared = build_request(definition, {"city": "São Paulo"})
    assert prepared == PreparedRequest(
        method="GET",
        url="https://wttr.in/S%C3%A3o%20Paulo?format=3",
        headers={},
        json_body=None,
    )
    assert prepared.body() is None


def test_remaining_arguments_in_query() -> None:
    """Consumed arguments are not resent; the rest become the query, in order."""
    prepared = build_request(
        make("https://h.example/i/{a}?x=1", method="DELETE", props=("a", "z", "b")),
        {"z": "last?", "a": "5", "b": 2, "extra": True},
    )
    assert prepared.url == "https://h.example/i/5?x=1&z=last%3F&b=2&extra=true"
    assert prepared.json_body is None
    assert prepared.headers == {}


@pytest.mark.parametrize(
    ("arguments", "query"),
    [
        ({"a": [1, "x y", None, True]}, "?a=1&a=x%20y&a=true"),
        ({"a": {"k": [1]}}, "?a=%7B%22k%22%3A%5B1%5D%7D"),
        ({"a": None, "b": 1.0}, "?b=1"),
        ({"a": []}, ""),
        ({"a": None}, ""),
        ({"a": [[1, 2]]}, "?a=%5B1%2C2%5D"),
        ({"ключ": "v"}, "?%D0%BA%D0%BB%D1%8E%D1%87=v"),
    ],
)
def test_query_encoding_of_values(arguments: dict[str, Any], query: str) -> None:
    """Lists repeat the key; objects as JSON text; null omitted."""
    prepared = build_request(make("https://h.example/s"), arguments)
    assert prepared.url == f"https://h.example/s{query}"


def test_query_appended_after_trailing_separators() -> None:
    """'?' or '&' at the end of the template are reused."""
    assert build_request(make("https://h.example/s?"), {"a": 1}).url == (
        "https://h.example/s?a=1"
    )
    assert build_request(make("https://h.example/s?x=1&"), {"a": 1}).url == (
        "https://h.example/s?x=1&a=1"
    )
    assert build_request(make("https://h.example"), {"a": 1}).url == (
        "https://h.example?a=1"
    )


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "PURGE", "report"])
def test_body_verbs(method: str) -> None:
    """Remaining arguments become a JSON body with Content-Type."""
    prepared = build_request(
        make("https://h.example/i/{a}", method=method), {"a": "5", "b": None, "q": 2}
    )
    assert prepared.method == method.upper()
    assert prepared.url == "https://h.example/i/5"
    assert prepared.json_body == {"b": None, "q": 2}
    assert prepared.headers == {"Content-Type": "application/json"}
    assert prepared.body() == b'{"b":null,"q":2}'


def test_empty_body_is_empty_object() -> None:
    """Nothing left: {}."""
    prepared = build_request(make("https://h.example/i/{a}", method="POST"), {"a": 1})
    assert prepared.json_body == {}
    assert prepared.body() == b"{}"


def test_own_content_type_is_kept() -> None:
    """A definition's Content-Type (any case) wins."""
    prepared = build_request(
        make(
            "https://h.example/",
            method="POST",
            headers={"content-TYPE": "application/merge-patch+json"},
        ),
        {"a": "é"},
    )
    assert prepared.headers == {"content-TYPE": "application/merge-patch+json"}
    assert prepared.body() == '{"a":"é"}'.encode()


def test_header_placeholders() -> None:
    """Header values are substituted raw and not resent."""
    definition = make(
        "https://h.example/notes",
        method="POST",
        props=("token", "text", "n"),
        required=("token", "text"),
        headers={"Authorization": "Bearer {token}", "X-N": "{n}/{n}"},
    )
    prepared = build_request(
        definition, {"token": "s3cr et/?", "text": "hello", "n": 1.0}
    )
    assert prepared.headers == {
        "Authorization": "Bearer s3cr et/?",
        "X-N": "1/1",
        "Content-Type": "application/json",
    }
    assert prepared.json_body == {"text": "hello"}


@pytest.mark.parametrize("bad", ["a\r\nX-Evil: 1", "a\nb", "a\rb", "a\x00b", "\x7f"])
def test_header_injection_refused(bad: str) -> None:
    """CR, LF, NUL (any control character) in a header value: refused."""
    definition = make(
        "https://h.example/", props=("token",), headers={"Authorization": "B {token}"}
    )
    text = build_error(definition, {"token": bad})
    assert text == (
        "Error: invalid value for argument 'token' in tool 't': "
        "header values cannot contain control characters (CR, LF, NUL)"
    )
    assert bad not in text


def test_header_tab_allowed() -> None:
    """HTAB is a legal header character."""
    definition = make("https://h.example/", headers={"X-A": "{a}"})
    assert build_request(definition, {"a": "x\ty"}).headers == {"X-A": "x\ty"}


def test_missing_required_argument() -> None:
    """Exact text, for absent and null values, in the schema's order."""
    definition = make(
        "https://wttr.in/{city}?format=3", props=("city", "x"), required=("x", "city")
    )
    definition = ToolDefinition(
        name="get_weather",
        description="",
        parameters=definition.parameters,
        url=definition.url,
        method="GET",
        headers={},
        timeout=None,
    )
    assert build_error(definition, {}) == (
        "Error: missing required argument 'x' for tool 'get_weather'"
    )
    assert build_error(definition, {"x": 1, "city": None}) == (
        "Error: missing required argument 'city' for tool 'get_weather'"
    )


def test_placeholder_without_value() -> None:
    """A placeholder of an optional parameter still needs a value."""
    definition = make("https://h.example/{a}", headers={"X": "{b}"})
    assert build_error(definition, {"b": "1"}) == (
        "Error: missing required argument 'a' for tool 't'"
    )
    assert build_error(definition, {"a": "1"}) == (
        "Error: missing required argument 'b' for tool 't'"
    )


@pytest.mark.parametrize("arguments", [None, [], "city=Rome", {1: "x"}])
def test_arguments_must_be_a_mapping(arguments: Any) -> None:
    """Not an object with string keys."""
    assert build_error(make("https://h.example/"), arguments) == (
        "Error: arguments for tool 't' must be a JSON object"
    )


def test_non_finite_numbers_refused() -> None:
    """NaN/inf have no text form and no JSON form."""
    assert build_error(make("https://h.example/{a}"), {"a": float("nan")}) == (
        "Error: invalid value for argument 'a' in tool 't': numbers must be finite"
    )
    assert build_error(make("https://h.example/"), {"a": [float("inf")]}) == (
        "Error: invalid value for argument 'a' in tool 't': numbers must be finite"
    )
    assert build_error(make("https://h.example/", "POST"), {"a": float("inf")}) == (
        "Error: arguments for tool 't' cannot be sent as JSON"
    )


def test_hand_built_definitions() -> None:
    """Definitions constructed directly are still checked."""

    def direct(url: str, method: str = "GET") -> ToolDefinition:
        return ToolDefinition(
            name="x",
            description="",
            parameters={"type": "object", "properties": {}},
            url=url,
            method=method,
            headers={},
            timeout=None,
        )

    assert build_error(direct("https://h.example/", "GE T"), {}) == (
        "Error: invalid HTTP method 'GE T' for tool 'x'"
    )
    assert build_error(direct("ftp://h.example/"), {}) == (
        "Error: invalid URL for tool 'x': must be an http or https URL"
    )
    assert build_request(direct("https://h.example/", "get"), {}).method == "GET"
