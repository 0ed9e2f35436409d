"""What an operation's documented answer suggests the model reads.

The first 2xx response with a JSON schema (3.x ``content``, 2.0 ``schema``):
a list of objects keeps each item's plain fields (strings, numbers,
booleans: the nested objects and lists are what makes answers long); an
object whose one list of objects holds the answer (``results``,
``messages``...) is read at that path, its items' plain fields kept. An
item of at most ``MAX_FIELDS`` plain fields and nothing nested needs no
shape. The rules are in ``docs/openapi.md`` ("The answer").
"""

from __future__ import annotations

from collections.abc import Mapping
import re
from typing import Any

from .document import OpenApiSource

MAX_FIELDS = 8
_PLAIN = frozenset({"string", "number", "integer", "boolean"})
_FIELD_NAME = re.compile(r"""[^.\[\]{}"'?\s]+""")


def _json(media_type: str) -> bool:
    base = media_type.split(";", 1)[0].strip().lower()
    return base == "application/json" or base.endswith(("+json", "/json"))


def _resolved(source: OpenApiSource, node: Any, depth: int = 0) -> dict[str, Any]:
    """``node`` with its ``$ref`` and top-level ``allOf`` resolved."""
    node = source.deref(node)
    if not isinstance(node, dict) or depth > 3:
        return {}
    if not node.get("allOf"):
        return node
    merged: dict[str, Any] = {k: v for k, v in node.items() if k != "allOf"}
    properties = dict(merged.get("properties") or {})
    for part in node["allOf"]:
        resolved = _resolved(source, part, depth + 1)
        properties.update(resolved.get("properties") or {})
        merged.setdefault("type", resolved.get("type"))
    merged["properties"] = properties
    return merged


def _answer_schema(source: OpenApiSource, raw: Mapping[str, Any]) -> dict[str, Any]:
    responses = source.deref(raw.get("responses"))
    if not isinstance(responses, dict):
        return {}
    # YAML reads `200:` as a number.
    for code, value in sorted(responses.items(), key=lambda pair: str(pair[0])):
        if not str(code).startswith("2"):
            continue
        response = source.deref(value)
        if not isinstance(response, dict):
            continue
        if source.swagger2:
            return _resolved(source, response.get("schema"))
        content = response.get("content")
        media_types = content.items() if isinstance(content, dict) else ()
        for media_type, raw_media in media_types:
            media = source.deref(raw_media)
            if _json(str(media_type)) and isinstance(media, dict):
                return _resolved(source, media.get("schema"))
    return {}


def _plain(source: OpenApiSource, schema: Any) -> bool:
    """A string, number, boolean or enum: a value a person hears."""
    resolved = _resolved(source, schema)
    return resolved.get("type") in _PLAIN or "enum" in resolved


def _item_fields(source: OpenApiSource, schema: Any) -> list[str] | None:
    """The plain fields of a list's item, when keeping only them drops
    something (None: no shape needed, or nothing to keep)."""
    item = _resolved(source, schema)
    properties = item.get("properties")
    if not isinstance(properties, dict) or not properties:
        return None
    plain = [
        name
        for name, sub in properties.items()
        if isinstance(name, str) and _FIELD_NAME.fullmatch(name) and _plain(source, sub)
    ]
    if not plain or (len(plain) == len(properties) and len(plain) <= MAX_FIELDS):
        return None
    return plain[:MAX_FIELDS]


def suggested_shape(
    source: OpenApiSource, raw: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The ``response`` a tool of operation ``raw`` gets (None: none)."""
    schema = _answer_schema(source, raw)
    if schema.get("type") == "array" or "items" in schema:
        fields = _item_fields(source, schema.get("items"))
        return {"fields": fields} if fields else None
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return None
    lists = [
        (name, sub)
        for name, sub in properties.items()
        if isinstance(name, str)
        and _FIELD_NAME.fullmatch(name)
        and _resolved(source, sub).get("type") == "array"
        and _resolved(source, _resolved(source, sub).get("items")).get("properties")
    ]
    if len(lists) != 1:
        return None
    name, sub = lists[0]
    fields = _item_fields(source, _resolved(source, sub).get("items"))
    return {"path": name, "fields": fields} if fields else None
