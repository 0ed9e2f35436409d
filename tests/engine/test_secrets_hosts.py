"""Secrets in templates and requests, the host policy, the schema checks and
the `enabled` / `verify_ssl` fields (no Home Assistant)."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinitionError,
    check_secrets,
    parse_tools,
)
from custom_components.http_tools_agent.engine.hosts import HostPolicy
from custom_components.http_tools_agent.engine.requests import (
    RequestBuildError,
    build_request,
)
from custom_components.http_tools_agent.engine.templates import (
    Placeholder,
    Secret,
    parse_template,
)


def one(**fields: Any) -> Any:
    """Parse one definition."""
    return parse_tools([{"name": "t", "url": "https://api.example/x", **fields}])[0]


def test_secret_syntax() -> None:
    """`{secret:name}` is a secret, `{name}` a placeholder, `{{` a brace."""
    assert parse_template("Bearer {secret:k-1} {a}{{") == (
        "Bearer ",
        Secret("k-1"),
        " ",
        Placeholder("a"),
        "{",
    )
    for bad in ("{secret:}", "{secret:a b}", "{secrets:a}", "{secret:a:b}"):
        with pytest.raises(ValueError, match="invalid placeholder"):
            parse_template(bad)


def test_secret_references_and_check() -> None:
    """Each field's secrets; a missing one names tool and field."""
    definition = one(
        url="https://api.example/{secret:path_key}?k={secret:key}",
        headers={"X-Key": "{secret:key}", "X-Other": "plain"},
    )
    assert definition.secret_references == {
        "url": frozenset({"path_key", "key"}),
        "headers.X-Key": frozenset({"key"}),
    }
    check_secrets([definition], ["key", "path_key"])
    with pytest.raises(ToolDefinitionError) as info:
        check_secrets([definition], ["key"])
    assert str(info.value) == "tool #0 't': url: secret 'path_key' is not defined"


def test_secrets_are_never_in_the_host() -> None:
    """The host stays fixed: no secret may choose it either."""
    with pytest.raises(ToolDefinitionError, match="not in the scheme or host"):
        one(url="https://{secret:host}/x")


def test_secrets_fill_only_from_secrets() -> None:
    """Arguments never fill a secret; values are percent-encoded in the URL and
    kept as they are in headers; the prepared request lists them for scrubbing."""
    definition = one(
        url="https://api.example/{secret:key}?q={q}",
        headers={"Authorization": "Bearer {secret:key}"},
        parameters={"type": "object", "properties": {"q": {"type": "string"}}},
        method="GET",
    )
    prepared = build_request(definition, {"q": "x", "key": "model"}, {"key": "a/b+c"})
    assert prepared.url == "https://api.example/a%2Fb%2Bc?q=x&key=model"
    assert prepared.headers["Authorization"] == "Bearer a/b+c"
    assert "a/b+c" in prepared.secret_values
    with pytest.raises(RequestBuildError) as info:
        build_request(definition, {"key": "model"})
    assert info.value.text == "Error: secret 'key' of tool 't' is not defined"


@pytest.mark.parametrize(
    ("entries", "allowed", "refused"),
    [
        ([], ["anything.example", "10.0.0.1"], []),
        (["Example.COM"], ["example.com", "EXAMPLE.com."], ["a.example.com", "x.org"]),
        (["*.lan"], ["hue.lan", "a.b.lan"], ["lan", "hue.lan.evil.com"]),
        (["192.168.1.0/24", "::1"], ["192.168.1.7", "::1", "[::1]"], ["192.168.2.1"]),
        (["192.168.1.20"], ["192.168.1.20"], ["192.168.1.21", "hue.lan"]),
        (["bücher.example"], ["xn--bcher-kva.example"], []),
    ],
)
def test_host_policy(
    entries: list[str], allowed: list[str], refused: list[str]
) -> None:
    """Names, wildcards, addresses and networks; empty allows any host."""
    policy = HostPolicy.parse(entries)
    assert policy.restricted is bool(entries)
    for host in allowed:
        assert policy.allows(host), host
    for host in refused:
        assert not policy.allows(host), host


@pytest.mark.parametrize(
    "entry", ["http://x.org", "x.org:8080", "x.org/path", "300.1.1.1/8", "a b"]
)
def test_host_policy_refuses_urls_and_ports(entry: str) -> None:
    """An entry with a scheme, port or path is refused, naming it."""
    with pytest.raises(ValueError, match="is not a host name"):
        HostPolicy.parse([entry])


@pytest.mark.parametrize(
    ("schema", "field", "message"),
    [
        ({"type": "strng"}, "parameters.properties.a.type", "'strng' is not a JSON"),
        ({"type": []}, "parameters.properties.a.type", "must not be an empty list"),
        ({"enum": []}, "parameters.properties.a.enum", "must be a non-empty list"),
        ({"minimum": "1"}, "parameters.properties.a.minimum", "must be a number"),
        ({"maxLength": -1}, "parameters.properties.a.maxLength", "non-negative"),
        ({"pattern": "("}, "parameters.properties.a.pattern", "regular expression"),
        (
            {"type": "array", "items": {"type": "nope"}},
            "parameters.properties.a.items.type",
            "'nope' is not",
        ),
        (
            {"type": "object", "properties": {"b": {"description": 5}}},
            "parameters.properties.a.properties.b.description",
            "must be a string",
        ),
        ({"anyOf": []}, "parameters.properties.a.anyOf", "non-empty list of schemas"),
    ],
)
def test_parameter_schema_checks(
    schema: dict[str, Any], field: str, message: str
) -> None:
    """A malformed JSON Schema keyword names its exact place."""
    with pytest.raises(ToolDefinitionError) as info:
        one(parameters={"type": "object", "properties": {"a": schema}})
    [problem] = info.value.problems
    assert problem.field == field
    assert message in problem.message


def test_valid_schemas_pass() -> None:
    """Common tool schemas are accepted as they are."""
    schema = {
        "type": "object",
        "properties": {
            "unit": {"type": "string", "enum": ["C", "F"], "description": "Unit"},
            "days": {"type": ["integer", "null"], "minimum": 1, "maximum": 7},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 3},
        },
        "required": ["unit"],
        "additionalProperties": False,
    }
    assert one(parameters=schema).parameters == schema


def test_enabled_and_verify_ssl() -> None:
    """Both default to true and round-trip only when false."""
    definition = one()
    assert (definition.enabled, definition.verify_ssl) == (True, True)
    assert "enabled" not in definition.as_dict()
    definition = one(enabled=False, verify_ssl=False)
    assert definition.as_dict()["enabled"] is False
    assert definition.as_dict()["verify_ssl"] is False
    assert parse_tools([definition.as_dict()])[0] == definition
    with pytest.raises(ToolDefinitionError, match="enabled: must be true or false"):
        one(enabled="yes")
