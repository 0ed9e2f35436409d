"""Checks of a tool's ``parameters``: is it a JSON Schema a model can follow?

Not a full meta-schema validation: the keywords that shape a tool call
(``type``, ``properties``, ``items``, ``enum``, ``required``, the bounds, the
combinators) must have the shape JSON Schema gives them, so a typo such as
``"type": "strng"`` is caught when the tool is saved, naming the exact field
(``parameters.properties.city.type``). Other keywords are kept as they are.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
import re
from typing import Any

from .words import word_set, words

JSON_TYPES = word_set("string number integer boolean array object null")
_NUMBER_KEYWORDS = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
_COUNT_KEYWORDS = words("""
    minLength maxLength minItems maxItems minProperties maxProperties
""")
_TEXT_KEYWORDS = ("description", "title", "format", "$comment")
_SCHEMA_LIST_KEYWORDS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_KEYWORDS = ("not", "if", "then", "else", "contains", "propertyNames")
# How deep a schema may nest before it is refused (a model cannot use more).
MAX_DEPTH = 32

type Report = Callable[[str, str], None]


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_type(value: object, where: str, report: Report) -> None:
    names = value if isinstance(value, list) else [value]
    if isinstance(value, list) and not value:
        report(f"{where}.type", "must not be an empty list")
    for name in names:
        if not isinstance(name, str) or name not in JSON_TYPES:
            shown = name if isinstance(name, str) else repr(name)
            allowed = ", ".join(sorted(JSON_TYPES))
            report(
                f"{where}.type",
                f"'{shown}' is not a JSON Schema type (one of {allowed})",
            )


def check_schema(schema: object, where: str, report: Report, depth: int = 0) -> None:
    """Report each keyword of ``schema`` (at field path ``where``) that is malformed.

    ``report(field, message)`` is called once per problem.
    """
    if isinstance(schema, bool):  # `true` / `false` are schemas too
        return
    if not isinstance(schema, Mapping):
        report(where, "must be an object (a JSON Schema)")
        return
    if depth > MAX_DEPTH:
        report(where, f"is nested more than {MAX_DEPTH} levels deep")
        return
    if "type" in schema:
        _check_type(schema["type"], where, report)
    _check_keywords(schema, where, report)
    _check_children(schema, where, report, depth + 1)


def _check_keywords(schema: Mapping[str, Any], where: str, report: Report) -> None:
    for key in _TEXT_KEYWORDS:
        if key in schema and not isinstance(schema[key], str):
            report(f"{where}.{key}", "must be a string")
    for key in _NUMBER_KEYWORDS:
        if key in schema and not _is_number(schema[key]):
            report(f"{where}.{key}", "must be a number")
    if "multipleOf" in schema and not (
        _is_number(schema["multipleOf"]) and schema["multipleOf"] > 0
    ):
        report(f"{where}.multipleOf", "must be a number greater than 0")
    for key in _COUNT_KEYWORDS:
        value = schema.get(key)
        if key in schema and not (
            isinstance(value, int) and not isinstance(value, bool) and value >= 0
        ):
            report(f"{where}.{key}", "must be a non-negative integer")
    if "enum" in schema and not (isinstance(schema["enum"], list) and schema["enum"]):
        report(f"{where}.enum", "must be a non-empty list")
    if "required" in schema and not (
        isinstance(schema["required"], list)
        and all(isinstance(item, str) for item in schema["required"])
    ):
        report(f"{where}.required", "must be a list of strings")
    if "pattern" in schema:
        pattern = schema["pattern"]
        if not isinstance(pattern, str):
            report(f"{where}.pattern", "must be a string")
        else:
            try:
                re.compile(pattern)
            except re.error as err:
                report(f"{where}.pattern", f"is not a valid regular expression ({err})")


def _check_children(
    schema: Mapping[str, Any], where: str, report: Report, depth: int
) -> None:
    for key in ("properties", "patternProperties", "$defs", "definitions"):
        if key not in schema:
            continue
        children = schema[key]
        if not isinstance(children, Mapping):
            report(f"{where}.{key}", "must be an object")
            continue
        for name, child in children.items():
            check_schema(child, f"{where}.{key}.{name}", report, depth)
    if "items" in schema:
        items = schema["items"]
        if isinstance(items, list):  # draft-07 tuple form
            for index, child in enumerate(items):
                check_schema(child, f"{where}.items.{index}", report, depth)
        else:
            check_schema(items, f"{where}.items", report, depth)
    for key in ("additionalProperties", "additionalItems", *_SCHEMA_KEYWORDS):
        if key in schema:
            check_schema(schema[key], f"{where}.{key}", report, depth)
    for key in _SCHEMA_LIST_KEYWORDS:
        if key not in schema:
            continue
        children = schema[key]
        if not isinstance(children, list) or not children:
            report(f"{where}.{key}", "must be a non-empty list of schemas")
            continue
        for index, child in enumerate(children):
            check_schema(child, f"{where}.{key}.{index}", report, depth)
