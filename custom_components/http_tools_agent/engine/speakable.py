"""A tool's result as words a text-to-speech engine can read.

Used when a weak model gives no answer after its tools ran: reading the
result tells the user what happened, which beats both silence and "open
brace quote id quote…". It should sound like an answer a person gives:

- a thing with a name is said by it, then what it is and its values:
  `Berlin: clear, temperature 16 °C, humidity 80 %` (a descriptor such as
  `condition` or `status` is said without its key; a unit suffix of a key,
  `_c`, `_pct`, `_kmh`, becomes the unit);
- a list of named things is counted and joined with the language's "and":
  `3 items: apples (3), bananas (6) and milk (1)` (a thing's one number in
  brackets); one a shape left items out of says so: `3 of 41 items: …`;
- yes, no and an empty list in the user's language (`ReadOutWords`, filled
  from `lexicon/<language>.py` by the integration; the defaults below are
  English, for the engine's own callers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import json
import re
from typing import Any

from .words import word_set, words

DEFAULT_LIMIT = 300
_ELLIPSIS = "…"


@dataclass(frozen=True, slots=True, kw_only=True)
class ReadOutWords:
    """The words of one language a read-out needs."""

    # The last joiner of a list: "apples, bananas and milk".
    and_word: str = "and"
    yes: str = "yes"
    no: str = "no"
    # What an empty list is: "items: nothing".
    nothing: str = "nothing"
    # A list of named things, counted (`{count}` is 2 or more).
    items: str = "{count} items"
    # A list a shape left items out of: "3 of 41 items".
    some_items: str = "{count} of {total} items"
    # A list over several pages, stopped at the tool's `max_pages` (at
    # least 2), or by the page after `pages` failing (`engine/pages.py`).
    pages_more: str = "first {pages} pages, there are more"
    pages_failed: str = "page {page} failed"
    # Between a number's whole and its fraction: "16,5" in Italian.
    decimal: str = "."
    # Keys said in the language (`temperature` -> "temperatura"), by the
    # key's words lower-cased, its unit left off.
    keys: Mapping[str, str] = field(default_factory=dict)


ENGLISH = ReadOutWords(keys={"temp": "temperature"})

# A service's acknowledgement (`{"ok": true, …}`): said by "Done" already,
# and "ok yes" is no answer.
_ACKNOWLEDGEMENTS = frozenset({"ok", "success", "succeeded"})

# Fields that name a thing, in the order they are preferred.
_LABELS = words("""
    name title label city location place summary text message description
""")
# Fields whose word says what a thing is or how it is: said without the key
# ("clear", not "condition clear").
_DESCRIPTORS = word_set("""
    condition conditions status state summary description weather text
""")
# Ids are for the model, not the ear.
_UNSAID = frozenset({"id", "uuid"})

# A key's last word that is a unit: `temperature_c` is "temperature … °C".
_UNITS = {
    "c": "°C",
    "celsius": "°C",
    "f": "°F",
    "fahrenheit": "°F",
    "pct": "%",
    "percent": "%",
    "percentage": "%",
    "kmh": "km/h",
    "kph": "km/h",
    "mph": "mph",
    "mm": "mm",
    "cm": "cm",
    "m": "m",
    "km": "km",
    "kg": "kg",
    "w": "W",
    "kw": "kW",
    "kwh": "kWh",
    "wh": "Wh",
    "hpa": "hPa",
    "v": "V",
    "db": "dB",
    "lux": "lx",
    "s": "s",
    "sec": "s",
    "min": "min",
}
_KEY_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number(value: float, words: ReadOutWords) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).replace(".", words.decimal)


def _key(key: str, words: ReadOutWords) -> tuple[str, str | None]:
    """A key as words in the language, and its unit (`temperature_c`:
    "temperature", "°C")."""
    parts = [w.lower() for w in _KEY_WORD.findall(key)] or [key]
    unit = _UNITS.get(parts[-1]) if len(parts) > 1 else None
    if unit is not None:
        parts = parts[:-1]
    said = " ".join(parts)
    return words.keys.get(said, said), unit


def joined(parts: list[str], words: ReadOutWords = ENGLISH) -> str:
    """`a, b and c` with the language's "and"."""
    if len(parts) < 2:
        return "".join(parts)
    return f"{', '.join(parts[:-1])} {words.and_word} {parts[-1]}"


def _label(value: dict[str, Any]) -> tuple[str, str] | None:
    """The key and words of what names a thing, else None."""
    for key in _LABELS:
        label = value.get(key)
        if isinstance(label, str) and label.strip():
            return key, " ".join(label.split())
    return None


def _brief(value: dict[str, Any], words: ReadOutWords) -> str | None:
    """A named thing in a list: `name (number)` with its one number, else
    its name; None when it has no name."""
    if (found := _label(value)) is None:
        return None
    key, label = found
    numbers = [
        v
        for k, v in value.items()
        if k != key and k not in _LABELS and k not in _UNSAID and _is_number(v)
    ]
    if len(numbers) == 1:
        return f"{label} ({_number(numbers[0], words)})"
    return label


def _fields(value: dict[str, Any], words: ReadOutWords, skip: str | None) -> str:
    """A thing's values: its descriptors first, bare, then `key value`."""
    bare: list[str] = []
    said: list[str] = []
    for key, item in value.items():
        name = str(key)
        if name == skip or name.lower() in _UNSAID or item in (None, ""):
            continue
        if item is True and name.lower() in _ACKNOWLEDGEMENTS:
            continue
        if name.lower() in _DESCRIPTORS and isinstance(item, str):
            bare.append(" ".join(item.split()))
            continue
        key_words, unit = _key(name, words)
        if _is_number(item) and unit is not None:
            spoken = f"{_number(item, words)} {unit}"
        elif isinstance(item, bool | dict | list):
            said.append(f"{key_words}: {_words(item, words)}")
            continue
        else:
            spoken = _words(item, words)
        said.append(f"{key_words} {spoken}".strip())
    return ", ".join(bare + said)


