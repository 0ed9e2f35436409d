"""A shape over a JSON answer too large to hold: the list it reads is
found and its items decoded one at a time as the bytes arrive.

The answer's members are walked by the shape's ``path`` (member names only:
``data.items``, or the answer itself); members before the list are decoded
and dropped, each item is given to :class:`~.shapes.ItemPicker` (where,
sort, the first or last N, count) and dropped, and reading stops at the
list's end. Memory holds one item (at most ``MAX_VALUE_CHARS``), the items
kept (at most ``MAX_ITEMS``, shaped) and a chunk, whatever the answer's
size. What it cannot shape it says in one line (:attr:`StreamShaper.failure`),
never as the raw JSON. :mod:`.transport` feeds it what is over the byte cap.
"""

from __future__ import annotations

import codecs
from enum import Enum, auto
import json
import re
from typing import Any

from .paths import Key, parse_path
from .shapes import MAX_ITEMS, ItemPicker, ResponseShape, zone_of

# One value the walk holds at once (an item, or a member before the list).
MAX_VALUE_CHARS = 1_048_576
_SPACE_RE = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()
_NUMBER_GOES_ON = frozenset("0123456789.eE+-")


class _At(Enum):
    VALUE = auto()  # a value on the path (an object to enter, or the list)
    MEMBER = auto()  # the next member's name, or the object's end
    SKIP = auto()  # a member that is not on the path
    ITEMS = auto()  # the list's next item, or its end
    DONE = auto()
    FAILED = auto()


class _Wait(Exception):
    """The buffer ends inside what comes next: more bytes needed."""


def stream_keys(shape: ResponseShape) -> tuple[str, ...] | None:
    """The member names to the list, or None when the path has an index or
    ``[]`` (a list streamed is reached by names only)."""
    if shape.path is None:
        return ()
    path = parse_path(shape.path)
    if not all(isinstance(segment, Key) for segment in path):
        return None
    return tuple(segment.name for segment in path if isinstance(segment, Key))


class StreamShaper:
    """Fed the answer's bytes; then :meth:`answer` or :attr:`failure`."""

    def __init__(
        self, shape: ResponseShape, time_zone: str | None, charset: str | None
    ) -> None:
        self.picker = ItemPicker(shape, zone_of(shape, time_zone), at_most=MAX_ITEMS)
        self.failure: str | None = None
        self._keys = stream_keys(shape)
        self._depth = 0
        self._at = _At.VALUE
        # After `{` or `[`: a name or an item may come; after one: `,`.
        self._fresh = True
        self._buffer = ""
        try:
            encoding = codecs.lookup(charset or "utf-8").name
            self._decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        except LookupError:
            self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        if self._keys is None:
            self._fail(
                "its path reaches the list by an index or '[]'; only member "
                "names are followed in a streamed answer"
            )

    @property
    def done(self) -> bool:
        """Nothing more is needed (the list ended, or it failed)."""
        return self._at in (_At.DONE, _At.FAILED)

    def feed(self, data: bytes) -> bool:
        """Read more of the answer; True once nothing more is needed."""
        if not self.done:
            self._buffer += self._decoder.decode(data)
            self._walk(end=False)
        return self.done

    def close(self) -> None:
        """The answer ended."""
        if not self.done:
            self._buffer += self._decoder.decode(b"", final=True)
            self._walk(end=True)
        if not self.done:
            self._fail("the answer ended before its list did")

    def answer(self) -> tuple[Any, str] | None:
        """What the model reads (None: it failed)."""
        return None if self._at is not _At.DONE else self.picker.answer()

    def _fail(self, why: str) -> None:
        self._at = _At.FAILED
        self.failure = why
        self._buffer = ""

    def _walk(self, *, end: bool) -> None:
        position = 0
        try:
            while not self.done:
                position = self._step(position, end)
        except _Wait:
            if len(self._buffer) - position > MAX_VALUE_CHARS:
                self._fail(f"a value is larger than {MAX_VALUE_CHARS // 1024} KB")
            elif end and self._buffer[position:].strip():
                self._fail("it is not JSON (or it was cut short)")
            elif end:
                self._fail("the answer ended before its list did")
        self._buffer = self._buffer[position:] if not self.done else ""

    def _next(self, position: int, end: bool) -> int:
        """Where the next token starts (spaces skipped)."""
        match = _SPACE_RE.match(self._buffer, position)
        found = match.end() if match else position
        if found >= len(self._buffer):
            raise _Wait
        return found

    def _value(self, position: int, end: bool) -> tuple[Any, int]:
        """The JSON value at ``position`` and where it ends."""
        try:
            value, after = _DECODER.raw_decode(self._buffer, position)
        except json.JSONDecodeError:
            raise _Wait from None
        if not end and (
            after >= len(self._buffer)
            # `-500.` of `-500.0`: a number goes on in the next chunk.
            or (
                isinstance(value, (int, float))
                and self._buffer[after] in _NUMBER_GOES_ON
            )
        ):
            raise _Wait
        return value, after

    def _step(self, position: int, end: bool) -> int:
        """One token (or one whole value) further; where it stopped."""
        keys = self._keys or ()
        at = self._next(position, end)
        char = self._buffer[at]
        if self._at is _At.VALUE:
            wanted = "[" if self._depth == len(keys) else "{"
            if char != wanted:
                where = ".".join(keys[: self._depth]) or "the answer"
                self._fail(
                    f"'{where}' is no list"
                    if wanted == "["
                    else f"no '{'.'.join(keys)}' in the response"
                )
                return at
            self._at = _At.ITEMS if wanted == "[" else _At.MEMBER
            self._fresh = True
            return at + 1
        if self._at is _At.ITEMS:
            return self._item(at, char, end)
        if self._at is _At.SKIP:
            _, after = self._value(at, end)
            self._at, self._fresh = _At.MEMBER, False
            return after
        return self._member(at, char, end, keys)

    def _comma(self, at: int, char: str) -> int:
        """Between two items or members: a ',' and the next one is fresh."""
        if char != ",":
            self._fail("it is not JSON")
            return at
        self._fresh = True
        return at + 1

    def _item(self, at: int, char: str, end: bool) -> int:
        if char == "]":
            self._at = _At.DONE
            return at + 1
        if not self._fresh:
            return self._comma(at, char)
        item, after = self._value(at, end)
        self.picker.add(item)
        self._fresh = False
        return after

    def _member(self, at: int, char: str, end: bool, keys: tuple[str, ...]) -> int:
        if char == "}":
            self._fail(f"no '{'.'.join(keys)}' in the response")
            return at
        if not self._fresh:
            return self._comma(at, char)
        name, after = self._value(at, end)
        colon = self._next(after, end)
        if not isinstance(name, str) or self._buffer[colon] != ":":
            self._fail("it is not JSON")
            return at
        if name == keys[self._depth]:
            self._depth += 1
            self._at = _At.VALUE
        else:
            self._at = _At.SKIP
        return colon + 1
