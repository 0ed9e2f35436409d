"""Type a parameter value written as text by its JSON Schema.

Qwen3-Coder XML writes every value as text (``<parameter=days>5``); the tool's
schema says what it should be. A value that does not convert stays text: the
tool reports what is wrong with it.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
import json
import re
from typing import Any

_INT_RE = re.compile(r"[+-]?\d+")
_NUM_RE = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")


def _schema_types(schema: Mapping[str, Any] | None) -> set[str]:
    if schema is None:
        return set()
    found: set[str] = set()
    kind = schema.get("type")
    if isinstance(kind, str):
        found.add(kind)
    elif isinstance(kind, list):
        found.update(k for k in kind if isinstance(k, str))
    for key in ("anyOf", "oneOf"):
        subs = schema.get(key)
        if isinstance(subs, list):
            for sub in subs:
                if isinstance(sub, Mapping):
                    found |= _schema_types(sub)
    if not found and "enum" in schema:
        found.add("string")
    return found


def _loads_container(text: str, kind: type) -> tuple[bool, Any]:
    try:
        value = json.loads(text, strict=False)
    except ValueError, RecursionError:
        if len(text) > 10_000:
            return False, None
        try:  # Python-style literals ({'a': 1}, True) that models write
            value = ast.literal_eval(text)
        except ValueError, TypeError, SyntaxError, MemoryError, RecursionError:
            return False, None
    return (True, value) if isinstance(value, kind) else (False, None)


def _convert(kind: str, text: str) -> tuple[bool, Any]:
    if kind == "integer":
        try:
            if _INT_RE.fullmatch(text):
                return True, int(text)
            if _NUM_RE.fullmatch(text):
                number = float(text)
                if number.is_integer():
                    return True, int(number)
        except ValueError, OverflowError:  # more digits than int() takes
            pass
        return False, None
    if kind == "number":
        if _NUM_RE.fullmatch(text) or _INT_RE.fullmatch(text):
            if any(c in text for c in ".eE"):
                return True, float(text)
            try:
                return True, int(text)
            except ValueError:  # more digits than int() takes
                return True, float(text)
        return False, None
    if kind == "boolean":
        low = text.lower()
        if low in ("true", "false"):
            return True, low == "true"
        return False, None
    if kind == "null":
        return (True, None) if text.lower() in ("null", "none") else (False, None)
    if kind == "object":
        return _loads_container(text, dict)
    if kind == "array":
        return _loads_container(text, list)
    return False, None


_KIND_ORDER = ("integer", "number", "boolean", "null", "object", "array")


def coerce_value(raw: str, schema: Mapping[str, Any] | None) -> Any:
    """Type one XML parameter value by its JSON Schema.

    The newlines around the value are dropped. Strings stay strings even when
    they look like numbers; a value that does not convert to its declared type
    is kept as text (the tool reports it). Undeclared parameters: JSON-decoded
    when that gives a non-string, else the text.
    """
    value = raw.strip("\r\n")
    text = value.strip()
    kinds = _schema_types(schema)
    for kind in _KIND_ORDER:
        if kind in kinds:
            ok, converted = _convert(kind, text)
            if ok:
                return converted
    if "string" in kinds:
        return value
    try:
        decoded = json.loads(text, strict=False)
    except ValueError, RecursionError:
        return value
    return value if isinstance(decoded, str) else decoded
