"""Scanner for a call that no closing marker ends: its value does.

After ``[TOOL_CALLS]``, ``<|tool_call|>``, ``<|python_tag|>`` or
``functools``, and for calls whose markers the server dropped
(``get_weather{"city": "Rome"}``, ``call:get_weather{…}``,
``[get_weather(city="Rome")]``), the call ends where its value's brackets
close. Brackets inside strings (``"…"`` or ``'…'``) do not count. The text is
read once; the family's parser reads the whole call when it has ended.
"""

from __future__ import annotations

import json
import re

from .bare_json import MAX_CALL_CHARS
from .call_lists import parse_call_list, parse_mistral
from .gemma import parse_stripped_gemma
from .markers import Value
from .markup import Parsed, problem
from .names import ToolNames
from .pythonic import parse_pythonic

_OPEN = frozenset("{[(")
_CLOSE = frozenset("}])")
_NAME_CHARS = re.compile(r"[A-Za-z0-9_.\-]")
_MISTRAL_NAME = re.compile(r"\s*[^\s\[\]{}]*\s*")
_MISTRAL_ID = re.compile(r"\s*[^\s\[{]*\s*")
# Mistral's markers between a name and its arguments.
_MISTRAL_MARKERS = ("[ARGS]", "[CALL_ID]")


def _mistral_head(head: str) -> bool:
    """Whether ``head`` may still be ``NAME[CALL_ID]ID[ARGS]`` (in part)."""
    m = _MISTRAL_NAME.match(head)
    pos = m.end() if m else 0
    while pos < len(head):
        rest = head[pos:]
        for mark in _MISTRAL_MARKERS:
            if rest.startswith(mark):
                pos += len(mark)
                found = _MISTRAL_ID.match(head, pos)
                pos = found.end() if found else pos
                break
            if mark.startswith(rest):
                return True
        else:
            return False
    return True


