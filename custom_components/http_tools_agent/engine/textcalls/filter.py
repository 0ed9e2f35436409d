"""The streaming filter: text deltas in, speakable text and calls out.

It reads plain text, tags and thinking itself, and hands tagged blocks,
fences and line-start JSON to their scanners (:mod:`.blocks`,
:mod:`.fences`, :mod:`.bare_json`). The rules are in ``docs/text-calls.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
import re
from typing import Any

from .bare_json import BareJson
from .blocks import TaggedBlock
from .fences import Fence, FenceEnd
from .markup import FUNC, HOLDING, PARAM, TAGS, TAIL, TOOL_CALL, Parsed
from .names import ToolNames
from .output import FilterOutput, TextCall

_TEXT, _TAG, _THINK, _BLOCK, _JSON, _FENCE = range(6)

_FULL_TAGS = frozenset(TAGS)
_TAG_PREFIXES = frozenset(t[:k] for t in TAGS for k in range(1, len(t) + 1))
_BLOCK_TAGS = frozenset({TOOL_CALL, FUNC, PARAM})
_DROP_PARTIAL = 4  # a trailing tag fragment this long is dropped at the end
_SPECIAL = re.compile(r"[<{\[`}]")

type _Item = tuple[str, int, bool]  # text, start index, skip detection at 0


# What may follow a line-start JSON object before the next one: a list
# written without its brackets (`{...}, {...}]`), calls or echoed results.
_OBJECT_SEPARATORS = frozenset(", ]}\r\n\t")


class TextCallFilter:
    """Streaming filter: text deltas in, speakable text and calls out.

    Feed every content delta of one reply to :meth:`feed`, then call
    :meth:`finish` once. The concatenated ``text`` of all outputs is what
    should be spoken; ``calls`` and ``problems`` do not depend on how the
    reply was chunked. After :meth:`finish` the filter is ready for a new
    reply.
    """

    def __init__(
        self,
        tools: Mapping[str, Mapping[str, Any]] | ToolNames,
        *,
        after_tool_results: bool = False,
    ) -> None:
        """Filter for a reply offered ``tools`` (name -> parameters schema,
        or their :class:`ToolNames`, built once for several replies).

        ``after_tool_results``: the reply answers tool results, so a
        line-start JSON object that is no call echoes them.
        """
        # Public: a caller resolving structured calls' names uses the same.
        self.names = tools if isinstance(tools, ToolNames) else ToolNames(tools)
        self._after_tool_results = after_tool_results
        self._block = TaggedBlock(self.names)
        self._fence = Fence()
        self._json = BareJson(self.names)
        self._text_out: list[str] = []
        self._think_out: list[str] = []
        self._held_out: list[str] = []
        self._calls: list[TextCall] = []
        self._problems: list[str] = []
        self._repaired = 0
        self._stack: list[_Item] = []
        self._reset()

    def _reset(self) -> None:
        self._stopped = False
        self._mode = _TEXT
        self._started = False  # a non-whitespace character was spoken
        self._line_blank = True  # only whitespace since the last line start
        self._tail = ""  # last characters spoken
        self._junction = False  # markup was removed since the last spoken text
        self._skip = False  # no fence or JSON at the start of this piece
        self._tag = ""  # what may be the start of a tag
        self._think_hold = ""  # what may be the start of the holding end tag
        self._think_end = ""  # the end tag of the holding block (</think>)
        self._reply_calls = 0  # calls found so far in this reply
        self._object_tail = False  # bare JSON just ended: "," or "]" may follow

    # --- public ---------------------------------------------------------

    def feed(self, delta: str) -> FilterOutput:
        """Process one streamed text delta."""
        if delta and not self._stopped:
            if (
                self._mode == _TEXT
                and not self._object_tail
                and _SPECIAL.search(delta) is None
            ):
                self._emit(delta)  # fast path: plain prose
            else:
                self._stack.append((delta, 0, False))
                self._run()
        return self._collect()

    def finish(self) -> FilterOutput:
        """End of the reply: flush held text, close unclosed markup."""
        while self._mode != _TEXT:
            self._finish_mode()
            self._run()
        out = self._collect()
        self._reset()
        return out

    # --- plumbing ---------------------------------------------------------

    def _collect(self) -> FilterOutput:
        out = FilterOutput(
            text="".join(self._text_out),
            thinking="".join(self._think_out),
            calls=self._calls,
            problems=self._problems,
            held="".join(self._held_out),
            repaired=self._repaired,
            stopped=self._stopped,
        )
        self._repaired = 0
        self._text_out = []
        self._think_out = []
        self._held_out = []
        self._calls = []
        self._problems = []
        return out

    def _run(self) -> None:
        """Process the pieces on the stack, each in the mode it meets."""
        stack = self._stack
        while stack and not self._stopped:
            text, i, skip = stack.pop()
            self._skip = skip
            n = len(text)
            while i < n and not self._stopped:
                mode = self._mode
                if mode == _TEXT:
                    i = self._step_text(text, i)
                elif mode == _TAG:
                    i = self._step_tag(text, i)
                elif mode == _THINK:
                    i = self._step_think(text, i)
                elif mode == _BLOCK:
                    i = self._step_block(text, i)
                elif mode == _JSON:
                    i = self._step_json(text, i)
                else:
                    i = self._step_fence(text, i)
                self._skip = False

    def _push_text(self, held: list[str]) -> None:
        """Process ``held`` next as text; no fence or JSON is sought at the
        start of a piece (it was tried there already)."""
        for piece in reversed(held):
            if piece:
                self._stack.append((piece, 0, True))

    def _refeed(self, text: str, rest: int, held: list[str]) -> int:
        """Re-process ``held`` as text, then the rest of ``text``."""
        self._mode = _TEXT
        self._stack.append((text, rest, False))
        self._push_text(held)
        return len(text)

    def _emit(self, seg: str) -> None:
        if not seg:
            return
        k = seg.rfind("\n")
        if k >= 0:
            tail = seg[k + 1 :]
            self._line_blank = not tail or tail.isspace()
        elif not seg.isspace():
            self._line_blank = False
        if not self._started:
            seg = seg.lstrip()
            if not seg:
                return
            self._started = True
        if self._junction:
            self._junction = False
            k = self._tail.rfind("<")
            if k >= 0 and self._tail[k:] in _TAG_PREFIXES:
                seg = " " + seg  # "<" + markup + "think>" must not make a tag
        self._tail = seg[-TAIL:] if len(seg) >= TAIL else (self._tail + seg)[-TAIL:]
        self._text_out.append(seg)

    def _removed(self) -> None:
        """Markup was removed: what follows starts a line, for JSON calls."""
        self._line_blank = True
        self._junction = True

    def _add(self, result: Parsed) -> None:
        self._reply_calls += len(result.calls)
        self._repaired += result.repaired
        if result.stop:
            self._stopped = True
            self._stack.clear()
        self._calls.extend(TextCall(name, args) for name, args in result.calls)
        self._problems.extend(result.problems)
        self._think_out.extend(result.thinking)
        self._held_out.extend(result.thinking)

    # --- text -------------------------------------------------------------

    def _blank_at(self, text: str, i: int, p: int) -> bool:
        """Only whitespace between the last line start and ``text[p]``."""
        if p > i and not text[p - 1].isspace():
            return False
        k = text.rfind("\n", i, p)
        if k >= 0:
            seg = text[k + 1 : p]
            return not seg or seg.isspace()
        seg = text[i:p]
        return self._line_blank and (not seg or seg.isspace())

    def _step_text(self, text: str, i: int) -> int:
        if self._object_tail:
            k = i
            while k < len(text) and text[k] in _OBJECT_SEPARATORS:
                k += 1
            # `,` and `]` are held; whitespace stays text (a line break
            # there starts a line, however the reply was chunked).
            seps = text[i:k]
            if held := "".join(c for c in seps if not c.isspace()):
                self._think_out.append(held)
                self._held_out.append(held)
                seps = "".join(c for c in seps if c.isspace())
            self._emit(seps)
            if k == len(text):
                return k
            self._object_tail = False
            i = k
        j = i
        while True:
            m = _SPECIAL.search(text, j)
            if m is None:
                self._emit(text[i:] if i else text)
                return len(text)
            p = m.start()
            c = text[p]
            if c == "<":
                self._emit(text[i:p])
                self._mode = _TAG
                self._tag = "<"
                return p + 1
            if (p == 0 and self._skip) or not self._blank_at(text, i, p):
                j = p + 1
                continue
            self._emit(text[i:p])
            if c == "}":
                # Closing braces at a line's start are the end of some JSON
                # (the 0.5B model wrote a reply of "}" lines): never speech.
                self._object_tail = True
                return p
            if c == "`":
                self._mode = _FENCE
                self._fence.open()
            else:
                self._begin_json(c, "", fence=False)
            return p + 1

    # --- tags -------------------------------------------------------------

    def _step_tag(self, text: str, i: int) -> int:
        tag = self._tag
        n = len(text)
        while i < n:
            cand = tag + text[i]
            if cand not in _TAG_PREFIXES:
                self._tag = ""
                if tag == TOOL_CALL[:-1]:  # "<tool_call" + " id=1>", "\n", "s>"
                    self._begin_block(TOOL_CALL)
                    return i
                self._mode = _TEXT
                self._emit(tag)
                return i
            tag = cand
            i += 1
            if cand in _FULL_TAGS:
                self._tag = ""
                self._open(cand)
                return i
        self._tag = tag
        return n

    def _open(self, tag: str) -> None:
        """A complete tag was read in text mode."""
        if tag in HOLDING:
            self._mode = _THINK
            self._think_hold = ""
            self._think_end = HOLDING[tag]
        elif tag in _BLOCK_TAGS:
            self._begin_block(tag)
        else:  # a closing tag with nothing open: dropped
            self._mode = _TEXT
            self._removed()

    # --- thinking ---------------------------------------------------------

    def _step_think(self, text: str, i: int) -> int:
        hold = self._think_hold
        end = self._think_end
        window = hold + text[i:] if hold or i else text
        p = window.find(end)
        if p >= 0:
            if p:
                self._think_out.append(window[:p])
            self._think_hold = ""
            self._mode = _TEXT
            self._removed()
            return i + p + len(end) - len(hold)
        keep = 0
        for k in range(min(len(end) - 1, len(window)), 0, -1):
            if window.endswith(end[:k]):
                keep = k
                break
        if len(window) > keep:
            self._think_out.append(window[: len(window) - keep])
        self._think_hold = window[len(window) - keep :] if keep else ""
        return len(text)

    # --- scanners ---------------------------------------------------------

    def _begin_block(self, tag: str) -> None:
        self._mode = _BLOCK
        self._block.begin(tag)

    def _step_block(self, text: str, i: int) -> int:
        block = self._block
        i = block.feed(text, i)
        if block.parsed is not None:
            self._end_markup(block.parsed)
            if block.reopen is not None:
                self._open(block.reopen)
        return i

    def _step_fence(self, text: str, i: int) -> int:
        fence = self._fence
        i = fence.feed(text, i)
        if fence.end is FenceEnd.TEXT:
            return self._refeed(text, i, [fence.held])
        if fence.end is FenceEnd.CALL:
            self._begin_json(text[i], fence.held, fence=True)
            return i + 1
        if fence.end is FenceEnd.CLOSED:
            self._mode = _TEXT
            self._removed()
        return i

    def _begin_json(self, c: str, prefix: str, *, fence: bool) -> None:
        self._mode = _JSON
        echo = bool(self._reply_calls or self._after_tool_results)
        self._json.begin(c, prefix, fence=fence, echo_possible=echo)

    def _step_json(self, text: str, i: int) -> int:
        scanner = self._json
        i = scanner.feed(text, i)
        if scanner.rejected:  # not a call: what was held is text
            return self._refeed(text, i, scanner.held())
        if scanner.parsed is not None:
            parsed = scanner.parsed
            self._end_markup(parsed)
            # Small models write several calls, or echo a list result, as
            # objects one after the other: `{...}, {...}]`; the separators
            # go with them and the next object starts as a line does.
            self._object_tail = not scanner.fence
            if scanner.fence:
                self._mode = _FENCE
                self._fence.after_call()
        return i

    def _end_markup(self, result: Parsed) -> None:
        """A piece of markup ended: back to text, with what it gave."""
        self._mode = _TEXT
        self._removed()
        self._add(result)

    # --- end of stream ----------------------------------------------------

    def _finish_mode(self) -> None:
        """Close the current mode; what must be read again goes on the stack."""
        mode = self._mode
        self._mode = _TEXT
        if mode == _TAG:
            tag, self._tag = self._tag, ""
            if len(tag) < _DROP_PARTIAL:
                self._emit(tag)
        elif mode == _THINK:
            if self._think_hold:
                self._think_out.append(self._think_hold)
            self._think_hold = ""
        elif mode == _BLOCK:
            result = self._block.cut_off()
            self._removed()
            self._add(result)
            if result.rest:
                self._stack.append((result.rest, 0, False))
        elif mode == _FENCE:
            self._push_text([self._fence.cut_off()])
        elif mode == _JSON:
            self._add(self._json.cut_off())
