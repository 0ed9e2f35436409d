"""Request bodies and optional placeholders, as they arrive at a server on
127.0.0.1: JSON templates, forms, text; a value never changes the
structure of the request it is placed in."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl

import aiohttp
import pytest

from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinition,
    parse_tools,
)
from custom_components.http_tools_agent.engine.executor import Outcome, run_tool

from .conftest import RecordingServer

# Everything a model could write to break out of where a value stands.
HOSTILE = (
    'a"b\'c&d=e+f%20g\r\nX-Injected: 1\r\n\r\n{secret:token}{{x}}</>{"k":1}'
    "\u2028\x00 end"
)


SCHEMAS: dict[str, Any] = {
    "message": {"type": "string"},
    "title": {"type": "string"},
    "priority": {"type": "integer"},
    "tags": {"type": "array", "items": {"type": "string"}},
}


def tool(
    server: RecordingServer, props: tuple[str, ...] = ("message",), **fields: Any
) -> ToolDefinition:
    """One validated tool pointed at the server, declaring `props`."""
    raw: dict[str, Any] = {
        "name": "t",
        "url": server.base + "/hook",
        "parameters": {
            "type": "object",
            "properties": {name: SCHEMAS[name] for name in props},
        },
    }
    raw.update(fields)
    (definition,) = parse_tools([raw])
    return definition


async def test_json_template_nested_fixed_and_typed(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Fixed fields and nesting stay as written; a string that is exactly one
    placeholder takes the argument's JSON type; text around a placeholder
    makes a string; secrets fill their place; unused arguments go nowhere."""
    definition = tool(
        server,
        ("message", "title", "priority", "tags"),
        body={
            "topic": "home",
            "message": "{message}",
            "priority": "{priority}",
            "tags": "{tags}",
            "title": "Alert: {title}",
            "token": "{secret:token}",
            "actions": [{"action": "view", "url": "https://home.lan/"}],
            "retain": False,
            "timer": None,
        },
    )
    result = await run_tool(
        session,
        definition,
        {
            "message": "Disk full",
            "priority": 4,
            "tags": ["warning", "cd"],
            "title": "NAS",
        },
        secrets={"token": "tk_123"},
    )
    assert result.ok
    assert server.last.target == "POST /hook"
    assert server.last.headers["Content-Type"] == "application/json"
    assert json.loads(server.last.body) == {
        "topic": "home",
        "message": "Disk full",
        "priority": 4,
        "tags": ["warning", "cd"],
        "title": "Alert: NAS",
        "token": "tk_123",
        "actions": [{"action": "view", "url": "https://home.lan/"}],
        "retain": False,
        "timer": None,
    }


