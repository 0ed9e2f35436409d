"""The ``response`` field of a definition: paths, the items of a list kept
(``where``, ``sort``, ``max_items``, ``last_items``, ``count``), fields,
values into words, times, and the per-tool limit, checked with an error per
field.

What the shape does to a body is :mod:`.shapes`; how a body is read by its
content type is :mod:`.bodies`.
"""

from __future__ import annotations

from collections.abc import Mapping
import re
from zoneinfo import ZoneInfo

from .bodies import Body, BodyKind, compact_json, read_body
from .paths import MISSING, Key, Path, parse_path
from .problems import FieldProblems, type_name
from .shapes import (
    CONDITIONS,
    MAX_ITEMS,
    SORT_ORDERS,
    TIME_SHOWS,
    TIME_UNITS,
    CodeWords,
    Condition,
    ResponseShape,
    SortBy,
    TimeField,
    nothing_at,
    shape_answer,
    shaped_text,
)
from .words import words

__all__ = [
    "Body",
    "BodyKind",
    "ResponseShape",
    "compact_json",
    "nothing_at",
    "parse_response",
    "read_body",
    "shape_answer",
    "shaped_text",
]

RESPONSE_FIELDS = words("""
    path where sort max_items last_items count fields values times timezone
    max_chars
""")
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


def _parse_where(raw: object, out: FieldProblems) -> tuple[Condition, ...]:
    """``{"state": "on", "temperature": {"above": 20}}``: every condition
    holds for an item that stays."""
    if raw is None:
        return ()
    if not isinstance(raw, Mapping) or not raw:
        out.add(
            "response.where",
            "must be an object of paths (inside each item) and what their "
            'value must be, e.g. {"state": "on", "temperature": {"above": 20}}',
        )
        return ()
    parsed: list[Condition] = []
    allowed = ", ".join(CONDITIONS)
    for key, test in raw.items():
        where = f"response.where.{key}"
        if _parse_path_field(key, where, out) is None:
            continue
        if not isinstance(test, Mapping):
            if isinstance(test, list):
                out.add(where, f"must be a value or an object of {allowed}")
                continue
            parsed.append(Condition(key, equals=test))
            continue
        if not test:
            out.add(where, f"must not be empty: one or more of {allowed}")
            continue
        tests: dict[str, object] = {}
        for name, bound in test.items():
            at = f"{where}.{name}"
            if name not in CONDITIONS:
                out.add(at, f"unknown condition; allowed: {allowed}")
            elif name == "present" and not isinstance(bound, bool):
                out.add(at, "must be true or false")
            elif name in ("above", "below") and (
                isinstance(bound, bool) or not isinstance(bound, (int, float, str))
            ):
                out.add(at, "must be a number or a text (ISO dates order as text)")
            elif name in ("equals", "contains") and isinstance(bound, (dict, list)):
                out.add(at, "must be a text, a number, true, false or null")
            else:
                tests[name] = bound
        if len(tests) == len(test):
            parsed.append(
                Condition(
                    key,
                    equals=tests.get("equals", MISSING),
                    contains=tests.get("contains", MISSING),
                    above=tests.get("above", MISSING),
                    below=tests.get("below", MISSING),
                    present=tests.get("present"),  # type: ignore[arg-type]
                )
            )
    return tuple(parsed)


def _parse_sort(raw: object, out: FieldProblems) -> SortBy | None:
    """``"date"`` (ascending) or ``{"by": "date", "order": "desc"}``."""
    if raw is None:
        return None
    if isinstance(raw, str):
        path = _parse_path_field(raw, "response.sort", out)
        return None if path is None else SortBy(path)
    if not isinstance(raw, Mapping):
        out.add(
            "response.sort",
            'must be a path or {"by": path, "order": "asc" or "desc"}, got '
            f"{type_name(raw)}",
        )
        return None
    for key in raw:
        if key not in ("by", "order"):
            out.add(f"response.sort.{key}", "unknown field; allowed fields: by, order")
    path = _parse_path_field(raw.get("by"), "response.sort.by", out)
    order = raw.get("order", "asc")
    if order not in SORT_ORDERS:
        out.add("response.sort.order", 'must be "asc" or "desc"')
        return None
    return None if path is None else SortBy(path, descending=order == "desc")


def _check_picks(raw: Mapping[str, object], out: FieldProblems) -> None:
    """The fields that cannot go together."""
    if raw.get("max_items") is not None and raw.get("last_items") is not None:
        out.add(
            "response.last_items",
            "keep the first N (max_items) or the last N (last_items), not both",
        )
    count = raw.get("count")
    if count is not None and not isinstance(count, bool):
        out.add("response.count", "must be true or false")
    if count is True:
        for key in ("sort", "max_items", "last_items", "fields"):
            if raw.get(key) is not None:
                out.add(
                    f"response.{key}",
                    "does not apply with count (the model reads a number)",
                )


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
    last_items = _parse_int(
        raw.get("last_items"), "response.last_items", MAX_ITEMS, out
    )
    where = _parse_where(raw.get("where"), out)
    sort = _parse_sort(raw.get("sort"), out)
    _check_picks(raw, out)
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
        path,
        fields_,
        named,
        max_items,
        values,
        times,
        timezone,
        max_chars,
        where=where,
        sort=sort,
        last_items=last_items,
        count=raw.get("count") is True,
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