def _list(value: list[Any], words: ReadOutWords, *, counted: bool) -> str:
    if not value:
        return words.nothing
    if all(isinstance(v, dict) for v in value):
        names = [_brief(v, words) for v in value]
        if all(n is not None for n in names):
            spoken = joined([n for n in names if n], words)
            if counted and len(value) > 1:
                return f"{words.items.format(count=len(value))}: {spoken}"
            return spoken
        return "; ".join(w for item in value if (w := _words(item, words)))
    if all(not isinstance(v, dict | list) for v in value):
        return joined([w for item in value if (w := _words(item, words))], words)
    return "; ".join(w for item in value if (w := _words(item, words)))


def _stopped(value: dict[str, Any], words: ReadOutWords) -> str | None:
    """Where a list over several pages stopped (`{"pages": 5, "more": …}`
    or `"failed"`), else None."""
    pages = value.get("pages")
    if not isinstance(pages, int) or isinstance(pages, bool):
        return None
    if "more" in value:
        return words.pages_more.format(pages=pages)
    if "failed" in value:
        return words.pages_failed.format(page=pages + 1)
    return None


def _some_items(value: dict[str, Any], words: ReadOutWords) -> str | None:
    """A shape's `{"items": [...], "of": 41}`: "3 of 41 items: …"; with the
    pages it stopped at, "3 of 41 items (first 5 pages, there are more): …";
    None for any other object."""
    stopped = _stopped(value, words)
    keys = set(value) - {"pages", "more", "failed"} if stopped else set(value)
    if stopped and keys == {"count"} and _is_number(value["count"]):
        return f"{_number(value['count'], words)} ({stopped})"
    items, total = value.get("items"), value.get("of")
    allowed = ({"items", "of"}, {"items"}) if stopped else ({"items", "of"},)
    if not isinstance(items, list) or keys not in allowed:
        return None
    if "of" in keys and (not isinstance(total, int) or isinstance(total, bool)):
        return None if items else words.nothing
    if not items:
        return f"{words.nothing} ({stopped})" if stopped else words.nothing
    if "of" in keys:
        said = words.some_items.format(count=len(items), total=total)
    else:
        said = words.items.format(count=len(items)) if len(items) > 1 else ""
    if stopped:
        said = f"{said} ({stopped})" if said else stopped
    return f"{said}: {_list(items, words, counted=False)}"


def _words(value: Any, words: ReadOutWords, *, top: bool = False) -> str:
    if isinstance(value, dict):
        if top and (some := _some_items(value, words)) is not None:
            return some
        if top and len(value) == 1:
            # `{"items": [...]}`: the list is the answer.
            (only,) = value.values()
            if isinstance(only, list):
                return _list(only, words, counted=True) if only else ""
        if (found := _label(value)) is not None:
            key, label = found
            others = {
                k: v
                for k, v in value.items()
                if k != key and str(k).lower() not in _UNSAID and v not in (None, "")
            }
            if len(others) == 1:
                ((other, number),) = others.items()
                if _is_number(number) and _key(str(other), words)[1] is None:
                    # "bread (1)": a name and its one number.
                    return f"{label} ({_number(number, words)})"
            rest = _fields(value, words, skip=key)
            return f"{label}: {rest}" if rest else label
        return _fields(value, words, skip=None)
    if isinstance(value, list):
        # Nothing at all came back: the caller says it found nothing.
        return _list(value, words, counted=top) if value or not top else ""
    if isinstance(value, bool):
        return words.yes if value else words.no
    if _is_number(value):
        return _number(value, words)
    if value is None:
        return ""
    return " ".join(str(value).split())


def speakable(
    text: str, limit: int = DEFAULT_LIMIT, words: ReadOutWords = ENGLISH
) -> str:
    """Return `text` (JSON said as an answer, in `words`' language) in at
    most about `limit` chars."""
    try:
        out = _words(json.loads(text), words, top=True)
    except ValueError, RecursionError:
        out = " ".join(text.split())
    if len(out) > limit:
        out = out[:limit].rsplit(" ", 1)[0].rstrip(",;:") + _ELLIPSIS
    return out


def _brief_whole(value: dict[str, Any]) -> bool:
    """Whether `_brief` says all of a named thing: its name and at most
    one number besides ids."""
    found = _label(value)
    if found is None:
        return False
    rest = [
        v
        for k, v in value.items()
        if k != found[0] and k not in _UNSAID and v not in (None, "")
    ]
    return len(rest) <= 1 and all(_is_number(v) for v in rest)


def _whole(value: Any) -> bool:
    """Whether `_words` says every value of `value` (ids aside)."""
    if isinstance(value, dict):
        return all(_whole(item) for item in value.values())
    if isinstance(value, list):
        if value and all(isinstance(v, dict) and _label(v) for v in value):
            return all(_brief_whole(v) for v in value)
        return all(_whole(item) for item in value)
    return True


def says_all(text: str, limit: int = DEFAULT_LIMIT) -> bool:
    """Whether `speakable(text, limit)` says everything the result holds
    that a person would be told (ids aside): what a model reading the
    result could answer, the read-out answers too. A list of things with
    several values each is said by their names only; a long result is cut."""
    try:
        value = json.loads(text)
    except ValueError, RecursionError:
        return len(" ".join(text.split())) <= limit
    return _whole(value) and len(_words(value, ENGLISH, top=True)) <= limit
