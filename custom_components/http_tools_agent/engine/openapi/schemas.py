"""JSON Schemas of an OpenAPI document as a model can follow them.

``$ref``s resolved, ``allOf`` merged, an ``anyOf``/``oneOf`` with ``null``
reduced to the other branch, ``nullable`` and ``type`` lists with ``null``
reduced to the type, 3.0's boolean bounds written as 2020-12's numbers;
only the keywords that shape a call are kept; recursive schemas and
nesting deeper than ``MAX_SCHEMA_DEPTH`` become ``{"type": "object"}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..words import word_set, words
from .document import OpenApiSource
from .text import MAX_PROPERTY_DESCRIPTION, clean_text, trim

MAX_SCHEMA_DEPTH = 5
_KEPT = word_set("""
    type description enum const default format minimum maximum exclusiveMinimum
    exclusiveMaximum multipleOf minLength maxLength pattern minItems maxItems
    uniqueItems items properties required additionalProperties anyOf oneOf
""")
SCHEMA_2_KEYS = words("""
    type format items enum default minimum maximum exclusiveMinimum
    exclusiveMaximum multipleOf minLength maxLength pattern minItems maxItems
    uniqueItems
""")


class Unsupported(Exception):
    """A schema a JSON call cannot carry (a file)."""


class SchemaReader:
    """Reads schemas of one document (its ``$ref``s)."""

    def __init__(self, source: OpenApiSource) -> None:
        """Resolve references in ``source``."""
        self.source = source

    def schema(
        self, node: Any, depth: int = 0, stack: tuple[str, ...] = ()
    ) -> dict[str, Any]:
        """A schema a model can follow (the module's rules); Unsupported for files."""
        if isinstance(node, dict) and isinstance(node.get("$ref"), str):
            ref = node["$ref"]
            if ref in stack or depth > MAX_SCHEMA_DEPTH:
                return _cut(self.source.deref(node))
            stack = (*stack, ref)
        node = self.source.deref(node)
        if not isinstance(node, dict):
            return {}
        if depth > MAX_SCHEMA_DEPTH:
            return _cut(node)
        kind = node.get("type")
        if kind == "file" or (kind == "string" and node.get("format") == "binary"):
            raise Unsupported("a file")
        out: dict[str, Any] = {}
        for part in node.get("allOf") or []:
            _merge(out, self.schema(part, depth, stack))
        own: dict[str, Any] = {}
        for key, value in node.items():
            if key not in _KEPT:
                continue
            if key == "properties" and isinstance(value, dict):
                own[key] = self.properties(value, depth, stack)
            elif key in ("items", "additionalProperties"):
                if isinstance(value, dict):
                    own[key] = self.schema(value, depth + 1, stack)
            elif key in ("anyOf", "oneOf") and isinstance(value, list):
                branches = [self.schema(b, depth, stack) for b in value]
                branches = [b for b in branches if b.get("type") != "null"]
                if len(branches) == 1:
                    _merge(own, branches[0])
                elif branches:
                    own[key] = branches
            elif key == "description":
                if text := clean_text(value):
                    own[key] = trim(text, MAX_PROPERTY_DESCRIPTION)
            else:
                own[key] = value
        for key, value in own.items():
            if key == "properties":
                out.setdefault("properties", {}).update(value)
            elif key == "required" and isinstance(value, list):
                out["required"] = list(
                    dict.fromkeys([*out.get("required", []), *value])
                )
            else:
                out[key] = value
        return _tidy(out, node)

    def properties(
        self, properties: Mapping[str, Any], depth: int, stack: tuple[str, ...]
    ) -> dict[str, Any]:
        kept: dict[str, Any] = {}
        for name, sub in properties.items():
            if self.source.deref(sub) is not None and _read_only(
                self.source.deref(sub)
            ):
                continue
            kept[name] = self.schema(sub, depth + 1, stack)
        return kept


def _read_only(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("readOnly") is True


def _cut(target: Any) -> dict[str, Any]:
    """What stands for a schema nested too deeply (or recursive)."""
    if isinstance(target, dict) and (
        target.get("type") == "object" or "properties" in target
    ):
        return {"type": "object"}
    return {}


def _merge(into: dict[str, Any], part: Mapping[str, Any]) -> None:
    """``allOf``: properties and required add up; other keywords: first wins."""
    for key, value in part.items():
        if key == "properties":
            into.setdefault("properties", {})
            for name, sub in value.items():
                into["properties"].setdefault(name, sub)
        elif key == "required":
            into["required"] = list(dict.fromkeys([*into.get("required", []), *value]))
        else:
            into.setdefault(key, value)


def _tidy(out: dict[str, Any], node: Mapping[str, Any]) -> dict[str, Any]:
    """Types without null, 2020-12 bounds, required only for kept properties."""
    kind = out.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if len(kinds) == 1:
            out["type"] = kinds[0]
        elif kinds:
            out["type"] = kinds
        else:
            del out["type"]
    for bound, limit in (
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ):
        if isinstance(out.get(bound), bool) and out.pop(bound) and limit in out:
            out[bound] = out.pop(limit)
    if "enum" in out:
        values = (
            [v for v in out["enum"] if v is not None]
            if isinstance(out["enum"], list)
            else []
        )
        if values:
            out["enum"] = values
        else:
            del out["enum"]
    if out.get("default") is None:
        out.pop("default", None)
    if "required" in out:
        if "properties" in out:
            names = out["properties"]
            out["required"] = [r for r in out["required"] if r in names]
        if not out["required"]:
            del out["required"]
    for key in ("format", "pattern"):
        if key in out and not isinstance(out[key], str):
            del out[key]
    return out
