"""Which calls of a reply run: the rules a small model's reply meets.

A call identical to one already answered in the turn is a repeat (`call_key`);
a reply that recites the tool list is no request for all of them
(`recites_tools`); calls over the turn's limit are refused
(`over_budget_error`). Refused calls are answered with an `Error: …` result
the model reads.
"""

from __future__ import annotations

from collections.abc import Mapping
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
