"""Paths into a JSON document: `data.items`, `results[0].latitude`,
`items[].name`, `service_response["weather.home"].forecast`.

One small syntax for every place a definition points into a response: the
`response` shape, a composite tool's step references (`{geocode.results[0].
latitude}`) and `speech`. It reads and never evaluates anything:

- `key` (letters, digits and any character but `.[]{}"'?` and spaces) after
  a `.` or at the start; `["any key"]` for a key with those characters;
- `[2]` an item of a list, `[-1]` counted from the end;
- `[]` every item of a list: the rest of the path is read in each, and the
  items where it finds nothing are skipped (`items[].name` is a list);
- `.` alone: the whole document.

The rules are in ``docs/tool-format.md`` ("Paths").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
import re
from typing import Any, Final

MAX_PATH_LENGTH = 300
MAX_SEGMENTS = 32

_KEY_RE = re.compile(r"""[^.\[\]{}"'?\s]+""")
_INDEX_RE = re.compile(r"-?[0-9]{1,9}")


@dataclass(frozen=True, slots=True)
class Key:
    """An object's member."""

    name: str


@dataclass(frozen=True, slots=True)
class Index:
    """A list's item (negative: from the end)."""

    position: int


@dataclass(frozen=True, slots=True)
class Each:
    """Every item of a list."""


type Segment = Key | Index | Each
type Path = tuple[Segment, ...]


class _Missing:
    """Nothing at a path (JSON `null` is a value)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        """One instance."""
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        """For test failures."""
        return "MISSING"

    def __bool__(self) -> bool:
        """Falsy, like the nothing it stands for."""
        return False


MISSING: Final = _Missing()


@lru_cache(maxsize=2048)
def parse_path(text: str) -> Path:
    """The segments of `text`; raise `ValueError` with a readable reason."""
    if not isinstance(text, str) or not text:
        raise ValueError("a path must be a non-empty string")
    if len(text) > MAX_PATH_LENGTH:
        raise ValueError(f"a path has at most {MAX_PATH_LENGTH} characters")
    if text == ".":
        return ()
    segments: list[Segment] = []
    i = 0
    length = len(text)
    while i < length:
        char = text[i]
        if char == "[":
            end = text.find("]", i + 1)
            if text.startswith('["', i):
                close = text.find('"]', i + 2)
                if close == -1:
                    raise ValueError(f"'[\"' at position {i} is not closed by '\"]'")
                segments.append(Key(text[i + 2 : close]))
                i = close + 2
            elif end == -1:
                raise ValueError(f"'[' at position {i} is not closed")
            else:
                inner = text[i + 1 : end]
                if not inner:
                    segments.append(Each())
                elif _INDEX_RE.fullmatch(inner):
                    segments.append(Index(int(inner)))
                else:
                    raise ValueError(
                        f"'[{inner}]' at position {i}: use [n] for an item, [] for "
                        'every item, ["key"] for a key with other characters'
                    )
                i = end + 1
            continue
        if char == ".":
            if not segments or i + 1 >= length:
                raise ValueError(f"'.' at position {i} must stand between two keys")
            i += 1
        match = _KEY_RE.match(text, i)
        if match is None:
            raise ValueError(
                f'unexpected {text[i]!r} at position {i}: write such a key as ["key"]'
            )
        segments.append(Key(match.group()))
        i = match.end()
    if len(segments) > MAX_SEGMENTS:
        raise ValueError(f"a path has at most {MAX_SEGMENTS} segments")
    return tuple(segments)


def format_path(path: Path) -> str:
    """`path` written back (for messages)."""
    out: list[str] = []
    for segment in path:
        if isinstance(segment, Key):
            if _KEY_RE.fullmatch(segment.name):
                out.append(("." if out else "") + segment.name)
            else:
                out.append(f'["{segment.name}"]')
        elif isinstance(segment, Index):
            out.append(f"[{segment.position}]")
        else:
            out.append("[]")
    return "".join(out) or "."


def find(document: Any, path: Path) -> Any:
    """The value at `path` in `document`, or `MISSING`."""
    value = document
    for position, segment in enumerate(path):
        if isinstance(segment, Key):
            if not isinstance(value, Mapping) or segment.name not in value:
                return MISSING
            value = value[segment.name]
        elif isinstance(segment, Index):
            if not isinstance(value, list):
                return MISSING
            try:
                value = value[segment.position]
            except IndexError:
                return MISSING
        else:
            if not isinstance(value, list):
                return MISSING
            rest = path[position + 1 :]
            return [
                found for item in value if (found := find(item, rest)) is not MISSING
            ]
    return value


def has_each(path: Path) -> bool:
    """Whether `path` reads every item of a list somewhere (gives a list)."""
    return any(isinstance(segment, Each) for segment in path)


def transform(document: Any, path: Path, change: Callable[[Any], Any]) -> Any:
    """A copy of `document` where the value at `path` is `change(value)`;
    `document` itself when nothing is there."""
    if not path:
        return change(document)
    segment, rest = path[0], path[1:]
    if isinstance(segment, Key):
        if not isinstance(document, Mapping) or segment.name not in document:
            return document
        copy = dict(document)
        copy[segment.name] = transform(document[segment.name], rest, change)
        return copy
    if not isinstance(document, list):
        return document
    if isinstance(segment, Index):
        if not -len(document) <= segment.position < len(document):
            return document
        items = list(document)
        items[segment.position] = transform(items[segment.position], rest, change)
        return items
    return [transform(item, rest, change) for item in document]
