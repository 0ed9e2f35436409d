"""Ids in calls that change something: where they come from, and the read
that gives them.

Asked "remove the bread", Qwen2.5-Coder-0.5B called `delete_item` with
`{"id": "1"}`, an id it read nowhere: the apples went, the bread stayed, and
the agent said "Done". An opaque id (digits, a hex or UUID string) is
something a model can only copy from a result or hear from the user; one
it did neither is not trusted for a change. On a REST surface the read
that gives the ids is the `GET` of the collection (`/api/items` for
`/api/items/{id}`), and its items name themselves (`name`, `title`, ...):
`named_items` finds the one the user's words name. The user's words where
an id belongs ("Bread") are no id either.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
import json
import re
from typing import Any

from .definitions import ToolDefinition
from .templates import template_placeholders

_ID_KEY = re.compile(r"^(?:id|uuid|.+_id|.+Id|.+ID)$")
# Digits, or a hex or UUID string: nothing a model can guess.
_OPAQUE = re.compile(r"^(?:\d+|[0-9a-fA-F]{8,}|[0-9a-fA-F-]{32,36})$")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def id_key(name: str) -> bool:
    """Whether an argument or a field named `name` holds an id."""
    return bool(_ID_KEY.match(name))


def opaque(value: object) -> str | None:
    """`value` as text when it is an opaque id, else None."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    text = str(value).strip()
    return text if _OPAQUE.match(text) else None


def guessed_ids(
    arguments: Mapping[str, Any], trusted: frozenset[str], request: str
) -> dict[str, str]:
    """The id arguments of a call that nothing vouches for, by name: an
    opaque id no result showed and no one said, or the user's words put
    where an id belongs ("Bread" for "Remove the bread."). An id like
    `light.kitchen_lights` is neither: a model that knows the house may
    write it."""
    said = {_stem(w.lower()) for w in _WORD.findall(request)}
    found: dict[str, str] = {}
    for key, value in arguments.items():
        if not id_key(key) or isinstance(value, bool):
            continue
        if not isinstance(value, (str, int)) or str(value).strip() in trusted:
            continue
        text = str(value).strip()
        words = [_stem(w.lower()) for w in _WORD.findall(text)]
        if opaque(text) is not None or (words and all(w in said for w in words)):
            found[key] = text
    return found


def _values(data: Any) -> Iterator[tuple[str, Any]]:
    """Every key and value of a JSON document, at any depth."""
    stack = [data]
    while stack:
        value = stack.pop()
        if isinstance(value, Mapping):
            for key, item in value.items():
                yield str(key), item
                stack.append(item)
        elif isinstance(value, list):
            stack.extend(value)


def ids_in_text(text: str) -> set[str]:
    """The ids a result shows: values of id fields in JSON (at any depth),
    or, in other text, each run of digits or hex that could be one."""
    try:
        data = json.loads(text)
    except ValueError, RecursionError:
        return {word for word in _WORD.findall(text) if _OPAQUE.match(word)}
    return {
        found
        for key, value in _values(data)
        if id_key(key) and (found := opaque(value)) is not None
    }


def collection_path(definition: ToolDefinition) -> tuple[str, str] | None:
    """For a tool whose URL ends in an id placeholder (`/api/items/{id}`),
    the URL of its collection without the query (`/api/items`) and the
    placeholder's name; else None."""
    base = definition.url.split("?", 1)[0].rstrip("/")
    head, _, last = base.rpartition("/")
    names = list(template_placeholders(last))
    if len(names) != 1 or last != f"{{{names[0]}}}" or not id_key(names[0]):
        return None
    return head, names[0]


def lister_of(
    definition: ToolDefinition, definitions: Iterable[ToolDefinition]
) -> ToolDefinition | None:
    """The read-only tool of the collection a tool changes an item of (its
    URL is the collection's), when exactly one is offered."""
    collection = collection_path(definition)
    if collection is None:
        return None
    head = collection[0]
    found = [
        other
        for other in definitions
        if other.read_only
        and not other.steps
        and other.url.split("?", 1)[0].rstrip("/") == head
        and not _required(other)
    ]
    return found[0] if len(found) == 1 else None


def _required(definition: ToolDefinition) -> list[str]:
    required = definition.parameters.get("required")
    return list(required) if isinstance(required, list) else []


def _items(data: Any) -> list[Mapping[str, Any]]:
    """The items of a collection's JSON: a list of objects, or the first
    such list in an object (`{"items": [...]}`)."""
    if isinstance(data, list):
        return [item for item in data if isinstance(item, Mapping)]
    if isinstance(data, Mapping):
        for value in data.values():
            if isinstance(value, list) and any(isinstance(v, Mapping) for v in value):
                return [item for item in value if isinstance(item, Mapping)]
    return []


def _stem(word: str) -> str:
    """A word without a plural's `s`/`es` (bananas, tomatoes)."""
    for ending in ("es", "s"):
        if len(word) > len(ending) + 2 and word.endswith(ending):
            return word[: -len(ending)]
    return word


def named_items(text: str, key: str, request: str) -> list[tuple[str, str]]:
    """The items of a collection's result (`text`) that the user's words
    name: those whose name (a text field that is no id) has all its words
    in `request`, the ones naming the most words. Each as (id, name)."""
    try:
        items = _items(json.loads(text))
    except ValueError, RecursionError:
        return []
    said = {_stem(w.lower()) for w in _WORD.findall(request)}
    best: list[tuple[str, str]] = []
    most = 0
    for item in items:
        if (item_id := opaque(item.get(key))) is None:
            continue
        for field, value in item.items():
            if id_key(str(field)) or not isinstance(value, str):
                continue
            words = [_stem(w.lower()) for w in _WORD.findall(value)]
            if not words or not all(w in said for w in words):
                continue
            if len(words) > most:
                best, most = [(item_id, value)], len(words)
            elif len(words) == most:
                best.append((item_id, value))
            break
    return best


def item_name(text: str, item_id: str) -> str | None:
    """The name a collection's result (`text`) gives the item `item_id`:
    its first text field that is no id; None when no item has that id."""
    try:
        items = _items(json.loads(text))
    except ValueError, RecursionError:
        return None
    for item in items:
        if not any(
            id_key(str(field)) and opaque(value) == item_id
            for field, value in item.items()
        ):
            continue
        for field, value in item.items():
            if not id_key(str(field)) and isinstance(value, str) and value.strip():
                return value.strip()
    return None
