"""A tool's ``response`` shape: what of a JSON body the model reads.

A ``path`` to the value; of a list, the items ``where`` a field's value
holds, ``sort``-ed by a field, the first ``max_items`` or the ``last_items``,
or their ``count``; the ``fields`` of each item, codes turned into words
(``values``, ranges allowed) and epoch or ISO times into local times
(``times``, ``timezone``), and ``max_chars`` for the text. A list whose
items were left out is read with its size: ``{"items": [...], "of": 41}``.
:mod:`.responses` reads the field from a definition; :mod:`.stream_shape`
shapes a list as it streams. The rules are in ``docs/tool-format.md``
("Shaping the response").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime, tzinfo
from functools import lru_cache, partial
from itertools import islice
import math
import re
from typing import Any, Literal
from zoneinfo import ZoneInfo

from .bodies import Body, compact_json
from .paths import MISSING, find, parse_path, transform

TIME_UNITS = ("s", "ms", "iso")
CONDITIONS = ("equals", "contains", "above", "below", "present")
SORT_ORDERS = ("asc", "desc")
# The items a shape keeps at most (and the highest max_items/last_items).
MAX_ITEMS = 1000
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


def _same(value: Any, wanted: Any) -> bool:
    """Equal as a person means it: numbers by value ("3" is 3), text
    ignoring case."""
    if isinstance(wanted, bool) or isinstance(value, bool) or wanted is None:
        return value is wanted
    if (number := _number(wanted)) is not None and _number(value) == number:
        return True
    if isinstance(value, str) and isinstance(wanted, str):
        return value.casefold() == wanted.casefold()
    return bool(value == wanted)


def _order(value: Any, bound: Any) -> int | None:
    """-1, 0 or 1 of ``value`` against ``bound``: numbers by value, text
    as text (ISO dates and times order so); None: they do not compare."""
    low, high = _number(value), _number(bound)
    if low is not None and high is not None:
        return (low > high) - (low < high)
    if isinstance(value, str) and isinstance(bound, str):
        return (value > bound) - (value < bound)
    return None


@dataclass(frozen=True, slots=True)
class Condition:
    """What a field's value must be for an item to stay (all that is set)."""

    path: str
    equals: Any = MISSING
    contains: Any = MISSING
    above: Any = MISSING
    below: Any = MISSING
    present: bool | None = None

    def holds(self, item: Any) -> bool:
        value = find(item, parse_path(self.path))
        there = value is not MISSING and value is not None
        if self.present is not None and there != self.present:
            return False
        if not there:
            return self.present is False or all(
                test is MISSING
                for test in (self.equals, self.contains, self.above, self.below)
            )
        if self.equals is not MISSING and not _same(value, self.equals):
            return False
        if self.contains is not MISSING and not self._contains(value):
            return False
        if self.above is not MISSING and _order(value, self.above) != 1:
            return False
        return self.below is MISSING or _order(value, self.below) == -1

    def _contains(self, value: Any) -> bool:
        if isinstance(value, str):
            return str(self.contains).casefold() in value.casefold()
        if isinstance(value, list):
            return any(_same(item, self.contains) for item in value)
        return False

    def as_raw(self) -> Any:
        """Back to the file format (a bare value for equals alone)."""
        tests = {
            name: test
            for name in CONDITIONS
            if (test := getattr(self, name)) is not MISSING and test is not None
        }
        if list(tests) == ["equals"] and not isinstance(tests["equals"], dict):
            return tests["equals"]
        return tests


@dataclass(frozen=True, slots=True)
class SortBy:
    """The field items are ordered by."""

    path: str
    descending: bool = False

    def as_raw(self) -> str | dict[str, str]:
        if not self.descending:
            return self.path
        return {"by": self.path, "order": "desc"}


def _sort_key(value: Any) -> tuple[int, Any]:
    """Numbers, then text; what is neither goes last."""
    if (number := _number(value)) is not None:
        return 0, number
    if isinstance(value, str):
        return 1, value.casefold()
    return 2, 0


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
    where: tuple[Condition, ...] = ()
    sort: SortBy | None = None
    last_items: int | None = None
    count: bool = False

    def as_dict(self) -> dict[str, Any]:
        """Back to the file format."""
        data: dict[str, Any] = {}
        if self.path is not None:
            data["path"] = self.path
        if self.where:
            data["where"] = {c.path: c.as_raw() for c in self.where}
        if self.sort is not None:
            data["sort"] = self.sort.as_raw()
        if self.last_items is not None:
            data["last_items"] = self.last_items
        if self.count:
            data["count"] = True
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
        found += [(f"response.where.{c.path}", c.path) for c in self.where]
        if self.sort is not None:
            found.append(("response.sort", self.sort.path))
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


