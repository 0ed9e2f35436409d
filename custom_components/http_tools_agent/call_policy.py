"""Which calls of a reply run: the rules a small model's reply meets.

A call identical to one already answered in the turn is a repeat (`call_key`);
a reply that recites the tool list is no request for all of them
(`recites_tools`), nor is a call whose arguments are its tool's parameter
schema (`copies_schema`); calls over the turn's limit are refused
(`over_budget_error`). Refused calls are answered with an `Error: …` result
the model reads. On the request for the answer, only more of what the user
asked runs (`MoreOf`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import json
import secrets
import string
from typing import Any

# A reply that recites the tool list (every one of at least 4 offered tools,
# or, of at least 5, two thirds and four or more in the order they are
# offered) is no request for all of them: small models do it for small talk,
# or after the one call a request needed. None of those calls runs, the
# first time (the same calls again are taken as meant).
ALL_TOOLS_MIN = 4
RECITAL_MIN = 5
ALL_TOOLS_ERROR = (
    "Error: not run: the reply called the tools one after the other as they "
    "are listed. Call only the tool the request needs, or answer without tools."
)


def recites_tools(called: list[str], offered: list[str]) -> bool:
    """Whether the tools `called` (in order, distinct) recite `offered`."""
    if len(offered) < ALL_TOOLS_MIN:
        return False
    if set(called) >= set(offered):
        return True
    positions = [offered.index(name) for name in called if name in offered]
    return (
        len(offered) >= RECITAL_MIN
        and len(positions) >= max(4, -(-2 * len(offered) // 3))
        and positions == sorted(positions)
    )


# Small models that recite the tools block write each tool's parameter schema
# where its arguments go (`{"type": "object", "properties": {...}}`);
# Qwen2.5-0.5B did for "Good night.".
SCHEMA_COPY_ERROR = (
    "Error: not run: the arguments are the tool's parameter schema, not "
    "values. Call the tool with values for its arguments, or answer without "
    "tools."
)
_SCHEMA_KEYS = frozenset({"type", "properties"})


def copies_schema(arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> bool:
    """Whether a call's `arguments` are a JSON Schema rather than values: they
    hold `type` and `properties` and the tool takes no argument of either name."""
    properties = schema.get("properties")
    declared = set(properties) if isinstance(properties, Mapping) else set()
    return (
        arguments.keys() >= _SCHEMA_KEYS
        and isinstance(arguments["properties"], Mapping)
        and not _SCHEMA_KEYS & declared
    )


@dataclass(frozen=True, slots=True)
class MoreOf:
    """The calls that run on the request for the answer: a tool the turn
    already called, again, for something else the user named.

    Asked "Rome and Paris?", a small model calls the weather for Rome only;
    asked for the answer, or to call for what the results leave out, it
    calls Paris, then recites the other tools. Those other calls never run,
    and neither does a call whose text is not the user's (an invented city)
    or is all asked for already: every text argument must be words of the
    user's request, and one of them new for that tool.
    """

    # Per tool the turn called, the text values its calls had (lower-cased).
    asked: Mapping[str, frozenset[str]]
    request: str  # the user's words, lower-cased

    def allows(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """Whether this call asks for more of what the user asked."""
        texts = texts_of(arguments)
        return (
            name in self.asked
            and bool(texts)
            and all(text in self.request for text in texts)
            and not texts <= self.asked[name]
        )


def texts_of(arguments: Mapping[str, Any]) -> frozenset[str]:
    """A call's text arguments, lower-cased (as `MoreOf` compares them)."""
    return frozenset(
        v.strip().lower()
        for v in arguments.values()
        if isinstance(v, str) and v.strip()
    )


def over_budget_error(limit: int) -> str:
    """What the model reads for a call over the turn's limit."""
    return (
        f"Error: not run: this turn already made {limit} tool calls, the limit. "
        "Answer with the results you have."
    )


_ID_CHARS = string.ascii_letters + string.digits


def new_call_id() -> str:
    """An id for a call the server sent without one (text calls).

    Nine letters and digits: Mistral's chat templates refuse any other id.
    """
    return "".join(secrets.choice(_ID_CHARS) for _ in range(9))


def call_key(name: str, arguments: Mapping[str, Any]) -> str:
    """Identify a call by tool and arguments (to spot a repeated call)."""
    try:
        return name + json.dumps(arguments, sort_keys=True, default=str)
    except ValueError, RecursionError:
        return f"{name}#{id(arguments)}"  # pathological arguments: never equal