class ValueBlock:
    """One call ended by its value. After :meth:`feed` returns, ``parsed``
    is set when it ended, ``rejected`` when it is words after all (only
    calls without markers can be: :meth:`held` gives the text back)."""

    __slots__ = (
        "_after", "_depth", "_esc", "_head", "_lead", "_length", "_parts",
        "_quote", "_started", "_tools", "kind", "parsed", "raw", "rejected",
    )  # fmt: skip

    def __init__(self, tools: ToolNames) -> None:
        """Scanner for calls that name ``tools``."""
        self._tools = tools
        self.begin(Value.LIST, "")

    def begin(self, kind: Value, prefix: str, *, lead: str = "") -> None:
        """Read a call of ``kind``; ``prefix`` (the name written before the
        value, or ``[`` of a line-start list) is part of it; ``lead`` (a
        fence's opening) is given back with it if it is words after all."""
        self.kind = kind
        self._lead = lead
        self._after = False  # Llama's ';' may join another call
        self._head = ""  # what came before the value (Mistral's name, markers)
        self.raw = ""
        self._parts = [prefix] if prefix else []
        self._length = len(prefix)
        self._depth = 1 if kind is Value.PYTHONIC else 0
        self._started = kind is Value.PYTHONIC
        self._quote = ""
        self._esc = False
        self.parsed: Parsed | None = None
        self.rejected = False

    @property
    def text(self) -> str:
        """What was read so far."""
        return "".join(self._parts)

    def held(self) -> list[str]:
        """The text read, given back as words."""
        held, self._parts = [self._lead, "".join(self._parts)], []
        return held

    def feed(self, text: str, i: int) -> int:
        """Read ``text[i:]``; return where the call ended (or was rejected)."""
        n = len(text)
        start = i
        while i < n:
            if self._length + i - start >= MAX_CALL_CHARS:
                return self._overlong(text, start, i)
            c = text[i]
            i += 1
            if self._after:
                if c == ";":
                    self._after = False
                    self._started = False
                    self._head = ""
                elif not c.isspace():
                    return self._done(text, start, i - 1)
                continue
            if self._quote:
                if self._esc:
                    self._esc = False
                elif c == "\\":
                    self._esc = True
                elif c == self._quote:
                    self._quote = ""
                continue
            if not self._started:
                if c in "{[(" and self._may_open(c):
                    self._started = True
                    self._depth = 1
                else:
                    self._head += c
                    if not self._head_ok(self._head):
                        return self._reject(text, start, i - 1)
                continue
            if (
                self.kind is Value.PYTHONIC
                and self._depth == 1
                and c not in "[])"
                and not self._named(text[start:i])
            ):
                return self._reject(text, start, i - 1)
            if c in "\"'":
                self._quote = c
            elif c in _OPEN:
                self._depth += 1
            elif c in _CLOSE:
                self._depth -= 1
                if self._depth == 0:
                    if self.kind is Value.SEQUENCE:
                        self._after = True
                        continue
                    return self._done(text, start, i)
        self._parts.append(text[start:n])
        self._length += n - start
        return n

    def _overlong(self, text: str, start: int, i: int) -> int:
        """Longer than any call: words when no marker made it a call, else
        broken (a string left open), and the reply is read no further."""
        self._parts.append(text[start:i])
        if self.kind is Value.PYTHONIC:
            self.rejected = True
            return i
        raw = self.text
        self._parts = []
        reason = f"the call is longer than {MAX_CALL_CHARS} characters"
        self.parsed = Parsed(problems=[problem(reason, raw)], stop=True)
        return i

    def cut_off(self) -> Parsed | None:
        """The reply ended inside the call: what it gave; None: words."""
        raw = self.text
        if self._after:
            self._parts = []
            self.raw = raw
            found = self._parse(raw, closed=True)
            return found if found is not None else Parsed()
        if self.kind in (Value.PYTHONIC, Value.STRIPPED) or (
            self.kind is Value.CODE and not self._started
        ):
            return None
        self._parts = []
        found = self._parse(raw, closed=False)
        if found is not None and found.calls:
            return found
        reason = "the reply ended before the call was complete"
        return Parsed(problems=[problem(reason, raw)])

    # --- the head: what comes before the value ----------------------------

    def _may_open(self, c: str) -> bool:
        """Whether ``c`` opens the value (for Mistral, ``[`` after a name
        opens ``[ARGS]`` or ``[CALL_ID]``, not the value)."""
        if self.kind is Value.MISTRAL and c == "[":
            return not self._head.strip()
        return True

    def _head_ok(self, so_far: str) -> bool:
        """Whether what precedes the value may still be a call's head."""
        if self.kind is Value.MISTRAL:
            return _mistral_head(so_far)
        if self.kind in (Value.SEQUENCE, Value.CODE):  # brave_search.call(…)
            return all(ch.isspace() or _NAME_CHARS.match(ch) for ch in so_far)
        return so_far.isspace()

    def _named(self, so_far: str) -> bool:
        """A line-start list is a call while it reads ``[NAME(`` with NAME
        an offered tool (a link, ``[1]`` or ``[see above]`` is words)."""
        inner = (self.text + so_far)[1:].lstrip()
        paren = inner.find("(")
        if paren == -1:
            return bool(_NAME_CHARS.fullmatch(inner[-1:])) and all(
                _NAME_CHARS.match(ch) for ch in inner
            )
        return self._tools.resolve(inner[:paren].strip()) is not None

    # --- the end ----------------------------------------------------------

    def _done(self, text: str, start: int, end: int) -> int:
        self._parts.append(text[start:end])
        raw = self.raw = self.text
        found = self._parse(raw, closed=True)
        if found is None:
            self.rejected = True
            return end
        self._parts = []
        self.parsed = found
        return end

    def _parse(self, raw: str, *, closed: bool) -> Parsed | None:
        tools = self._tools
        kind = self.kind
        if kind is Value.MISTRAL:
            return parse_mistral(raw, tools, closed=closed)
        if kind in (Value.LIST, Value.SEQUENCE):
            return parse_call_list(raw, tools, closed=closed)
        if kind is Value.PYTHONIC:
            return parse_pythonic(raw, tools, tagged=False)
        if kind is Value.CODE:
            return parse_pythonic(raw, tools, tagged=True)
        return _stripped(raw, tools)

    def _reject(self, text: str, start: int, k: int) -> int:
        self._parts.append(text[start:k])
        if self.kind in (Value.PYTHONIC, Value.STRIPPED, Value.CODE):
            self.rejected = True
            return k
        self.raw = self.text
        if self.kind is Value.MISTRAL and "[" in self._head:
            # NAME[ARGS] and no JSON object after it: a broken call.
            reason = "expected NAME[ARGS]{…}"
            self.parsed = Parsed(problems=[problem(reason, "[TOOL_CALLS]" + self.raw)])
            return k
        # A marker with no call after it: the marker goes, the rest is words.
        self.parsed = Parsed(rest=self.raw)
        return k


def _stripped(raw: str, tools: ToolNames) -> Parsed | None:
    """A call whose markers the server dropped: ``NAME{json}``,
    ``NAME(key=value)`` or ``call:NAME{key:value}``, of an offered tool
    written exactly; anything else is words (None)."""
    brace = min((p for p in (raw.find("{"), raw.find("(")) if p != -1), default=-1)
    written = raw[:brace].strip()
    if written.startswith("call:"):
        return parse_stripped_gemma(raw, tools)
    name = tools.exact(written)
    if name is None:
        return None
    if raw[brace] == "(":
        return parse_pythonic(raw, tools, tagged=False)
    try:
        args = json.loads(raw[brace:], strict=False)
    except ValueError, RecursionError:
        return parse_stripped_gemma(raw, tools)
    return Parsed(calls=[(name, args)]) if isinstance(args, dict) else None
