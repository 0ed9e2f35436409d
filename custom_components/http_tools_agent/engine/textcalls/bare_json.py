"""Scanner for JSON at the start of a line that may be a call (or echo a result).

The value is followed bracket by bracket while it streams in. Only the keys
and the ``name`` at the call object's own level are decoded; nested values
are skipped by a regular expression. It is released as text as soon as it
cannot be a call (a first key that is no call key, a name that is no tool),
so JSON that is an answer is delayed as little as possible.
"""

from __future__ import annotations

import json
import re

from .json_calls import is_json, parse_bare_json
from .markup import Parsed, problem
from .names import ToolNames

CALL_KEYS = frozenset({"name", "arguments", "parameters", "function", "type", "id"})
"""Top-level keys a JSON call object may start with (anything else: not a call)."""

_STR_STOP = re.compile(r'["\\\n]')
_DEEP_STOP = re.compile(r'["{}\[\]]')
# The same for a value written with Python's quotes (`{'name': ...}`, a
# near-JSON slip `repair.py` mends): its strings are in single quotes.
_SQ_STR_STOP = re.compile(r"['\\\n]")
_SQ_DEEP_STOP = re.compile(r"['{}\[\]]")
_MAX_KEY = 300  # a longer key or name is no call
# A call written longer than this is broken: nothing a request asks for
# needs such arguments. Qwen2.5-0.5B wrote 122 KB (1,024 tokens, 40 s) of
# one call's `device_class` list, a string left open from its start.
MAX_CALL_CHARS = 1500
# `_keys` bits: the call level had a "name", and "arguments" or "parameters".
_NAME, _ARGUMENTS = 1, 2
_CALL_SHAPE = _NAME | _ARGUMENTS