def zone_of(shape: ResponseShape, time_zone: str | None) -> tzinfo:
    """Where the shape's times are said: its own zone, else the caller's."""
    return _zone(shape.timezone or time_zone)


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


class ItemPicker:
    """The items of a list a shape keeps, given one at a time (a list read
    whole, or streamed): those ``where`` holds, sorted, the first or last N,
    each shaped; ``total`` counts every item given."""

    def __init__(
        self, shape: ResponseShape, zone: tzinfo, at_most: int | None = None
    ) -> None:
        """``at_most``: the items kept when the shape names no number (a
        list streamed is bounded; one read whole is not)."""
        self.shape = shape
        self.zone = zone
        self.total = 0
        self.matched = 0
        # (sort key, item: shaped unless sorted or from the end), in
        # arrival order until sorted.
        self._kept: list[tuple[tuple[int, Any], Any]] = []
        self._keep = shape.max_items or shape.last_items or at_most
        self._sort_path = parse_path(shape.sort.path) if shape.sort else None

    def add(self, item: Any) -> None:
        self.total += 1
        if not all(condition.holds(item) for condition in self.shape.where):
            return
        self.matched += 1
        shape = self.shape
        if shape.count:
            return
        if self._sort_path is None and shape.last_items is None:
            if self._keep is None or len(self._kept) < self._keep:
                self._kept.append(((2, 0), _shape_item(item, shape, self.zone)))
            return
        key = (2, 0)
        if self._sort_path is not None:
            key = _sort_key(find(item, self._sort_path))
        # Shaped once it is kept for good (most sorted items are not).
        self._kept.append((key, item))
        if self._keep is not None and len(self._kept) > 2 * self._keep + 64:
            self._kept = self._cut(self._ordered())

    def _ordered(self) -> list[tuple[tuple[int, Any], Any]]:
        if self.shape.sort is None:
            return self._kept
        present = [entry for entry in self._kept if entry[0][0] < 2]
        absent = [entry for entry in self._kept if entry[0][0] == 2]
        present.sort(key=lambda entry: entry[0], reverse=self.shape.sort.descending)
        return present + absent

    def _cut(
        self, ordered: list[tuple[tuple[int, Any], Any]]
    ) -> list[tuple[tuple[int, Any], Any]]:
        if self.shape.last_items is not None:
            return ordered[-self.shape.last_items :]
        return ordered if self._keep is None else list(islice(ordered, self._keep))

    def items(self) -> list[Any]:
        """The items kept, in order."""
        kept = [item for _, item in self._cut(self._ordered())]
        if self._sort_path is None and self.shape.last_items is None:
            return kept
        return [_shape_item(item, self.shape, self.zone) for item in kept]

    def answer(self) -> tuple[Any, str]:
        """(the value a sentence reads, the text the model reads): the count,
        or the items with the list's size when some were left out."""
        if self.shape.count:
            return self.matched, str(self.matched)
        items = self.items()
        if len(items) < self.total:
            return items, compact_json({"items": items, "of": self.total})
        return items, compact_json(items)


def _at_path(value: Any, shape: ResponseShape) -> Any:
    if shape.path is None:
        return value
    return find(value, parse_path(shape.path))


def shape_answer(
    value: Any, shape: ResponseShape, time_zone: str | None = None
) -> tuple[Any, str] | None:
    """(the shaped value a sentence reads, the text the model reads); None
    when ``path`` finds nothing. ``time_zone`` is the caller's default when
    the shape names none."""
    zone = zone_of(shape, time_zone)
    value = _at_path(value, shape)
    if value is MISSING:
        return None
    if isinstance(value, list):
        picker = ItemPicker(shape, zone)
        for item in value:
            picker.add(item)
        return picker.answer()
    shaped = _shape_item(value, shape, zone)
    return shaped, shaped_text(shaped)


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
