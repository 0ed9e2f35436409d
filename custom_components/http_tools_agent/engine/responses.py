"""The ``response`` field of a definition: paths, fields, items, values
into words, times, and the per-tool limit, checked with an error per field.

What the shape does to a body is :mod:`.shapes`; how a body is read by its
content type is :mod:`.bodies`.
"""

from __future__ import annotations

from collections.abc import Mapping
import re
from zoneinfo import ZoneInfo

from .bodies import Body, BodyKind, compact_json, read_body
from .paths import Key, Path, parse_path
from .problems import FieldProblems, type_name
from .shapes import (
    TIME_SHOWS,
    TIME_UNITS,
    CodeWords,
    ResponseShape,
    TimeField,
    apply_shape,
    nothing_at,
    shaped_text,
)

__all__ = [
    "Body",
    "BodyKind",
    "ResponseShape",
    "apply_shape",
    "compact_json",
    "nothing_at",
    "parse_response",
    "read_body",
    "shaped_text",
]

RESPONSE_FIELDS = (
    "path",
    "fields",
    "max_items",
    "values",
    "times",
    "timezone",
    "max_chars",
)
MAX_ITEMS = 1000
MAX_CHARS = 100_000
_FIELD_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_RANGE_RE = re.compile(r"(-?\d+(?:\.\d+)?)\s*-\s*(-?\d+(?:\.\d+)?)")


def _parse_path_field(raw: object, where: str, out: FieldProblems) -> str | None:
    if not isinstance(raw, str):
        out.add(where, f"must be a path (a string), got {type_name(raw)}")
        return None
    try:
        parse_path(raw)
    except ValueError as err:
        out.add(where, f"'{raw}' is not a path: {err}")
        return None
    return raw


def _parse_fields(
    raw: object, out: FieldProblems
) -> tuple[tuple[tuple[str, str], ...] | None, bool]:
    if isinstance(raw, list):
        if not raw:
            out.add("response.fields", "must not be empty")
            return None, False
        listed: list[tuple[str, str]] = []
        for item in raw:
            if (path := _parse_path_field(item, "response.fields", out)) is not None:
                listed.append((path, path))
        return tuple(listed), False
    if isinstance(raw, Mapping):
        if not raw:
            out.add("response.fields", "must not be empty")
            return None, True
        named: list[tuple[str, str]] = []
        for name, item in raw.items():
            where = f"response.fields.{name}"
            if not isinstance(name, str) or _FIELD_NAME_RE.fullmatch(name) is None:
                out.add(where, "a field's name is 1 to 64 letters, digits, '_' or '-'")
                continue
            if (path := _parse_path_field(item, where, out)) is not None:
                named.append((name, path))
        return tuple(named), True
    out.add(
        "response.fields",
        "must be a list of paths or an object of names and paths, got "
        f"{type_name(raw)}",
    )
    return None, False


def _parse_int(raw: object, where: str, high: int, out: FieldProblems) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or not 1 <= raw <= high:
        out.add(where, f"must be an integer from 1 to {high}")
        return None
    return raw


def _parse_values(raw: object, out: FieldProblems) -> dict[str, CodeWords]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        out.add("response.values", f"must be an object of paths, got {type_name(raw)}")
        return {}
    parsed: dict[str, CodeWords] = {}
    for key, table in raw.items():
        where = f"response.values.{key}"
        if _parse_path_field(key, where, out) is None:
            continue
        if not isinstance(table, Mapping) or not table:
            out.add(where, 'must be an object of codes and words ({"0": "clear sky"})')
            continue
        words: dict[str, str] = {}
        ranges: list[tuple[float, float, str]] = []
        for code, word in table.items():
            if not isinstance(word, str):
                out.add(f"{where}.{code}", f"must be a string, got {type_name(word)}")
                continue
            words[str(code)] = word
            if (span := _RANGE_RE.fullmatch(str(code).strip())) is not None:
                low, high = float(span.group(1)), float(span.group(2))
                if low > high:
                    out.add(f"{where}.{code}", "a range goes from low to high")
                ranges.append((low, high, word))
        parsed[key] = CodeWords(words, tuple(ranges))
    return parsed


