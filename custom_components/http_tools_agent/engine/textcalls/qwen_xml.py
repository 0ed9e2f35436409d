"""Qwen3-Coder XML calls: ``<function=NAME><parameter=KEY>VALUE</parameter></function>``.

Values are typed by the tool's JSON Schema (:mod:`.coercion`).
``<function=NAME>{"key": ...}</function>`` (a JSON body, as Llama 3.x writes
it) is accepted too.
"""

from __future__ import annotations

from typing import Any

from .coercion import coerce_value
from .markup import (
    DECODER,
    FUNC,
    FUNC_END,
    PARAM,
    PARAM_END,
    Parsed,
    json_reason,
    problem,
    strip_think,
)
from .names import ToolNames


def parse_function(body: str, tools: ToolNames, *, closed: bool) -> Parsed:
    """One function (body: the text after ``<function=``).

    ``closed`` is False when the stream ended inside it: a function whose
    parameters are all complete still counts; text after the last
    ``</parameter>`` is returned in ``rest``.
    """
    out = Parsed()
    body = strip_think(body, out)
    markup = FUNC + body + (FUNC_END if closed else "")
    gt = body.find(">")
    if gt == -1:
        out.problems.append(problem("missing '>' after the function name", markup))
        return out
    written = body[:gt].strip().strip("\"'")
    if not written or any(c.isspace() or c in "<=" for c in written):
        out.problems.append(problem("invalid function name", markup))
        return out
    name = tools.resolve(written) or written
    inner = body[gt + 1 :]
    args: dict[str, Any] = {}
    rest = ""
    if PARAM in inner:
        pos = inner.find(PARAM)
        while pos != -1:
            kstart = pos + len(PARAM)
            kend = inner.find(">", kstart)
            if kend == -1:
                reason = "missing '>' after the parameter name"
                out.problems.append(problem(reason, markup))
                return out
            key = inner[kstart:kend].strip().strip("\"'")
            end = inner.find(PARAM_END, kend)
            nxt = inner.find(PARAM, kend)
            if end != -1 and (nxt == -1 or end < nxt):
                raw, pos = inner[kend + 1 : end], end + len(PARAM_END)
            elif nxt != -1:  # missing </parameter>: the next one ends it
                raw, pos = inner[kend + 1 : nxt], nxt
            elif closed:
                raw, pos = inner[kend + 1 :], len(inner)
            else:
                reason = "the reply ended inside a parameter"
                out.problems.append(problem(reason, markup))
                return out
            if key:
                args[key] = coerce_value(raw, tools.param_schema(name, key))
            nxt = inner.find(PARAM, pos)
            if nxt == -1:
                rest = inner[pos:]
            pos = nxt
    else:
        stripped = inner.lstrip()
        if stripped.startswith("{"):
            try:
                value, end = DECODER.raw_decode(stripped)
            except (ValueError, RecursionError) as err:
                reason = f"invalid JSON arguments ({json_reason(err, position=False)})"
                out.problems.append(problem(reason, markup))
                return out
            if not isinstance(value, dict):
                out.problems.append(problem("arguments must be a JSON object", markup))
                return out
            args = value
            rest = stripped[end:]
        elif stripped and closed:
            reason = "expected <parameter=NAME> blocks or a JSON object"
            out.problems.append(problem(reason, markup))
            return out
        else:
            rest = inner
    out.calls.append((name, args))
    if not closed and rest.strip():
        out.rest = rest
    return out


def parse_orphan_parameter(body: str) -> Parsed:
    """``<parameter=...>`` outside any function: never a call."""
    markup = PARAM + body
    reason = "<parameter=...> outside <function=...>"
    return Parsed(problems=[problem(reason, markup)])
