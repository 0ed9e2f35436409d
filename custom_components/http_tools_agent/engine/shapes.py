"""A tool's ``response`` shape: what of a JSON body the model reads.

A ``path`` to the value, at most ``max_items`` of a list, the ``fields`` of
each item, codes turned into words (``values``, ranges allowed) and epoch or
ISO times into local times (``times``, ``timezone``), and ``max_chars`` for
the text. :mod:`.responses` reads the field from a definition. The rules are
in ``docs/tool-format.md`` ("Shaping the response").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, tzinfo
from functools import lru_cache, partial
import math
import re
from typing import Any, Literal
from zoneinfo import ZoneInfo

from .bodies import Body, compact_json
from .paths import MISSING, find, parse_path, transform

TIME_UNITS = ("s", "ms", "iso")
TIME_SHOWS = ("datetime", "date", "time", "weekday")
_NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?")
# An all-day date (a calendar's whole-day event): a day, no moment.
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True, slots=True)
class TimeField:
    """How one field's time is read and said."""

    unit: Literal["s", "ms", "iso"]
    show: Literal["datetime", "date", "time", "weekday"] = "datetime"

    def as_raw(self) -> str | dict[str, str]:
        """Back to the file format (the short form when it says enough)."""
        if self.show == "datetime":
            return self.unit
        return {"unit": self.unit, "show": self.show}


def _number(value: Any) -> float | None:
    """A finite number, or a string that is one (services send "3" too)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and _NUMBER_RE.fullmatch(value.strip()):
        value = float(value)
    if isinstance(value, (int, float)) and math.isfinite(value):
        return float(value)
    return None


@dataclass(frozen=True, slots=True)
class CodeWords:
    """A field's codes and their words: exact codes, then numeric ranges."""

    words: dict[str, str]
    ranges: tuple[tuple[float, float, str], ...] = field(default=(), compare=False)

    def say(self, value: Any) -> Any:
        """The word for ``value`` (each item of a list), else the value."""
        if isinstance(value, list):
            return [self._one(item) for item in value]
        return self._one(value)

    def _one(self, value: Any) -> Any:
        if isinstance(value, bool):
            code = "true" if value else "false"
        elif value is None:
            code = "null"
        elif isinstance(value, float) and value.is_integer():
            code = str(int(value))
        elif isinstance(value, (int, float, str)):
            code = str(value)
        else:
            return value
        if code in self.words:
            return self.words[code]
        number = _number(value)
        if number is not None:
            for low, high, word in self.ranges:
                if low <= number <= high:
                    return word
        return value


@dataclass(frozen=True, slots=True)
class ResponseShape:
    """A tool's ``response``: what of a JSON body the model reads."""

    path: str | None = None
    # (output name, path); None: every field of each item.
    fields: tuple[tuple[str, str], ...] | None = None
    # The fields were named (an object) rather than listed.
    named: bool = False
    max_items: int | None = None
    values: dict[str, CodeWords] = field(default_factory=dict)
    times: dict[str, TimeField] = field(default_factory=dict)
    timezone: str | None = None
    max_chars: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """Back to the file format."""
        data: dict[str, Any] = {}
        if self.path is not None:
            data["path"] = self.path
        if self.fields is not None:
            data["fields"] = (
                dict(self.fields) if self.named else [path for _, path in self.fields]
            )
        if self.max_items is not None:
            data["max_items"] = self.max_items
        if self.values:
            data["values"] = {
                key: dict(words.words) for key, words in self.values.items()
            }
        if self.times:
            data["times"] = {key: time.as_raw() for key, time in self.times.items()}
        if self.timezone is not None:
            data["timezone"] = self.timezone
        if self.max_chars is not None:
            data["max_chars"] = self.max_chars
        return data

    def paths(self) -> list[tuple[str, str]]:
        """Every path the shape reads with its field (for the checks)."""
        found: list[tuple[str, str]] = []
        if self.path is not None:
            found.append(("response.path", self.path))
        if self.fields is not None:
            found += [
                (f"response.fields.{name}" if self.named else "response.fields", path)
                for name, path in self.fields
            ]
        found += [(f"response.values.{key}", key) for key in self.values]
        found += [(f"response.times.{key}", key) for key in self.times]
        return found


@lru_cache(maxsize=64)
def _zone(name: str | None) -> tzinfo:
    if not name:
        return UTC
    try:
        return ZoneInfo(name)
    except ValueError, LookupError, OSError:
        return UTC


def _local_time(value: Any, time: TimeField, zone: tzinfo) -> Any:
    if isinstance(value, list):
        return [_local_time(item, time, zone) for item in value]
    moment: datetime | None = None
    if time.unit == "iso":
        if isinstance(value, str) and _DATE_RE.fullmatch(value.strip()):
            return _day(value.strip(), time)
        if isinstance(value, str):
            try:
                moment = datetime.fromisoformat(value.strip())
            except ValueError:
                return value
            if moment.tzinfo is not None:
                moment = moment.astimezone(zone)
    else:
        number = _number(value)
        if number is None:
            return value
        seconds = number / 1000 if time.unit == "ms" else number
        try:
            moment = datetime.fromtimestamp(seconds, zone)
        except OverflowError, OSError, ValueError:
            return value
    if moment is None:
        return value
    if time.show == "date":
        return moment.strftime("%Y-%m-%d")
    if time.show == "time":
        return moment.strftime("%H:%M")
    if time.show == "weekday":
        return moment.strftime("%A")
    return moment.strftime("%Y-%m-%d %H:%M")


def _day(value: str, time: TimeField) -> str:
    """An all-day date stays a date (no midnight, no time zone shift)."""
    try:
        day = date.fromisoformat(value)
    except ValueError:
        return value
    return day.strftime("%A") if time.show == "weekday" else value


def _shape_item(item: Any, shape: ResponseShape, zone: tzinfo) -> Any:
    for key, words in shape.values.items():
        item = transform(item, parse_path(key), words.say)
    for key, time in shape.times.items():
        item = transform(
            item, parse_path(key), partial(_local_time, time=time, zone=zone)
        )
    if shape.fields is None:
        return item
    picked: dict[str, Any] = {}
    for name, path in shape.fields:
        found = find(item, parse_path(path))
        if found is not MISSING:
            picked[name] = found
    return picked


def apply_shape(value: Any, shape: ResponseShape, time_zone: str | None = None) -> Any:
    """The shaped value (MISSING when ``path`` finds nothing).

    ``time_zone`` is the caller's default when the shape names none.
    """
    zone = _zone(shape.timezone or time_zone)
    if shape.path is not None:
        value = find(value, parse_path(shape.path))
        if value is MISSING:
            return MISSING
    if isinstance(value, list):
        items = value[: shape.max_items] if shape.max_items is not None else value
        return [_shape_item(item, shape, zone) for item in items]
    return _shape_item(value, shape, zone)


def shaped_text(value: Any) -> str:
    """What the model reads of a shaped value: a string as it is, anything
    else as compact JSON."""
    if isinstance(value, str):
        return value
    return compact_json(value)


def nothing_at(shape: ResponseShape, body: Body) -> str:
    """The text for a ``path`` that finds nothing, with the body (a service
    that says why in a 200 is heard)."""
    return f"no '{shape.path}' in the response: {body.text}"
