"""Check a call's arguments against its tool's JSON Schema before any request.

Small models write ``"2"`` for an integer, ``"true"`` for a boolean, ``5`` for
a string, or a JSON text where an array belongs. Those are converted silently
when nothing is lost (:func:`coerce`), and the converted values are what the
request carries. Whatever still breaks the schema (a type, an ``enum``, a
bound, a ``pattern``, a missing or, with ``additionalProperties: false``, an
unknown argument, in nested objects and arrays too) becomes an error text
naming the argument and what is allowed, and no request is sent::

    Error: invalid value for argument 'unit' of tool 'set_unit': 'K' is not one of 'C', 'F'

The validator is probatio's (Home Assistant's own validation library, a
dependency of Home Assistant itself): ``from_json_schema`` compiles the
schema. As JSON Schema says, properties not listed are allowed unless
``additionalProperties`` says otherwise, and ``format`` is an annotation,
not a check. A ``null`` for an optional argument that does not accept null
counts as not given (models write ``"limit": null``). Arguments written as
the schema's shape (``{"properties": {"city": "Prague"}}``) are unwrapped
when that is the only reading (:func:`unwrap_schema_form`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import json
import math
import re
from typing import Any

import probatio

_INT_RE = re.compile(r"\s*[+-]?\d+\s*")
_NUM_RE = re.compile(r"\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*")
_MAX_SHOWN = 60
_MAX_ERRORS = 3
_ARTICLE = {"integer": "an integer", "object": "an object", "array": "an array"}


@dataclass(frozen=True, slots=True)
class CheckedArguments:
    """The arguments to send (converted), or why none is sent."""

    arguments: dict[str, Any]
    error: str | None = None
    # The (top-level) arguments the error is about, in its order: the tool
    # editor's Try it shows it under their fields.
    at_fault: tuple[str, ...] = ()


def _types(schema: Mapping[str, Any]) -> set[str]:
    """The JSON types a schema node accepts (empty: any)."""
    kind = schema.get("type")
    if isinstance(kind, str):
        return {kind}
    if isinstance(kind, list):
        return {k for k in kind if isinstance(k, str)}
    found: set[str] = set()
    for key in ("anyOf", "oneOf"):
        for sub in schema.get(key) or ():
            if isinstance(sub, Mapping):
                sub_types = _types(sub)
                if not sub_types:
                    return set()
                found |= sub_types
    return found


def json_type(value: object) -> str:
    """A value's JSON Schema type (`unknown` for what JSON has none of)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object" if isinstance(value, dict) else "unknown"


def _accepts(types: set[str], value: object) -> bool:
    kind = json_type(value)
    if kind == "integer" and "number" in types:
        return True
    if kind == "number" and "integer" in types:
        return float(value).is_integer()  # type: ignore[arg-type]
    return kind in types


def _from_text(text: str, kind: str) -> tuple[bool, Any]:
    """``text`` as a value of JSON type ``kind``, when nothing is lost."""
    if kind == "integer" and _INT_RE.fullmatch(text):
        return True, int(text)
    if kind in ("integer", "number") and _NUM_RE.fullmatch(text):
        number = float(text)
        if not math.isfinite(number):
            return False, None
        if kind == "integer":
            return (True, int(number)) if number.is_integer() else (False, None)
        return True, int(text) if _INT_RE.fullmatch(text) else number
    if kind == "boolean" and text.strip().lower() in ("true", "false"):
        return True, text.strip().lower() == "true"
    if kind in ("object", "array"):
        try:
            value = json.loads(text)
        except ValueError, RecursionError:
            return False, None
        wanted = dict if kind == "object" else list
        return (True, value) if isinstance(value, wanted) else (False, None)
    return False, None


def _convert(value: Any, types: set[str]) -> Any:
    """One value converted to a type the schema accepts, when lossless."""
    if not types or _accepts(types, value):
        if isinstance(value, float) and "integer" in types and value.is_integer():
            return int(value)  # 2.0 for an integer: the request says 2
        return value
    if isinstance(value, str):
        for kind in ("integer", "number", "boolean", "object", "array"):
            if kind in types:
                ok, converted = _from_text(value, kind)
                if ok:
                    return converted
    elif json_type(value) in ("integer", "number") and "string" in types:
        return str(value)
    return value


def coerce(value: Any, schema: object) -> Any:
    """Convert ``value`` (and what it holds) to what ``schema`` declares,
    where nothing is lost; anything else is returned as it is."""
    if not isinstance(schema, Mapping):
        return value
    value = _convert(value, _types(schema))
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        for option in enum:
            if json_type(option) != json_type(value) and str(option) == str(value):
                return option  # "2" for the option 2, or 2 for "2"
    if isinstance(value, dict):
        return _coerce_object(value, schema)
    if isinstance(value, list) and isinstance(items := schema.get("items"), Mapping):
        return [coerce(item, items) for item in value]
    return value


