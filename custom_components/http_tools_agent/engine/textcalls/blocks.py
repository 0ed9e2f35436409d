"""Scanner for a block that a closing marker ends: its body, read up to it."""

from __future__ import annotations

from .markers import LONGEST, Marker, Parser, end_pattern
from .markup import Parsed
from .names import ToolNames


class TaggedBlock:
    """The body of a ``<tool_call>``, ``<|tool_call>``, a gpt-oss header, ….

    The body is searched for its end only: a chunk of the body is scanned
    once, plus the few characters kept to find an end marker split across
    deltas. An end marker that is not the block's own (a new ``<function=``
    ends the previous one) opens the next block: ``reopen``.
    """

    __slots__ = (
        "_marker", "_parse", "_parts", "_tail", "_tools", "end", "parsed",
        "raw", "reopen",
    )  # fmt: skip

    def __init__(self, tools: ToolNames) -> None:
        """Scanner for blocks whose calls name ``tools``."""
        self._tools = tools
        self._marker: Marker | None = None
        self._parse: Parser | None = None
        self._parts: list[str] = []
        self._tail = ""
        self.parsed: Parsed | None = None
        self.reopen: str | None = None
        self.end = ""
        self.raw = ""

    def begin(self, marker: Marker, parse: Parser | None = None) -> None:
        """Start the block ``marker`` opened; ``parse`` reads its body (the
        marker's own parser by default)."""
        self._marker = marker
        self._parse = parse or marker.parse
        self._parts = []
        self._tail = ""
        self.parsed = None  # set when the block has ended
        self.reopen = None  # the end marker that opens the next block
        self.end = ""  # the end marker that ended it
        self.raw = ""  # its body and end marker, as written

    def feed(self, text: str, i: int) -> int:
        """Read ``text[i:]``; return where the block ended, else ``len(text)``."""
        assert self._marker is not None
        marker = self._marker
        tail = self._tail
        window = tail + text[i:] if tail or i else text
        m = end_pattern(marker.ends, marker.reopens).search(window)
        if m is None:
            self._parts.append(text[i:] if i else text)
            self._tail = window[-LONGEST:]
            return len(text)
        p = m.start()
        lt = len(tail)
        if p >= lt:
            self._parts.append(text[i : i + p - lt])
            body = "".join(self._parts)
        else:  # the end marker began in the kept tail
            body = "".join(self._parts)
            body = body[: len(body) - (lt - p)]
        end = m.group()
        self._parts = []
        self._tail = ""
        self.end = end
        self.raw = body + end
        self.parsed = self._read(body, closed=True)
        if end not in marker.ends:
            self.reopen = end
        return i + m.end() - lt

    def cut_off(self) -> Parsed:
        """The reply ended inside the block: what its body gave.

        A partial end marker at the end of the body is dropped; text after
        the complete calls comes back in ``rest``.
        """
        assert self._marker is not None
        body = "".join(self._parts)
        self._parts = []
        self._tail = ""
        for end in self._marker.ends:
            for k in range(min(len(end) - 1, len(body)), 0, -1):
                if body.endswith(end[:k]):
                    body = body[:-k]
                    break
        self.raw = body
        return self._read(body, closed=False)

    def _read(self, body: str, *, closed: bool) -> Parsed:
        assert self._parse is not None
        return self._parse(body, self._tools, closed=closed)