class BareJson:
    """One JSON object (or list of objects) that may be a call.

    After :meth:`feed` returns, ``parsed`` is set when the value completed as
    calls or an echo, ``rejected`` when it is text (:meth:`held` gives it back).
    """

    __slots__ = (
        "_collect", "_committed", "_depth", "_echo", "_echo_possible", "_esc",
        "_expect_key", "_in_str", "_key", "_keys", "_length", "_list",
        "_list_expect", "_objdepth", "_parts", "_prefix", "_quote", "_str",
        "_strlen", "_tools", "fence", "parsed", "rejected",
    )  # fmt: skip

    def __init__(self, tools: ToolNames) -> None:
        """Scanner for calls that name ``tools``."""
        self._tools = tools
        self.begin("{", "", fence=False, echo_possible=False)

    def begin(self, c: str, prefix: str, *, fence: bool, echo_possible: bool) -> None:
        """``c`` (``{`` or ``[``) opened a value; ``prefix`` was held before it.

        ``fence``: the value is inside a code fence. ``echo_possible``: the
        reply made a call or answers tool results, so an object that is no
        call echoes a result.
        """
        self._prefix = prefix
        self.fence = fence
        self._parts = [c]
        self._list = c == "["
        self._echo_possible = echo_possible
        self._objdepth = 2 if self._list else 1  # depth of the call objects
        self._depth = 1
        self._in_str = False
        self._esc = False
        self._collect = False  # the string is a key or value at the call level
        self._str: list[str] = []
        self._strlen = 0
        self._expect_key = not self._list
        self._list_expect = self._list  # a list expects its next object
        self._key: str | None = None
        self._keys = 0  # _NAME | _ARGUMENTS seen at the call level
        self._committed = False  # held to its end: a call (or an echo)
        self._length = 0  # characters read since the value began
        self._quote = '"'  # the strings' quote: `'` for Python's quotes
        self._echo = False
        self.parsed: Parsed | None = None
        self.rejected = False

    def held(self) -> list[str]:
        """The text held since the value began (after a rejection)."""
        held = [self._prefix, "".join(self._parts)]
        self._parts = []
        return held

    def feed(self, text: str, i: int) -> int:
        """Read ``text[i:]``; return where the value ended or was rejected."""
        n = len(text)
        j = i
        while j < n:
            if self._in_str:
                if self._esc:
                    self._esc = False
                    if self._collect:
                        self._str.append(text[j])
                    j += 1
                    continue
                m = (_STR_STOP if self._quote == '"' else _SQ_STR_STOP).search(text, j)
                stop = n if m is None else m.start()
                if self._collect and stop > j:
                    self._str.append(text[j:stop])
                    self._strlen += stop - j
                    if self._strlen > _MAX_KEY:
                        if not self._committed and (
                            self._expect_key or self._key == "name"
                        ):
                            return self._reject(text, i, stop)
                        self._collect = False
                if m is None:
                    j = n
                    break
                if text[stop] == "\n":
                    # A line break inside a string: the string was never
                    # closed (JSON strings hold none). Qwen2.5-0.5B wrote
                    # `"arguments": "{\\"id\\": \\"1\\"}\\"}` and the next
                    # call on the next line, for 3,500 characters: the
                    # broken value ends at the line's end.
                    if not self._committed:
                        return self._reject(text, i, stop)
                    return self._broken(text, i, stop)
                if text[stop] == "\\":
                    self._esc = True
                    if self._collect:
                        self._str.append("\\")
                    j = stop + 1
                    continue
                self._in_str = False
                j = stop + 1
                if self._collect:
                    self._str.append(self._quote)
                    if not self._string_done():
                        return self._reject(text, i, j)
                continue
            depth = self._depth
            if depth > self._objdepth:  # inside a value: only brackets count
                deep = _DEEP_STOP if self._quote == '"' else _SQ_DEEP_STOP
                m = deep.search(text, j)
                if m is None:
                    j = n
                    break
                j = m.start()
                c = text[j]
                j += 1
                if c == self._quote:
                    self._in_str = True
                    self._collect = False
                elif c in "{[":
                    self._depth = depth + 1
                else:
                    self._depth = depth - 1
                continue
            c = text[j]
            if self._list and depth == 1:
                if c == "{" and self._list_expect:
                    self._list_expect = False
                    self._depth = 2
                    self._expect_key = True
                    self._key = None
                elif c == "," and not self._list_expect:
                    self._list_expect = True
                elif c == "]":
                    return self._complete(text, i, j + 1)
                elif not c.isspace() and not self._committed:
                    return self._reject(text, i, j)
                j += 1
                continue
            # at the call object's own level
            j += 1
            if c == "'" and self._quote == '"' and self._expect_key and not self._keys:
                self._quote = "'"  # Python's quotes from the first key on
            if c == self._quote:
                self._in_str = True
                self._collect = True
                self._str = [c]
                self._strlen = 0
            elif c in "{[":
                if self._expect_key and not self._broken_call():
                    return self._reject(text, i, j - 1)
                self._depth = depth + 1
            elif c in "}]":
                self._depth = depth - 1
                if depth == 1:
                    return self._complete(text, i, j)
            elif c == ":":
                self._expect_key = False
            elif c == ",":
                self._expect_key = True
            elif self._expect_key and not c.isspace() and not self._broken_call():
                return self._reject(text, i, j - 1)
        self._parts.append(text[i:j] if i or j < n else text)
        self._length += n - i
        if self._length > MAX_CALL_CHARS and not self._echo:
            self._overlong()
        return n

    def cut_off(self) -> Parsed:
        """The reply ended inside the value: what it gave (never speech).

        Held this long, the value started like a call (its keys so far are
        call keys): a server that parses calls streams a call's first tokens
        as text before it sends the call itself (llama.cpp's `llama-server`
        does: `{"name": "`). An echo is no speech either.
        """
        raw = "".join(self._parts)
        self._parts = []
        if self._echo or not self._committed:
            return Parsed(thinking=[self._prefix, raw])
        # Only closing brackets cut off, or near-JSON (`repair.py`).
        result = parse_bare_json(raw, self._tools, committed=True)
        if result is not None and result.calls and not result.problems:
            return result
        reason = "the reply ended before the JSON call was complete"
        return Parsed(problems=[problem(reason, raw)])

    def _string_done(self) -> bool:
        """A string at the call object's level ended; False: not a call."""
        self._collect = False
        written = "".join(self._str)
        if self._quote == "'":
            inner = written[1:-1].replace('"', '\\"')
            written = f'"{inner}"'
        try:
            value = json.loads(written, strict=False)
        except ValueError, RecursionError:
            return self._committed
        if self._expect_key:
            self._key = value
            if value == "name":
                self._keys |= _NAME
            elif value in ("arguments", "parameters"):
                self._keys |= _ARGUMENTS
            if self._committed or value in CALL_KEYS:
                return True
            if self._echo_possible:
                # After a call, small models echo the tool result as JSON on
                # its own line ({"response": ...}): hold it, it is no speech.
                self._echo = self._committed = True
                return True
            return False
        if self._key == "name" and not self._committed:
            if self._tools.resolve(value) is None:
                # Held to the end: exactly {"name", "arguments"} is still a
                # call attempt (an invented name), anything else is text.
                return bool(self._tools) and isinstance(value, str)
            self._committed = True
        return True

    def _broken_call(self) -> bool:
        """Where a key belongs the JSON broke (`{` or a word): held on when
        it was a call so far, whatever its name (a problem, never speech).
        Qwen2.5-0.5B wrote calls one after the other inside one object:
        `{"name": …, "arguments": {…}, {"name": …`."""
        if not self._committed and self._keys == _CALL_SHAPE:
            self._committed = True
        return self._committed

    def _overlong(self) -> None:
        """A value longer than any call: broken (a string left open); the
        reply is read no further (`Parsed.stop`). Held this long, it was
        never text."""
        raw = "".join(self._parts)[:MAX_CALL_CHARS]
        self._parts = []
        reason = f"the call is longer than {MAX_CALL_CHARS} characters"
        if self._committed or self._keys == _CALL_SHAPE:
            self.parsed = Parsed(problems=[problem(reason, raw)], stop=True)
        else:
            self.parsed = Parsed(thinking=[self._prefix, raw], stop=True)

    def _broken(self, text: str, start: int, k: int) -> int:
        self._parts.append(text[start:k])
        raw = "".join(self._parts)
        self._parts = []
        if self._echo:
            self.parsed = Parsed(thinking=[raw])
            return k
        mended = parse_bare_json(raw, self._tools, committed=True)
        if mended is not None and mended.calls and not mended.problems:
            self.parsed = mended  # near-JSON (`repair.py`)
            return k
        reason = "invalid JSON (a string is not closed at the end of the line)"
        self.parsed = Parsed(problems=[problem(reason, raw)])
        return k

    def _reject(self, text: str, start: int, k: int) -> int:
        self._parts.append(text[start:k])
        self.rejected = True
        return k

    def _complete(self, text: str, start: int, k: int) -> int:
        self._parts.append(text[start:k])
        raw = "".join(self._parts)
        self._parts = [raw]
        if len(raw) > MAX_CALL_CHARS and not self._echo:
            # However the reply was chunked: as if read to this length.
            self._overlong()
            return len(text)
        if self._echo:
            if not is_json(raw):
                return self._reject(text, k, k)
            result: Parsed | None = Parsed(thinking=[raw])
        else:
            # Exactly the keys of a call, of no offered tool: a call attempt
            # (its JSON broken or not), never speech.
            attempt = self._committed or (
                self._keys == _CALL_SHAPE and bool(self._tools)
            )
            result = parse_bare_json(raw, self._tools, committed=attempt)
            if result is None and self._echo_possible and is_json(raw):
                # Call-like keys but no call ({"id": "4", "name": "bread"}).
                result = Parsed(thinking=[raw])
        if result is None:
            return self._reject(text, k, k)
        self._parts = []
        self.parsed = result
        return k
