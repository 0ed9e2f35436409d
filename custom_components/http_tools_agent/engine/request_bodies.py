"""A request's body from its template: JSON (values placed as values),
a urlencoded form (every ``&``, ``=`` and line break of a value encoded)
or text. The rules are in ``docs/tool-format.md`` ("Request bodies").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote_plus

from .definitions import ToolDefinition
from .rendering import (
    ABSENT,
    Renderer,
    RequestBuildError,
    invalid_value,
    template_of,
    text_pairs,
)
from .templates import Placeholder, Reference


def json_value(node: Any, definition: ToolDefinition, renderer: Renderer) -> Any:
    """A JSON body template rendered; ABSENT when it is left out.

    A string that is exactly one placeholder takes the value's JSON type; any
    other string is text. Values are placed as values: JSON's own encoding
    keeps every quote, brace or newline of them inside their string. The
    body itself stays (an emptied object is sent as ``{}``: valid JSON for
    its Content-Type); below it, see :func:`_member`.
    """
    rendered = _member(node, definition, renderer)
    if rendered is ABSENT and isinstance(node, Mapping):
        return {}
    if rendered is ABSENT and isinstance(node, list):
        return []
    return rendered


def _member(node: Any, definition: ToolDefinition, renderer: Renderer) -> Any:
    """A member of the body; ABSENT when it is left out: a string whose
    optional placeholders are all absent, or an object or list that only
    such members emptied (one written empty stays)."""
    if isinstance(node, str):
        parts = template_of(node, definition)
        if renderer.left_out(parts):
            return ABSENT
        if len(parts) == 1 and isinstance(parts[0], (Placeholder, Reference)):
            return renderer.raw(parts[0])
        return renderer.join(parts)
    if isinstance(node, Mapping):
        members = {
            key: _member(value, definition, renderer) for key, value in node.items()
        }
        kept = {key: value for key, value in members.items() if value is not ABSENT}
        return ABSENT if members and not kept else kept
    if isinstance(node, list):
        items = [_member(value, definition, renderer) for value in node]
        left = [item for item in items if item is not ABSENT]
        return ABSENT if items and not left else left
    return node


def form_pairs(
    template: Mapping[str, Any], definition: ToolDefinition, renderer: Renderer
) -> list[tuple[str, str]]:
    """A form template's fields, each value as text."""
    pairs: list[tuple[str, str]] = []
    for key, node in template.items():
        for item in node if isinstance(node, list) else [node]:
            if not isinstance(item, str):
                pairs.extend(text_pairs({key: item}, definition))
                continue
            parts = template_of(item, definition)
            if renderer.left_out(parts):
                continue
            if len(parts) == 1 and isinstance(parts[0], (Placeholder, Reference)):
                part = parts[0]
                value = renderer.raw(part)
                try:
                    pairs.extend(text_pairs({key: value}, definition))
                except RequestBuildError:
                    source = part.name if isinstance(part, Placeholder) else part
                    raise invalid_value(
                        source, definition, "the value cannot be sent as text"
                    ) from None
                continue
            pairs.append((key, renderer.join(parts)))
    return pairs


def form_body(pairs: list[tuple[str, str]]) -> bytes:
    """application/x-www-form-urlencoded: every ``&``, ``=``, ``+`` and line
    break of a value is encoded, so no value adds a field."""
    return "&".join(
        f"{quote_plus(key)}={quote_plus(value)}" for key, value in pairs
    ).encode("ascii")


def cannot_send_json(definition: ToolDefinition) -> RequestBuildError:
    return RequestBuildError(
        f"Error: arguments for tool '{definition.name}' cannot be sent as JSON"
    )