def _parse_times(raw: object, out: FieldProblems) -> dict[str, TimeField]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        out.add("response.times", f"must be an object of paths, got {type_name(raw)}")
        return {}
    parsed: dict[str, TimeField] = {}
    units = ", ".join(f'"{unit}"' for unit in TIME_UNITS)
    shows = ", ".join(f'"{show}"' for show in TIME_SHOWS)
    for key, spec in raw.items():
        where = f"response.times.{key}"
        if _parse_path_field(key, where, out) is None:
            continue
        unit, show = (spec, "datetime") if isinstance(spec, str) else (None, None)
        if isinstance(spec, Mapping):
            unknown = [k for k in spec if k not in ("unit", "show")]
            if unknown:
                out.add(
                    f"{where}.{unknown[0]}", "unknown field; allowed fields: unit, show"
                )
            unit, show = spec.get("unit"), spec.get("show", "datetime")
        if unit not in TIME_UNITS:
            out.add(
                where, f'the unit is one of {units} (or {{"unit": ..., "show": ...}})'
            )
            continue
        if show not in TIME_SHOWS:
            out.add(f"{where}.show", f"must be one of {shows}")
            continue
        parsed[key] = TimeField(unit, show)  # type: ignore[arg-type]
    return parsed


def parse_response(
    raw: object, out: FieldProblems, *, steps: tuple[str, ...] = ()
) -> ResponseShape | None:
    """The ``response`` field; with ``steps``, its paths start with a step's
    name."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        out.add("response", f"must be an object, got {type_name(raw)}")
        return None
    before = out.count
    for key in raw:
        if key not in RESPONSE_FIELDS:
            allowed = ", ".join(RESPONSE_FIELDS)
            out.add(f"response.{key}", f"unknown field; allowed fields: {allowed}")
    path = None
    if raw.get("path") is not None:
        path = _parse_path_field(raw["path"], "response.path", out)
    fields_, named = (None, False)
    if raw.get("fields") is not None:
        fields_, named = _parse_fields(raw["fields"], out)
    max_items = _parse_int(raw.get("max_items"), "response.max_items", MAX_ITEMS, out)
    max_chars = _parse_int(raw.get("max_chars"), "response.max_chars", MAX_CHARS, out)
    values = _parse_values(raw.get("values"), out)
    times = _parse_times(raw.get("times"), out)
    timezone = raw.get("timezone")
    if timezone is not None:
        if not isinstance(timezone, str):
            out.add(
                "response.timezone",
                f"must be a time zone name, got {type_name(timezone)}",
            )
            timezone = None
        else:
            try:
                ZoneInfo(timezone)
            except ValueError, LookupError, OSError:
                out.add(
                    "response.timezone",
                    f"'{timezone}' is no IANA time zone (e.g. 'Europe/Rome')",
                )
                timezone = None
    if out.count != before:
        return None
    shape = ResponseShape(
        path, fields_, named, max_items, values, times, timezone, max_chars
    )
    if steps:
        _check_step_paths(shape, steps, out)
    return shape if out.count == before else None


def _check_step_paths(
    shape: ResponseShape, steps: tuple[str, ...], out: FieldProblems
) -> None:
    """In a composite tool the shape reads the steps by name."""
    checked = (
        [("response.path", shape.path)] if shape.path is not None else shape.paths()
    )
    names = ", ".join(f"'{name}'" for name in steps)
    for where, text in checked:
        head: Path = parse_path(text)[:1]
        if not head or not isinstance(head[0], Key) or head[0].name not in steps:
            out.add(
                where,
                f"'{text}' must start with a step's name ({names}): the shape "
                "reads the steps' responses by name",
            )