def _coerce_object(value: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    extra = schema.get("additionalProperties")
    result: dict[str, Any] = {}
    for key, item in value.items():
        sub = properties.get(key, extra)
        if (
            item is None
            and key not in required
            and isinstance(sub, Mapping)
            and _types(sub)
            and "null" not in _types(sub)
        ):
            continue  # `null` for an optional argument: not given
        result[key] = coerce(item, sub)
    return result


_NAME_MAPS = ("properties", "patternProperties", "$defs", "definitions")


def _rewrite(schema: Any, drop: str, *, open_objects: bool) -> Any:
    """A copy of ``schema`` without the keyword ``drop`` (names kept)."""
    if isinstance(schema, list):
        return [_rewrite(item, drop, open_objects=open_objects) for item in schema]
    if not isinstance(schema, Mapping):
        return schema
    node: dict[str, Any] = {}
    for key, value in schema.items():
        if key == drop:
            continue
        if key in _NAME_MAPS and isinstance(value, Mapping):
            # Property names are data, not keywords: keep them all.
            node[key] = {
                name: _rewrite(sub, drop, open_objects=open_objects)
                for name, sub in value.items()
            }
        else:
            node[key] = _rewrite(value, drop, open_objects=open_objects)
    if (
        open_objects
        and ("properties" in node or node.get("type") == "object")
        and not isinstance(node.get("additionalProperties"), Mapping)
    ):
        # Unknown names are checked by `_unknown_names`: probatio 0.13 loses
        # a nested `additionalProperties: false` under an open parent.
        node["additionalProperties"] = True
    return node


def _unknown_names(value: Any, schema: Any, path: list[Any]) -> list[list[Any]]:
    """Paths of the arguments an `additionalProperties: false` refuses."""
    if not isinstance(schema, Mapping):
        return []
    found: list[list[Any]] = []
    if isinstance(value, dict):
        props = schema.get("properties")
        props = props if isinstance(props, Mapping) else {}
        closed = schema.get("additionalProperties") is False
        for key, item in value.items():
            if key in props:
                found += _unknown_names(item, props[key], [*path, key])
            elif closed:
                found.append([*path, key])
    elif isinstance(value, list) and isinstance(items := schema.get("items"), Mapping):
        for index, item in enumerate(value):
            found += _unknown_names(item, items, [*path, index])
    return found


def compile_validator(schema: Mapping[str, Any]) -> probatio.Schema | None:
    """Compile a tool's schema; ``None`` when probatio cannot express it.

    probatio refuses a ``pattern`` that could backtrack for ever: the other
    checks still apply then.
    """
    # JSON Schema's defaults made explicit for probatio: unlisted properties
    # are allowed, `format` is not asserted.
    opened = _rewrite(schema, "format", open_objects=True)
    for candidate in (opened, _rewrite(opened, "pattern", open_objects=False)):
        try:
            return probatio.from_json_schema(candidate)
        except probatio.SchemaError, RecursionError:
            continue
    return None


def _shown(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def _path_name(path: list[Any]) -> str:
    name = ""
    for part in path:
        name += f"[{part}]" if isinstance(part, int) else f".{part}"
    return name.lstrip(".")


def _at(root: Any, path: list[Any]) -> tuple[Any, Any]:
    """The value and the schema node at ``path``."""
    value: Any = root[0]
    schema: Any = root[1]
    for part in path:
        if isinstance(part, int):
            value = value[part] if isinstance(value, list) else None
            schema = schema.get("items") if isinstance(schema, Mapping) else None
        else:
            value = value.get(part) if isinstance(value, dict) else None
            props = schema.get("properties") if isinstance(schema, Mapping) else None
            schema = props.get(part) if isinstance(props, Mapping) else None
    return value, schema if isinstance(schema, Mapping) else {}


def _why(value: Any, schema: Mapping[str, Any], error: probatio.Invalid) -> str:
    """What is wrong with ``value``, in the schema's words."""
    shown = _shown(value)
    enum = schema.get("enum")
    if isinstance(enum, list) and value not in enum:
        return f"{shown} is not one of {', '.join(_shown(o) for o in enum)}"
    types = _types(schema)
    if types and not _accepts(types, value):
        names = [_ARTICLE.get(t, f"a {t}") for t in sorted(types)]
        return f"{shown} is not {' or '.join(names)}"
    low, high = schema.get("minimum"), schema.get("maximum")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(low, (int, float)) and value < low:
            return f"{shown} is less than the minimum {low}"
        if isinstance(high, (int, float)) and value > high:
            return f"{shown} is more than the maximum {high}"
    pattern = schema.get("pattern")
    if isinstance(pattern, str) and isinstance(error, probatio.MatchInvalid):
        return f"{shown} does not match the pattern '{pattern}'"
    return f"{shown}: {error.error_message}"


def _unknown_message(tool: str, root: tuple[Any, Any], path: list[Any]) -> str:
    _, parent = _at(root, path[:-1])
    allowed = ", ".join(f"'{name}'" for name in parent.get("properties") or ())
    return (
        f"Error: unknown argument '{_path_name(path)}' for tool '{tool}' "
        f"(allowed: {allowed or 'none'})"
    )


def _message(tool: str, root: tuple[Any, Any], error: probatio.Invalid) -> str:
    path = list(error.path)
    if isinstance(error, probatio.RequiredFieldInvalid):
        return (
            f"Error: missing required argument '{_path_name(path)}' for tool '{tool}'"
        )
    if isinstance(error, probatio.ExtraKeysInvalid):
        return _unknown_message(tool, root, path)
    name = _path_name(path)
    value, schema = _at(root, path)
    return (
        f"Error: invalid value for argument '{name}' of tool '{tool}': "
        f"{_why(value, schema, error)}"
    )


def _blank_required(
    tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any]
) -> list[tuple[str, str]]:
    """A required text argument sent empty is missing: `DELETE /items/{id}`
    with `id` "" would reach the collection itself, and asking "Should I
    delete item: id ?" asks about nothing."""
    required = schema.get("required")
    return [
        (
            f"Error: missing required argument '{name}' for tool '{tool}' (it is empty)",
            name,
        )
        for name in (required if isinstance(required, list) else ())
        if isinstance(value := arguments.get(name), str) and not value.strip()
    ]


# The keywords a model copies from the schema around the real arguments.
_SCHEMA_WORDS = frozenset(
    {"type", "properties", "required", "additionalProperties", "title", "description"}
)


def unwrap_schema_form(
    arguments: Mapping[str, Any], schema: Mapping[str, Any]
) -> Mapping[str, Any]:
    """The real arguments when a model wrote them as the schema's shape,
    ``{"properties": {"city": "Prague"}, "required": ["city"]}`` (the 0.5B
    model does); ``arguments`` itself when another reading exists: the tool
    has a parameter named ``properties``, a key is no schema keyword, a
    value is a schema itself, or a name is none of the tool's."""
    inner = arguments.get("properties")
    props = schema.get("properties")
    if (
        not isinstance(inner, Mapping)
        or not inner
        or not isinstance(props, Mapping)
        or "properties" in props
        or not set(arguments) <= _SCHEMA_WORDS
        or not set(inner) <= set(props)
        or any(
            isinstance(value, Mapping) and "type" in value for value in inner.values()
        )
    ):
        return arguments
    return dict(inner)


def check_arguments(
    tool: str,
    schema: Mapping[str, Any],
    validator: probatio.Schema | None,
    arguments: Mapping[str, Any],
) -> CheckedArguments:
    """Convert and check ``arguments`` for ``tool`` (``validator``:
    :func:`compile_validator` of ``schema``)."""
    arguments = unwrap_schema_form(arguments, schema)
    converted = coerce(dict(arguments), schema)
    if not isinstance(converted, dict):  # a schema that is no object schema
        converted = dict(arguments)
    root = (converted, schema)
    # Each problem's line and the argument it is about.
    found = [
        (_unknown_message(tool, root, p), _top(p)) for p in _unknown_names(*root, [])
    ]
    found += _blank_required(tool, converted, schema)
    if validator is not None:
        try:
            validator(converted)
        except probatio.MultipleInvalid as err:
            errors = sorted(err.errors, key=lambda e: _path_name(list(e.path)))
            found += [(_message(tool, root, e), _top(e.path)) for e in errors]
        except probatio.Invalid as err:
            found.append((_message(tool, root, err), _top(err.path)))
    if not found:
        return CheckedArguments(converted)
    shown = list(dict.fromkeys(found))[:_MAX_ERRORS]
    return CheckedArguments(
        converted,
        "\n".join(dict.fromkeys(line for line, _ in shown)),
        tuple(dict.fromkeys(name for _, name in shown if name)),
    )


def _top(path: list[Any]) -> str:
    """The argument a problem at `path` is in ("" for the whole call)."""
    return str(path[0]) if path else ""
