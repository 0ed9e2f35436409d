"""Scanner for a line-start code fence that may hold calls (```` ```json ````)."""

from __future__ import annotations

from enum import Enum, auto

FENCE_LANGS = ("", "json", "tool_call", "tool_code")
"""Info strings of a fence that may hold a call (compared lower-cased)."""

_MAX_LANG = 16
_LANG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-+.")


class FenceEnd(Enum):
    """How reading a fence stopped."""

    TEXT = auto()  # not a fence of calls: ``held`` and what follows are text
    CALL = auto()  # call JSON starts at the returned index, ``held`` before it
    CLOSED = auto()  # the closing fence after the calls: all of it removed


class _Stage(Enum):
    OPENING = auto()  # the backticks and the info string
    BODY = auto()  # whitespace before the first call
    AFTER_CALL = auto()  # whitespace, more calls, or the closing fence


class Fence:
    """Reads a fence around its calls; the calls are the JSON scanner's part.

    Each character is looked at once: the fence holds only backticks, an info
    string and whitespace.
    """

    __slots__ = ("_code", "_stage", "end", "held")

    def __init__(self) -> None:
        """An idle scanner."""
        self.open()

    def open(self) -> None:
        """A backtick at the start of a line: maybe a fence."""
        self._stage = _Stage.OPENING
        self._code = False  # ```tool_code: Python calls may follow
        self.held = "`"
        self.end: FenceEnd | None = None

    def after_call(self) -> None:
        """A call inside the fence is complete."""
        self._stage = _Stage.AFTER_CALL
        self.held = ""
        self.end = None

    def feed(self, text: str, i: int) -> int:
        """Read ``text[i:]``; return where reading stopped (see ``end``)."""
        n = len(text)
        held = self.held
        while i < n:
            c = text[i]
            stage = self._stage
            if stage is _Stage.OPENING:
                if len(held) < 3:
                    if c != "`":
                        return self._stop(FenceEnd.TEXT, held, i)
                elif c == "\n":
                    lang = held[3:].strip().lower()
                    if lang not in FENCE_LANGS:
                        return self._stop(FenceEnd.TEXT, held, i)
                    self._code = lang == "tool_code"
                    self._stage = _Stage.BODY
                elif c not in " \t\r" and not _may_be_lang(held[3:], c):
                    return self._stop(FenceEnd.TEXT, held, i)
                held += c
                i += 1
            elif stage is _Stage.BODY:
                if c.isspace():
                    held += c
                    i += 1
                elif c in "{[" or self._python(c):
                    return self._stop(FenceEnd.CALL, held, i)
                else:
                    return self._stop(FenceEnd.TEXT, held, i)
            elif c == "`":
                held += c
                i += 1
                if held.count("`") == 3:
                    return self._stop(FenceEnd.CLOSED, "", i)
            elif "`" in held or not (c.isspace() or c in "{[" or self._python(c)):
                return self._stop(FenceEnd.TEXT, held, i)
            elif c.isspace():
                held += c
                i += 1
            else:
                return self._stop(FenceEnd.CALL, held, i)
        self.held = held
        return n

    def cut_off(self) -> str:
        """The reply ended in the fence: the text it held (none after a call)."""
        held, self.held = self.held, ""
        return "" if self._stage is _Stage.AFTER_CALL else held

    def _python(self, c: str) -> bool:
        """A name starts a Python call in a ```tool_code fence."""
        return self._code and (c.isalpha() or c == "_")

    def _stop(self, end: FenceEnd, held: str, i: int) -> int:
        self.end = end
        self.held = held
        return i


def _may_be_lang(info: str, c: str) -> bool:
    """Whether ``info`` + ``c`` can still become one of ``FENCE_LANGS``."""
    lang = info.strip().lower() + c.lower()
    return (
        c.lower() in _LANG_CHARS
        and info.rstrip() == info
        and len(lang) <= _MAX_LANG
        and any(x.startswith(lang) for x in FENCE_LANGS)
    )
