"""The vocabulary of call markup: the Qwen and Hermes tags, what one piece of
markup gave, problems. Every family's markers, and what each opens, are
`markers.py`."""

from __future__ import annotations

from dataclasses import dataclass, field
import json
import re
from typing import Any

TOOL_CALL = "<tool_call>"
TOOL_CALL_END = "</tool_call>"
FUNC = "<function="
FUNC_END = "</function>"
PARAM = "<parameter="
PARAM_END = "</parameter>"
THINK = "<think>"
THINK_END = "</think>"
# Qwen's and Hermes' templates wrap a tool's result in these: a model that
# writes one echoes a result (never speech).
TOOL_RESPONSE = "<tool_response>"
TOOL_RESPONSE_END = "</tool_response>"

MAX_SNIPPET = 160
DECODER = json.JSONDecoder(strict=False)
_THINK_RE = re.compile(r"<think>(.*?)(?:</think>|\Z)", re.DOTALL)

type RawCall = tuple[str, dict[str, Any]]


@dataclass(slots=True)
class Parsed:
    """What one piece of call markup gave."""

    calls: list[RawCall] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    rest: str = ""  # text after the calls of an unclosed block: released as text
    repaired: int = 0  # calls read from near-JSON (`repair.py`)
    stop: bool = False  # the reply ran off: read no further
    channel: str | None = None  # a gpt-oss header: what its message is


def problem(reason: str, markup: str) -> str:
    """Model-facing error text for markup that could not be used."""
    snippet = markup.strip()
    if len(snippet) > MAX_SNIPPET:
        snippet = snippet[: MAX_SNIPPET - 1] + "…"
    return f"Error: could not parse tool call: {reason}: {snippet}"


def json_reason(err: Exception, *, position: bool = True) -> str:
    """Why JSON did not decode, for a problem text."""
    if isinstance(err, json.JSONDecodeError):
        return f"{err.msg} at character {err.pos}" if position else err.msg
    if isinstance(err, RecursionError):
        return "nested too deeply"
    return str(err)


def strip_think(body: str, out: Parsed) -> str:
    """``body`` without its ``<think>`` blocks, whose text goes to ``out``."""
    if THINK not in body:
        return body

    def keep(m: re.Match[str]) -> str:
        out.thinking.append(m.group(1))
        return ""

    return _THINK_RE.sub(keep, body)
