"""Call lists after a family's marker: JSON objects or Python calls.

Granite (``<|tool_call|>[…]``), Phi-4-mini (``functools[…]``), Nemotron
(``<TOOLCALL>[…]</TOOLCALL>``), LFM2 (``<|tool_call_start|>[…]
<|tool_call_end|>``), Llama 3.x (``<|python_tag|>{…}``, several joined by
``;``) and Llama 4 (``<|python_start|>[…]<|python_end|>``) write one of
two things after their marker: JSON call objects (:mod:`.json_calls`) or
Python calls (:mod:`.pythonic`). Mistral's ``[TOOL_CALLS]`` has a form of
its own as well: ``NAME[ARGS]{…}``, with ``[CALL_ID]ID`` before ``[ARGS]``
in some releases.
"""

from __future__ import annotations

from collections.abc import Callable
import re

from .json_calls import json_call
from .markup import DECODER, Parsed, json_reason, problem
from .names import ToolNames
from .pythonic import parse_pythonic

_SEPARATORS = " \t\r\n,;"


def parse_json_values(
    text: str, tools: ToolNames, *, closed: bool, out: Parsed, markup: str = ""
) -> str:
    """Calls from JSON values one after the other (objects or lists of
    them, apart by whitespace, ``,`` or ``;``), into ``out``; returns the
    text after the last one. Qwen2.5's template shows a call as
    ``{"name": <function-name>, …}``, and the model sometimes doubles the
    braces as Jinja would: ``{{"name": …}}`` is read as the call inside."""
    pos, n = 0, len(text)
    markup = markup or text.strip()
    while True:
        while pos < n and text[pos] in _SEPARATORS:
            pos += 1
        if pos >= n or text[pos] not in "{[":
            return text[pos:]
        try:
            value, pos = DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError) as err:
            doubled = _doubled(text, pos)
            if doubled is None:
                reason = f"invalid JSON ({json_reason(err, position=False)})"
                if not closed:
                    reason += ", the reply ended inside the call"
                out.problems.append(problem(reason, markup))
                return ""
            value, pos = doubled
        for item in value if isinstance(value, list) else [value]:
            got = json_call(item, tools, tagged=True)
            if isinstance(got, tuple):
                out.calls.append(got)
            else:
                out.problems.append(problem(got or "not a call", markup))


def _doubled(text: str, pos: int) -> tuple[object, int] | None:
    """``{{…}}``: the value inside the doubled braces, and where they end."""
    if not text.startswith("{{", pos):
        return None
    try:
        value, end = DECODER.raw_decode(text, pos + 1)
    except ValueError, RecursionError:
        return None
    while end < len(text) and text[end].isspace():
        end += 1
    if end < len(text) and text[end] == "}":
        return value, end + 1
    return None


def parse_call_list(body: str, tools: ToolNames, *, closed: bool) -> Parsed:
    """The calls after a marker: JSON, else Python calls."""
    out = Parsed()
    stripped = body.strip()
    if not stripped:
        out.problems.append(problem("empty call block", body))
        return out
    if stripped[0] == "{" or stripped[:2].replace(" ", "") in ("[{", "[]"):
        # Words after the calls inside a marker are no answer: dropped.
        parse_json_values(stripped, tools, closed=closed, out=out)
        if not out.calls and not out.problems:
            out.problems.append(problem("expected JSON calls", stripped))
        return out
    found = parse_pythonic(stripped, tools, tagged=True)
    return found if found is not None else out


_MISTRAL_CALL = re.compile(
    r"\s*(?P<name>[^\s\[\]{}]+)\s*(?:\[CALL_ID\]\s*(?P<id>[^\s\[]*)\s*)?(?:\[ARGS\])?\s*(?=\{)"
)


def parse_mistral(body: str, tools: ToolNames, *, closed: bool) -> Parsed:
    """What follows ``[TOOL_CALLS]``: a JSON list of calls (Mistral 7B,
    Nemo), or ``NAME[ARGS]{…}`` (Mistral Small 3.2, Ministral 3, Devstral,
    Magistral), perhaps with ``[CALL_ID]ID`` before ``[ARGS]``."""
    out = Parsed()
    stripped = body.strip()
    if stripped.startswith(("[", "{")):
        return parse_call_list(stripped, tools, closed=closed)
    m = _MISTRAL_CALL.match(body)
    if m is None:
        out.problems.append(problem("expected NAME[ARGS]{…}", "[TOOL_CALLS]" + body))
        return out
    try:
        args, end = DECODER.raw_decode(body, m.end())
    except (ValueError, RecursionError) as err:
        reason = f"invalid JSON arguments ({json_reason(err, position=False)})"
        out.problems.append(problem(reason, "[TOOL_CALLS]" + body))
        return out
    written = m.group("name")
    if not isinstance(args, dict):
        out.problems.append(problem("arguments must be a JSON object", body))
        return out
    out.calls.append((tools.resolve(written) or written, args))
    if body[end:].strip():
        out.rest = body[end:]
    return out


def harmony_call(written: str) -> Callable[..., Parsed]:
    """The parser of a gpt-oss message to ``functions.NAME``: its JSON."""

    def parse(body: str, tools: ToolNames, *, closed: bool) -> Parsed:
        out = Parsed()
        name = tools.resolve(written) or written
        try:
            args, _ = DECODER.raw_decode(body.strip())
        except (ValueError, RecursionError) as err:
            reason = f"invalid JSON arguments ({json_reason(err, position=False)})"
            if not closed:
                reason += ", the reply ended inside the call"
            out.problems.append(problem(reason, body))
            return out
        if not isinstance(args, dict):
            out.problems.append(problem("arguments must be a JSON object", body))
            return out
        out.calls.append((name, args))
        return out

    return parse
