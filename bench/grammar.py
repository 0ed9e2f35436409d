"""The grammar experiment of P4 (issue 11, item 10): constrain a round's
output to "plain text, or one call to an offered tool with schema-valid
arguments" with a GBNF grammar (llama.cpp and llama-cpp-python take
`grammar` in a chat-completions request), and measure whether it helps.

Only the benchmark uses this: `grammar_in_requests()` adds the grammar to
every round but the closing request (which asks for words only). The JSON
Schema -> GBNF conversion covers what the demo tools use (objects of
strings, integers, numbers, booleans and enums).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
import json
import re
from typing import Any
from unittest import mock

from custom_components.http_tools_agent.server.client import Request
from custom_components.http_tools_agent.turn import (
    request as request_module,
    state as turn_module,
)

_BASICS = r"""
ws ::= [ ]?
string ::= "\"" ( [^"\\\x00-\x1f] | "\\" ["\\/bfnrt] )* "\""
integer ::= "-"? [0-9]+
number ::= "-"? [0-9]+ ("." [0-9]+)?
boolean ::= "true" | "false"
text ::= [^{<\[`\x00-\x20] [^\x00]*
"""


def _rule_name(name: str) -> str:
    return re.sub(r"[^a-zA-Z0-9-]", "-", name)


def _literal(value: str) -> str:
    return json.dumps(json.dumps(value))


def _value(schema: Mapping[str, Any]) -> str:
    if isinstance(enum := schema.get("enum"), list):
        return " | ".join(_literal(str(v)) for v in enum)
    kind = schema.get("type")
    if kind in ("integer", "number", "boolean"):
        return str(kind)
    return "string"


def _arguments(schema: Mapping[str, Any]) -> str:
    """`{"a": …, "b": …}`: the required properties, then any optional ones."""
    properties = schema.get("properties") or {}
    required = [n for n in schema.get("required") or [] if n in properties]
    optional = [n for n in properties if n not in required]
    parts = [
        f'{_literal(name)} ws ":" ws ({_value(properties[name])})' for name in required
    ]
    optional_parts = [
        f'{_literal(name)} ws ":" ws ({_value(properties[name])})' for name in optional
    ]
    body = ' ws "," ws '.join(parts)
    for part in optional_parts:
        body = f'{body} (ws "," ws {part})?' if body else f"({part})?"
    return f'"{{" ws {body} ws "}}"' if body else '"{" ws "}"'


def gbnf(tools: list[Mapping[str, Any]]) -> str:
    """Plain text, or one `{"name": …, "arguments": …}` call of a tool."""
    rules = []
    calls = []
    for tool in tools:
        function = tool["function"]
        name = _rule_name(function["name"])
        rules.append(
            f'call-{name} ::= "{{" ws "\\"name\\"" ws ":" ws '
            f'{_literal(function["name"])} ws "," ws "\\"arguments\\"" ws ":" ws '
            f'{_arguments(function.get("parameters") or {})} ws "}}"'
        )
        calls.append(f"call-{name}")
    root = f"root ::= text | {' | '.join(calls)}" if calls else "root ::= text"
    return "\n".join([root, *rules]) + _BASICS


@contextmanager
def grammar_in_requests() -> Iterator[None]:
    """Every round's request but the closing one carries the grammar."""
    original = turn_module.Turn.request

    def request(
        self: turn_module.Turn, ask: request_module.Ask = request_module.Ask.ROUND
    ) -> Request:
        built = original(self, ask)
        if self.tools and ask is not request_module.Ask.CLOSING:
            built.extra_body["grammar"] = gbnf(list(self.tools))
        return built

    with mock.patch.object(turn_module.Turn, "request", request):
        yield
