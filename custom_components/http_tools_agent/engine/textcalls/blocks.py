"""Scanner for a tagged block: its body, read up to the tag that ends it."""

from __future__ import annotations

import re

from .hermes import parse_tool_call
from .markup import (
    FUNC,
    FUNC_END,
    PARAM,
    PARAM_END,
    TAIL,
    TOOL_CALL,
    TOOL_CALL_END,
    Parsed,
)
from .names import ToolNames
from .qwen_xml import parse_function, parse_orphan_parameter

# Opening tag -> the tags that end its block, and whether they belong to it.
# A tag that does not (a new <function= ends the previous one) opens the next
# block.
_ENDS: dict[str, tuple[tuple[str, bool], ...]] = {
    TOOL_CALL: ((TOOL_CALL_END, True), (TOOL_CALL, False)),
    FUNC: ((FUNC_END, True), (TOOL_CALL_END, True), (FUNC, False), (TOOL_CALL, False)),
    PARAM: ((PARAM_END, True), (FUNC, False), (TOOL_CALL, False)),
}
_END_RE = {
    tag: re.compile("|".join(re.escape(t) for t, _ in ends))
    for tag, ends in _ENDS.items()
}
_CONSUMED = {tag: dict(ends) for tag, ends in _ENDS.items()}


class TaggedBlock:
    """The body of a ``<tool_call>``, ``<function=`` or stray ``<parameter=``.

    The body is searched for its end only: a chunk of the body is scanned
    once, plus the few characters kept to find an end tag split across deltas.
    """

    __slots__ = ("_opening", "_parts", "_tail", "_tools", "parsed", "reopen")

    def __init__(self, tools: ToolNames) -> None:
        """Scanner for blocks whose calls name ``tools``."""
        self._tools = tools
        self.begin(TOOL_CALL)

    def begin(self, opening: str) -> None:
        """Start the block that the tag ``opening`` opened."""
        self._opening = opening
        self._parts: list[str] = []
        self._tail = ""
        self.parsed: Parsed | None = None  # set when the block has ended
        self.reopen: str | None = None  # the end tag that opens the next block

    def feed(self, text: str, i: int) -> int:
        """Read ``text[i:]``; return where the block ended, else ``len(text)``."""
        tail = self._tail
        window = tail + text[i:] if tail or i else text
        m = _END_RE[self._opening].search(window)
        if m is None:
            self._parts.append(text[i:] if i else text)
            self._tail = window[-TAIL:]
            return len(text)
        p = m.start()
        lt = len(tail)
        if p >= lt:
            self._parts.append(text[i : i + p - lt])
            body = "".join(self._parts)
        else:  # the end tag began in the kept tail
            body = "".join(self._parts)
            body = body[: len(body) - (lt - p)]
        end = m.group()
        self._parts = []
        self._tail = ""
        self.parsed = self._parse(body, closed=True)
        if not _CONSUMED[self._opening][end]:
            self.reopen = end
        return i + m.end() - lt

    def cut_off(self) -> Parsed:
        """The reply ended inside the block: what its body gave.

        A partial end tag at the end of the body is dropped; text after the
        complete calls comes back in ``rest``.
        """
        body = "".join(self._parts)
        self._parts = []
        self._tail = ""
        for end, consumed in _ENDS[self._opening]:
            if consumed:
                for k in range(min(len(end) - 1, len(body)), 0, -1):
                    if body.endswith(end[:k]):
                        body = body[:-k]
                        break
        return self._parse(body, closed=False)

    def _parse(self, body: str, *, closed: bool) -> Parsed:
        if self._opening == TOOL_CALL:
            return parse_tool_call(body, self._tools, closed=closed)
        if self._opening == FUNC:
            return parse_function(body, self._tools, closed=closed)
        return parse_orphan_parameter(body)