async def test_optional_placeholders(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A header, a query parameter or a body field whose optional
    placeholders are all absent is left out; given, they are sent."""
    definition = tool(
        server,
        url=server.base + "/hook?source=ha&title={title?}&p={priority?}",
        headers={"X-Title": "{title?}", "X-Fixed": "yes"},
        body={
            "message": "{message}",
            "title": "{title?}",
            "tags": ["a", "{priority?}"],
        },
        parameters={
            "type": "object",
            "properties": {
                "message": {"type": "string"},
                "title": {"type": "string"},
                "priority": {"type": "integer"},
            },
            "required": ["message"],
        },
    )
    await run_tool(session, definition, {"message": "hi"})
    bare = server.last
    assert bare.target == "POST /hook?source=ha"
    assert "X-Title" not in bare.headers
    assert bare.headers["X-Fixed"] == "yes"
    assert json.loads(bare.body) == {"message": "hi", "tags": ["a"]}

    await run_tool(
        session, definition, {"message": "hi", "title": "Door", "priority": 5}
    )
    full = server.last
    assert full.target == "POST /hook?source=ha&title=Door&p=5"
    assert full.headers["X-Title"] == "Door"
    assert json.loads(full.body) == {"message": "hi", "title": "Door", "tags": ["a", 5]}

    # A required placeholder stays required.
    missing = await run_tool(session, definition, {"title": "Door"})
    assert missing.text == "Error: missing required argument 'message' for tool 't'"
    assert missing.outcome is Outcome.NOT_SENT
    assert len(server.requests) == 2


async def test_a_query_left_empty_has_no_question_mark(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """`?title={title?}` without a title: the URL ends at its path."""
    definition = tool(
        server, ("title",), url=server.base + "/publish?title={title?}", method="GET"
    )
    await run_tool(session, definition, {})
    assert server.last.target == "GET /publish"


async def test_form_body(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """application/x-www-form-urlencoded: fixed fields, secrets, optional
    fields, lists as repeated keys; every value encoded."""
    definition = tool(
        server,
        ("message", "title", "priority", "tags"),
        body_format="form",
        body={
            "token": "{secret:app}",
            "message": "{message}",
            "title": "{title?}",
            "priority": "{priority?}",
            "tags": "{tags?}",
            "html": 1,
        },
    )
    await run_tool(
        session,
        definition,
        {"message": "Garage open & door ajar", "tags": ["a", "b"]},
        secrets={"app": "azGDORe+K8/="},
    )
    sent = server.last
    assert sent.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert sent.body == (
        b"token=azGDORe%2BK8%2F%3D&message=Garage+open+%26+door+ajar"
        b"&tags=a&tags=b&html=1"
    )
    assert parse_qsl(sent.body.decode()) == [
        ("token", "azGDORe+K8/="),
        ("message", "Garage open & door ajar"),
        ("tags", "a"),
        ("tags", "b"),
        ("html", "1"),
    ]


async def test_form_of_leftover_arguments(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Without a template a form carries what no placeholder used."""
    definition = tool(
        server,
        ("message", "title", "priority"),
        body_format="form",
        headers={"X-T": "{title}"},
    )
    await run_tool(session, definition, {"title": "t", "message": "m n", "priority": 2})
    assert server.last.headers["X-T"] == "t"
    assert server.last.body == b"message=m+n&priority=2"


async def test_text_body(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """text/plain: the template's text with the values in it, as they are
    (ntfy publishes the body as the message)."""
    definition = tool(
        server,
        ("message", "title", "priority"),
        body_format="text",
        body="{message}",
        headers={"Title": "{title?}", "Priority": "{priority?}"},
    )
    await run_tool(session, definition, {"message": "Washing machine done"})
    assert server.last.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert server.last.body == b"Washing machine done"
    assert "Title" not in server.last.headers
    assert "Priority" not in server.last.headers
    await run_tool(
        session,
        definition,
        {"message": "Dryer done", "title": "Laundry", "priority": 4},
    )
    assert (server.last.headers["Title"], server.last.headers["Priority"]) == (
        "Laundry",
        "4",
    )


async def test_own_content_type_wins(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A tool's own Content-Type is sent, not the format's."""
    definition = tool(
        server,
        body_format="text",
        body="{message}",
        headers={"content-type": "text/markdown"},
    )
    await run_tool(session, definition, {"message": "**hi**"})
    assert server.last.headers.getall("Content-Type") == ["text/markdown"]


@pytest.mark.parametrize("body_format", ["json", "form", "text"])
async def test_values_never_change_the_body_structure(
    server: RecordingServer, session: aiohttp.ClientSession, body_format: str
) -> None:
    """Quotes, `&`, `=`, CRLF, braces and a placeholder-looking value stay
    data, in every format: the server reads back exactly the fields the
    template has, with the value whole in its own."""
    body: Any = (
        "Note: {message}"
        if body_format == "text"
        else {"message": "{message}", "fixed": "x"}
    )
    definition = tool(server, body_format=body_format, body=body)
    result = await run_tool(
        session, definition, {"message": HOSTILE}, secrets={"token": "s3cret!"}
    )
    assert result.ok
    sent = server.last.body
    assert b"s3cret" not in sent
    if body_format == "json":
        assert json.loads(sent) == {"message": HOSTILE, "fixed": "x"}
    elif body_format == "form":
        assert parse_qsl(sent.decode(), keep_blank_values=True) == [
            ("message", HOSTILE),
            ("fixed", "x"),
        ]
    else:
        assert sent.decode() == "Note: " + HOSTILE
    assert "X-Injected" not in server.last.headers


async def test_header_values_never_carry_line_breaks(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """An optional header with a value is checked like any other."""
    definition = tool(server, ("title",), headers={"Title": "{title?}"})
    result = await run_tool(session, definition, {"title": "a\r\nX-Admin: 1"})
    assert result.text == (
        "Error: invalid value for argument 'title' in tool 't': "
        "header values cannot contain control characters (CR, LF, NUL)"
    )
    assert server.requests == []


async def test_body_on_a_query_verb_and_no_leftovers(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """With a template, the body is the template: a read sent as POST with a
    fixed filter sends only it."""
    definition = tool(
        server,
        (),
        url=server.base + "/printer/objects/query",
        body={"objects": {"print_stats": None, "extruder": ["temperature", "target"]}},
        read_only=True,
    )
    assert definition.read_only
    await run_tool(session, definition, {"extra": "ignored"})
    assert server.last.body == (
        b'{"objects":{"print_stats":null,"extruder":["temperature","target"]}}'
    )


async def test_values_that_cannot_be_json(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """A NaN typed into a JSON template: refused, nothing sent."""
    definition = tool(server, ("priority",), body={"p": "{priority}"})
    result = await run_tool(session, definition, {"priority": float("nan")})
    assert result.text == "Error: arguments for tool 't' cannot be sent as JSON"
    assert server.requests == []


async def test_an_object_emptied_by_left_out_members_is_left_out(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Hue's light body with only a brightness: `on` is not sent as `{}`
    (that would switch nothing but is refused by strict APIs), at any depth;
    a top-level body left empty is still sent as `{}` (valid JSON for the
    Content-Type it carries)."""
    definition = tool(
        server,
        url=server.base + "/hook",
        method="PUT",
        body={
            "on": {"on": "{on?}"},
            "dimming": {"brightness": "{brightness?}"},
            "effects": {"deep": {"deeper": "{effect?}"}, "list": ["{effect?}"]},
        },
        parameters={
            "type": "object",
            "properties": {
                "on": {"type": "boolean"},
                "brightness": {"type": "integer"},
                "effect": {"type": "string"},
            },
        },
    )
    await run_tool(session, definition, {"brightness": 40})
    assert server.last.body == b'{"dimming":{"brightness":40}}'
    await run_tool(session, definition, {"on": True, "effect": "candle"})
    assert json.loads(server.last.body) == {
        "on": {"on": True},
        "effects": {"deep": {"deeper": "candle"}, "list": ["candle"]},
    }
    await run_tool(session, definition, {})
    assert server.last.body == b"{}"
    # An object written empty stays: only what left-out members emptied goes.
    written = tool(server, ("message",), body={"m": "{message?}", "opts": {}})
    await run_tool(session, written, {})
    assert server.last.body == b'{"opts":{}}'


async def test_home_assistant_templates_are_sent_as_written(
    server: RecordingServer, session: aiohttp.ClientSession
) -> None:
    """Home Assistant's /api/template body keeps its Jinja as written
    (`{{ … }}` with its spaces and nested braces, `{% … %}`, `{# … #}`);
    the model's value reaches it as a variable, never inside the code; the
    old `{{x}}` escape still writes a literal `{x}` (and `{{{{ … }}}}`,
    the old way to write Jinja, still `{{ … }}`)."""
    template = (
        "{# the lights #}{% if is_state('sun.sun', 'below_horizon') %}"
        "{{ states(entity) }} {{ {'a': {'b': 1}}['a'] }}{%- endif %}"
    )
    definition = tool(
        server,
        ("message",),
        body={
            "template": template,
            "variables": {"entity": "{message}"},
            "note": "{{x}} stays a brace",
            "escaped": "{{{{ states(entity) }}}}",
        },
    )
    result = await run_tool(session, definition, {"message": "sensor.x"})
    assert result.ok, result.text
    assert json.loads(server.last.body) == {
        "template": template,
        "variables": {"entity": "sensor.x"},
        "note": "{x} stays a brace",
        "escaped": "{{ states(entity) }}",
    }


@pytest.mark.parametrize(
    ("body", "told"),
    [
        (
            "{% if x on",
            "'{%' at position 0 opens a Home Assistant template that "
            "is not closed with '%}'",
        ),
        ("{{ states('x') ", "not closed with '}}'"),
        ("{ if }", "invalid placeholder at position 0"),
    ],
)
def test_a_broken_template_says_how_to_write_one(body: str, told: str) -> None:
    """The error names the field and how Jinja is written."""
    with pytest.raises(ValueError, match="body") as caught:
        parse_tools(
            [
                {
                    "name": "t",
                    "url": "http://127.0.0.1/api/template",
                    "method": "POST",
                    "body": {"template": body},
                }
            ]
        )
    text = str(caught.value)
    assert told in text
    assert "body" in text
    assert "'{% if ... %}'" in text
