"""Calls written as JSON objects, bare (the tags dropped by the server) or tagged.

``{"name": ..., "arguments": {...}}``, with ``arguments`` possibly a JSON
string, ``parameters`` as a synonym, the flat form ``{"name": ..., "city":
...}``, or OpenAI's ``{"type": "function", "function": {...}}``; several of
them as a JSON list. Bare JSON is a call only when its name resolves to an
offered tool (or when it has exactly the shape of a call, see
:func:`_call_shaped`).
"""

from __future__ import annotations

import json
from typing import Any

from .markup import Parsed, RawCall, json_reason, problem
from .names import ToolNames
from .repair import repair_json

_META_KEYS = frozenset({"name", "type", "id"})
_SHAPE = 'expected a JSON object with "name" and "arguments"'


def _call_shaped(obj: dict[str, Any]) -> bool:
    """Exactly `name` + `arguments` (or `parameters`) holding an object.

    Bare JSON of this shape is a call attempt even when its name is no tool
    (small models invent names: `remove_item` for `delete_item`): it is not
    spoken, and the model is told the tool is unknown, so it can retry.
    """
    keys = set(obj)
    if keys not in ({"name", "arguments"}, {"name", "parameters"}):
        return False
    args = obj.get("arguments", obj.get("parameters"))
    return isinstance(args, dict) or (
        isinstance(args, str) and args.strip().startswith("{")
    )


def json_call(obj: Any, tools: ToolNames, *, tagged: bool) -> RawCall | str | None:
    """A call from one decoded JSON value.

    Returns the call, or a reason (str) when the value is a call attempt that
    cannot be used, or None when it is not a call at all. Tagged markup is
    always a call attempt (an unknown name is kept as written); bare JSON is a
    call only when its name resolves.
    """
    if not isinstance(obj, dict):
        return _SHAPE if tagged else None
    if "name" not in obj and isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        return _SHAPE if tagged else None
    name = name.strip()
    resolved = tools.resolve(name)
    if resolved is None and not tagged and not (tools and _call_shaped(obj)):
        return None
    if "arguments" in obj:
        args = obj["arguments"]
    elif "parameters" in obj:
        args = obj["parameters"]
    else:  # flat form {"name": "x", "city": "Rome"}: the other keys
        args = {k: v for k, v in obj.items() if k not in _META_KEYS}
    if args is None:
        args = {}
    if isinstance(args, str):
        if not args.strip():
            args = {}
        else:
            try:
                args = json.loads(args, strict=False)
            except (ValueError, RecursionError) as err:
                return f"arguments of '{name}' are not valid JSON ({json_reason(err)})"
    if not isinstance(args, dict):
        return f"arguments of '{name}' must be a JSON object"
    return (resolved or name, args)


def parse_bare_json(raw: str, tools: ToolNames, *, committed: bool) -> Parsed | None:
    """Calls from one complete bare JSON value (object or list), or None.

    None means "not a call: release it as text". ``committed`` (a top-level
    ``"name"`` that resolves was seen while streaming) turns a value that does
    not decode into a problem instead of text.
    """
    try:
        value = json.loads(raw, strict=False)
    except (ValueError, RecursionError) as err:
        if not committed:
            return None
        if (mended := _mended_calls(raw, tools)) is not None:
            return mended
        return Parsed(problems=[problem(f"invalid JSON ({json_reason(err)})", raw)])
    items = value if isinstance(value, list) else [value]
    if not items:
        return None
    results = [json_call(item, tools, tagged=False) for item in items]
    if any(r is None for r in results):
        return None
    out = Parsed()
    for r in results:
        if isinstance(r, str):
            out.problems.append(problem(r, raw))
        elif r is not None:
            out.calls.append(r)
    return out


def _mended_calls(raw: str, tools: ToolNames) -> Parsed | None:
    """The calls of near-JSON (`repair.py`), when the mend gives calls of
    offered tools and nothing else."""
    mended = repair_json(raw)
    if mended is None:
        return None
    try:
        value = json.loads(mended, strict=False)
    except ValueError, RecursionError:
        return None
    items = value if isinstance(value, list) else [value]
    calls: list[RawCall] = []
    for item in items:
        got = json_call(item, tools, tagged=False)
        if not isinstance(got, tuple) or tools.resolve(got[0]) is None:
            return None
        calls.append(got)
    return Parsed(calls=calls, repaired=len(calls)) if calls else None


def is_json(raw: str) -> bool:
    """Whether ``raw`` is one complete JSON value."""
    try:
        json.loads(raw)
    except ValueError, RecursionError:
        return False
    return True
