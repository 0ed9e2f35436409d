"""Tool calls written as text, and a streaming filter that hides their markup.

Small local models often write their tool calls into the reply text instead
of structured ``tool_calls``: the server has no tool parser, or its parser
does not match the model, or the tag tokens are dropped on detokenizing. This
module finds such calls in a streamed reply, returns them as
:class:`TextCall`, and releases the rest as speakable text *as it arrives*:
text without ``<`` (and without a ``{``, ``[`` or fence at the start of a
line) is passed on at once, chunk for chunk. Standard library only.

Recognised (see :mod:`.textcall_formats` for the parsing details):

- ``<tool_call>`` ... ``</tool_call>`` (also ``<tool_call`` followed by
  anything, e.g. ``<tool_call id="1">``) holding Qwen3-Coder XML
  (``<function=NAME><parameter=KEY>VALUE</parameter></function>``) or Hermes
  JSON (``{"name": ..., "arguments": ...}``, several objects or a list);
- ``<function=NAME>`` ... ``</function>`` without the wrapper;
- bare JSON call objects (or a list of them), as llama.cpp servers send them
  when the model's ``<tool_call>`` tokens are dropped, optionally inside a
  code fence (```` ```json ````, ```` ``` ````).

Rules chosen:

- Thinking: everything between ``<think>`` and ``</think>`` goes to
  ``thinking``: never spoken, never run (calls inside are thinking). An
  unclosed ``<think>`` is thinking to the end. A ``</think>`` without an
  opening tag is dropped and text already released stays text (speech is
  never delayed on a guess); when the chat template opens the thinking block
  in the prompt, build the filter with ``starts_in_thinking=True``.
- Markup owns the stream until it closes: a ``<think>`` inside a
  ``<tool_call>`` is removed from the call (its text goes to ``thinking``), a
  ``<tool_call>`` inside ``<think>`` is thinking.
- Bare JSON is a call only at the start of a line (the start of the reply, or
  after a newline with only whitespace before it on that line, or right after
  removed markup), only when it is an object (or list of objects) whose top
  level keys are call keys (``name``, ``arguments``, ``parameters``,
  ``function``, ``type``, ``id``) and whose ``name`` resolves to an offered
  tool. Anything else is text, released as soon as it cannot be a call (first
  key not a call key, ...) or when it completes. One exception to "name must
  resolve": an object of exactly ``name`` + ``arguments`` (or
  ``parameters``) holding an object is a call attempt whatever the name (an
  invented tool name): it is held to its end and the caller answers
  ``Error: unknown tool``; with any other shape an unknown name is text.
  Mid-sentence JSON is always text.
- Echoes: once the reply has made a call (or when the filter is built with
  ``after_tool_results``: the reply answers tool results), a line-start JSON
  object whose first key is not a call key is an echo of a tool result (seen with
  llama-cpp-python + Qwen2.5: ``{"response": "Rome: +14°C"}`` after the
  call): held until it completes and moved to ``thinking``, never spoken.
  Invalid JSON there is released as text.
- Fences: a line-start ```` ``` ```` fence (info string empty, ``json``,
  ``tool_call`` or ``tool_code``) whose content is call JSON disappears with
  the calls; any other fence is text.
- Name resolution: exact, else unique case-insensitive, else the unique
  offered name ending with ``"__" + written``. Tagged markup with a name that
  resolves to nothing is still a call (name kept as written: the caller
  answers ``Error: unknown tool``); bare JSON with such a name is text.
- Broken markup is never spoken: it becomes a ``problems`` entry
  ``Error: could not parse tool call: <reason>: <markup>``. So is bare JSON
  that was committed to a call (its top-level ``name`` resolved) but does not
  decode, or that the stream cut off.
- A committed bare JSON call that the end of the reply cut off is repaired
  only when nothing but closing brackets is missing (it does not end inside
  a string or a partial value); otherwise it is a problem.
- End of stream: an unclosed ``<tool_call>``/``<function=`` is closed; its
  complete calls count and text after them is spoken. A trailing fragment of
  a tag (``<tool_c``) is dropped when it has 4 characters or more, else text.
- Whitespace: the whitespace before the first spoken character of the reply
  is dropped (so a reply made only of calls speaks nothing); everything else
  outside markup is released verbatim (never trimmed, so words never merge).
  One exception: when the spoken text before removed markup ends with the
  start of a tag (``<``, ``</th``) a space is put before the text after it,
  so that the two halves never join into markup.

Cost: each input character is examined a bounded number of times, except
that text inside a candidate bare JSON value is re-scanned once as text when
the value turns out not to be a call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import json
import re
from typing import Any

from .textcall_formats import (
    CALL_KEYS,
    FENCE_LANGS,
    BlockResult,
    ToolSet,
    close_truncated_json,
    parse_bare_json,
    parse_function,
    parse_orphan_parameter,
    parse_tool_call,
    problem,
)

__all__ = [
    "FilterOutput",
    "TextCall",
    "TextCallFilter",
    "ToolSet",
    "extract_text_calls",
]


@dataclass(frozen=True, slots=True)
class TextCall:
    """One tool call found in the text."""

    name: str  # resolved tool name (as written when it resolves to nothing)
    arguments: dict[str, Any]


@dataclass(slots=True)
class FilterOutput:
    """What one step of the filter released."""

    text: str = ""  # speakable text
    thinking: str = ""  # text from inside <think>...</think>
    calls: list[TextCall] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # each "Error: ..."

    def extend(self, other: FilterOutput) -> None:
        """Append ``other`` (a later step) to this output."""
        self.text += other.text
        self.thinking += other.thinking
        self.calls.extend(other.calls)
        self.problems.extend(other.problems)


_TEXT, _TAG, _THINK, _BLOCK, _JSON, _FENCE = range(6)
_F_OPEN, _F_BODY, _F_AFTER = range(3)

_TOOL_CALL = "<tool_call>"
_TOOL_CALL_END = "</tool_call>"
_FUNC = "<function="
_FUNC_END = "</function>"
_PARAM = "<parameter="
_PARAM_END = "</parameter>"
_THINK_OPEN = "<think>"
_THINK_END = "</think>"
_TAGS = (
    _TOOL_CALL,
    _TOOL_CALL_END,
    _FUNC,
    _FUNC_END,
    _PARAM,
    _PARAM_END,
    _THINK_OPEN,
    _THINK_END,
)
_FULL_TAGS = frozenset(_TAGS)
_TAG_PREFIXES = frozenset(t[:k] for t in _TAGS for k in range(1, len(t) + 1))
_TAIL = max(len(t) for t in _TAGS) - 1
_DROP_PARTIAL = 4  # a trailing tag fragment this long is dropped at the end

# Block kind -> terminators (tag, consumed). An unconsumed terminator closes the
# block and opens the next one.
_ENDS: dict[str, tuple[tuple[str, bool], ...]] = {
    "tool_call": ((_TOOL_CALL_END, True), (_TOOL_CALL, False)),
    "function": (
        (_FUNC_END, True),
        (_TOOL_CALL_END, True),
        (_FUNC, False),
        (_TOOL_CALL, False),
    ),
    "parameter": ((_PARAM_END, True), (_FUNC, False), (_TOOL_CALL, False)),
}
_END_RE = {
    kind: re.compile("|".join(re.escape(t) for t, _ in ends))
    for kind, ends in _ENDS.items()
}
_CONSUMED = {kind: dict(ends) for kind, ends in _ENDS.items()}

_SPECIAL = re.compile(r"[<{\[`]")
_STR_STOP = re.compile(r'["\\]')
_DEEP_STOP = re.compile(r'["{}\[\]]')
_MAX_KEY = 300
_MAX_LANG = 16
_LANG_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-+.")

type _Item = tuple[str, int, bool]  # text, start index, skip detection at 0


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
        tools: Mapping[str, Mapping[str, Any]],
        *,
        starts_in_thinking: bool = False,
        after_tool_results: bool = False,
    ) -> None:
        """Filter for a reply offered ``tools`` (name -> parameters schema).

        ``starts_in_thinking``: the chat template already opened ``<think>``
        in the prompt, so the reply starts inside the thinking block.
        ``after_tool_results``: the reply answers tool results, so a
        line-start JSON object that is no call echoes them (see "Echoes").
        """
        self._tools = ToolSet(tools)
        self._starts_in_thinking = starts_in_thinking
        self._after_tool_results = after_tool_results
        self._text_out: list[str] = []
        self._think_out: list[str] = []
        self._calls: list[TextCall] = []
        self._problems: list[str] = []
        self._stack: list[_Item] = []
        self._reset()

    def _reset(self) -> None:
        self._mode = _THINK if self._starts_in_thinking else _TEXT
        self._started = False  # a non-whitespace character was spoken
        self._line_blank = True  # only whitespace since the last line start
        self._tail = ""  # last characters spoken
        self._junction = False  # markup was removed since the last spoken text
        self._skip = False
        self._tag = ""
        self._think_hold = ""
        # block
        self._b_kind = ""
        self._b_parts: list[str] = []
        self._b_tail = ""
        # fence
        self._f_stage = _F_OPEN
        self._f_held = ""
        # bare JSON candidate
        self._j_prefix = ""
        self._j_fence = False
        self._j_parts: list[str] = []
        self._j_list = False
        self._j_objdepth = 1
        self._j_depth = 0
        self._j_in_str = False
        self._j_esc = False
        self._j_collect = False
        self._j_str: list[str] = []
        self._j_strlen = 0
        self._j_expect_key = True
        self._j_list_expect = False
        self._j_key: str | None = None
        self._j_committed = False
        self._j_echo = False
        self._reply_calls = 0  # calls found so far in this reply

    # --- public ---------------------------------------------------------

    def feed(self, delta: str) -> FilterOutput:
        """Process one streamed text delta."""
        if delta:
            if self._mode == _TEXT and _SPECIAL.search(delta) is None:
                self._emit(delta)  # fast path: plain prose
            else:
                self._run([(delta, False)])
        return self._collect()

    def finish(self) -> FilterOutput:
        """End of the reply: flush held text, close unclosed markup."""
        while self._mode != _TEXT:
            self._finish_mode()
            self._run([])
        out = self._collect()
        self._reset()
        return out

    @property
    def pending(self) -> int:
        """Characters held back because they may start markup (diagnostics).

        Text inside a recognised ``<tool_call>``/``<function=``/``<think>``
        block is not counted: it is markup, not delayed speech.
        """
        if self._mode == _TAG:
            return len(self._tag)
        if self._mode == _FENCE:
            return len(self._f_held)
        if self._mode == _JSON:
            return len(self._j_prefix) + sum(map(len, self._j_parts))
        return 0

    # --- plumbing ---------------------------------------------------------

    def _collect(self) -> FilterOutput:
        out = FilterOutput(
            text="".join(self._text_out),
            thinking="".join(self._think_out),
            calls=self._calls,
            problems=self._problems,
        )
        self._text_out = []
        self._think_out = []
        self._calls = []
        self._problems = []
        return out

    def _run(self, items: list[tuple[str, bool]]) -> None:
        stack = self._stack
        for text, skip in reversed(items):
            stack.append((text, 0, skip))
        while stack:
            text, i, skip = stack.pop()
            self._skip = skip
            n = len(text)
            while i < n:
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

    def _refeed(self, text: str, rest: int, held: list[str]) -> int:
        """Re-process ``held`` as text (no detection at its start), then the rest."""
        self._mode = _TEXT
        self._stack.append((text, rest, False))
        for piece in reversed(held):
            if piece:
                self._stack.append((piece, 0, True))
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
        self._tail = seg[-_TAIL:] if len(seg) >= _TAIL else (self._tail + seg)[-_TAIL:]
        self._text_out.append(seg)

    def _removed(self) -> None:
        """Markup was removed: what follows starts a line, for JSON calls."""
        self._line_blank = True
        self._junction = True

    def _add(self, result: BlockResult) -> None:
        self._reply_calls += len(result.calls)
        self._calls.extend(TextCall(name, args) for name, args in result.calls)
        self._problems.extend(result.problems)
        self._think_out.extend(result.thinking)

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
            if c == "`":
                self._mode = _FENCE
                self._f_stage = _F_OPEN
                self._f_held = "`"
            else:
                self._json_begin(c, "", fence=False)
            return p + 1

    # --- tags -------------------------------------------------------------

    def _step_tag(self, text: str, i: int) -> int:
        tag = self._tag
        n = len(text)
        while i < n:
            cand = tag + text[i]
            if cand not in _TAG_PREFIXES:
                self._tag = ""
                if tag == _TOOL_CALL[:-1]:  # "<tool_call" + " id=1>", "\n", "s>"
                    self._block_begin("tool_call")
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
        if tag == _THINK_OPEN:
            self._mode = _THINK
            self._think_hold = ""
        elif tag == _TOOL_CALL:
            self._block_begin("tool_call")
        elif tag == _FUNC:
            self._block_begin("function")
        elif tag == _PARAM:
            self._block_begin("parameter")
        else:  # a closing tag with nothing open: dropped
            self._mode = _TEXT
            self._removed()

    # --- thinking ---------------------------------------------------------

    def _step_think(self, text: str, i: int) -> int:
        hold = self._think_hold
        window = hold + text[i:] if hold or i else text
        p = window.find(_THINK_END)
        if p >= 0:
            if p:
                self._think_out.append(window[:p])
            self._think_hold = ""
            self._mode = _TEXT
            self._removed()
            return i + p + len(_THINK_END) - len(hold)
        keep = 0
        for k in range(min(len(_THINK_END) - 1, len(window)), 0, -1):
            if window.endswith(_THINK_END[:k]):
                keep = k
                break
        if len(window) > keep:
            self._think_out.append(window[: len(window) - keep])
        self._think_hold = window[len(window) - keep :] if keep else ""
        return len(text)

    # --- tagged blocks ----------------------------------------------------

    def _block_begin(self, kind: str) -> None:
        self._mode = _BLOCK
        self._b_kind = kind
        self._b_parts = []
        self._b_tail = ""

    def _step_block(self, text: str, i: int) -> int:
        tail = self._b_tail
        window = tail + text[i:] if tail or i else text
        m = _END_RE[self._b_kind].search(window)
        if m is None:
            self._b_parts.append(text[i:] if i else text)
            self._b_tail = window[-_TAIL:]
            return len(text)
        p = m.start()
        lt = len(tail)
        if p >= lt:
            self._b_parts.append(text[i : i + p - lt])
            body = "".join(self._b_parts)
        else:
            body = "".join(self._b_parts)
            body = body[: len(body) - (lt - p)]
        term = m.group()
        kind = self._b_kind
        self._close_block(kind, body, closed=True)
        if not _CONSUMED[kind][term]:
            self._open(term)
        return i + m.end() - lt

    def _close_block(self, kind: str, body: str, *, closed: bool) -> None:
        self._b_parts = []
        self._b_tail = ""
        self._mode = _TEXT
        self._removed()
        if kind == "tool_call":
            result = parse_tool_call(body, self._tools, closed=closed)
        elif kind == "function":
            result = parse_function(body, self._tools, closed=closed)
        else:
            result = parse_orphan_parameter(body)
        self._add(result)
        if result.rest:  # only for an unclosed block, at the end of the stream
            self._stack.append((result.rest, 0, False))

    # --- fences -----------------------------------------------------------

    def _step_fence(self, text: str, i: int) -> int:
        n = len(text)
        held = self._f_held
        while i < n:
            c = text[i]
            stage = self._f_stage
            if stage == _F_OPEN:
                if len(held) < 3:
                    if c != "`":
                        return self._fence_reject(text, i, held)
                elif c == "\n":
                    if held[3:].strip().lower() not in FENCE_LANGS:
                        return self._fence_reject(text, i, held)
                    self._f_stage = _F_BODY
                elif c in " \t\r":
                    pass
                else:
                    lang = held[3:].strip().lower() + c.lower()
                    if (
                        c.lower() not in _LANG_CHARS
                        or held[3:].rstrip() != held[3:]
                        or len(lang) > _MAX_LANG
                        or not any(x.startswith(lang) for x in FENCE_LANGS)
                    ):
                        return self._fence_reject(text, i, held)
                held += c
                i += 1
            elif stage == _F_BODY:
                if c.isspace():
                    held += c
                    i += 1
                elif c in "{[":
                    self._f_held = ""
                    self._json_begin(c, held, fence=True)
                    return i + 1
                else:
                    return self._fence_reject(text, i, held)
            # below: after a call inside the fence
            elif c == "`":
                held += c
                i += 1
                if held.count("`") == 3:
                    self._f_held = ""
                    self._mode = _TEXT
                    self._removed()
                    return i
            elif "`" in held or not (c.isspace() or c in "{["):
                return self._fence_reject(text, i, held)
            elif c.isspace():
                held += c
                i += 1
            else:
                self._f_held = ""
                self._json_begin(c, held, fence=True)
                return i + 1
        self._f_held = held
        return n

    def _fence_reject(self, text: str, i: int, held: str) -> int:
        self._f_held = ""
        return self._refeed(text, i, [held])

    # --- bare JSON --------------------------------------------------------

    def _json_begin(self, c: str, prefix: str, *, fence: bool) -> None:
        self._mode = _JSON
        self._j_prefix = prefix
        self._j_fence = fence
        self._j_parts = [c]
        self._j_list = c == "["
        self._j_objdepth = 2 if self._j_list else 1
        self._j_depth = 1
        self._j_in_str = False
        self._j_esc = False
        self._j_collect = False
        self._j_str = []
        self._j_strlen = 0
        self._j_expect_key = not self._j_list
        self._j_list_expect = self._j_list
        self._j_key = None
        self._j_committed = False
        self._j_echo = False

    def _echo_possible(self) -> bool:
        """A line-start JSON object here would echo a tool result."""
        return bool(self._reply_calls or self._after_tool_results) and not self._j_list

    def _json_reject(self, text: str, start: int, k: int) -> int:
        """Not a call: everything held is text; re-scan it as such."""
        self._j_parts.append(text[start:k])
        held = [self._j_prefix, "".join(self._j_parts)]
        self._j_parts = []
        return self._refeed(text, k, held)

    def _json_string_done(self) -> bool:
        """A string at the call object's level ended; False: not a call."""
        if not self._j_collect:
            return True
        self._j_collect = False
        try:
            value = json.loads("".join(self._j_str), strict=False)
        except ValueError, RecursionError:
            return self._j_committed
        if self._j_expect_key:
            self._j_key = value
            if self._j_committed or value in CALL_KEYS:
                return True
            if self._echo_possible():
                # After a call, small models echo the tool result as JSON on
                # its own line ({"response": ...}): hold it, it is no speech.
                self._j_echo = self._j_committed = True
                return True
            return False
        if self._j_key == "name" and not self._j_committed:
            if self._tools.resolve(value) is None:
                # Held to the end: exactly {"name", "arguments"} is still a
                # call attempt (an invented name), anything else is text.
                return bool(self._tools) and isinstance(value, str)
            self._j_committed = True
        return True

    def _step_json(self, text: str, i: int) -> int:
        n = len(text)
        j = i
        while j < n:
            if self._j_in_str:
                if self._j_esc:
                    self._j_esc = False
                    if self._j_collect:
                        self._j_str.append(text[j])
                    j += 1
                    continue
                m = _STR_STOP.search(text, j)
                stop = n if m is None else m.start()
                if self._j_collect and stop > j:
                    self._j_str.append(text[j:stop])
                    self._j_strlen += stop - j
                    if self._j_strlen > _MAX_KEY:
                        if not self._j_committed and (
                            self._j_expect_key or self._j_key == "name"
                        ):
                            return self._json_reject(text, i, stop)
                        self._j_collect = False
                if m is None:
                    j = n
                    break
                if text[stop] == "\\":
                    self._j_esc = True
                    if self._j_collect:
                        self._j_str.append("\\")
                    j = stop + 1
                    continue
                self._j_in_str = False
                j = stop + 1
                if self._j_collect:
                    self._j_str.append('"')
                    if not self._json_string_done():
                        return self._json_reject(text, i, j)
                continue
            depth = self._j_depth
            objdepth = self._j_objdepth
            if depth > objdepth:
                m = _DEEP_STOP.search(text, j)
                if m is None:
                    j = n
                    break
                j = m.start()
                c = text[j]
                j += 1
                if c == '"':
                    self._j_in_str = True
                    self._j_collect = False
                elif c in "{[":
                    self._j_depth = depth + 1
                else:
                    self._j_depth = depth - 1
                continue
            c = text[j]
            if self._j_list and depth == 1:
                if c == "{" and self._j_list_expect:
                    self._j_list_expect = False
                    self._j_depth = 2
                    self._j_expect_key = True
                    self._j_key = None
                elif c == "," and not self._j_list_expect:
                    self._j_list_expect = True
                elif c == "]":
                    return self._json_complete(text, i, j + 1)
                elif not c.isspace() and not self._j_committed:
                    return self._json_reject(text, i, j)
                j += 1
                continue
            # at the call object's own level
            j += 1
            if c == '"':
                self._j_in_str = True
                self._j_collect = True
                self._j_str = ['"']
                self._j_strlen = 0
            elif c in "{[":
                if self._j_expect_key and not self._j_committed:
                    return self._json_reject(text, i, j - 1)
                self._j_depth = depth + 1
            elif c in "}]":
                self._j_depth = depth - 1
                if depth == 1:
                    return self._json_complete(text, i, j)
            elif c == ":":
                self._j_expect_key = False
            elif c == ",":
                self._j_expect_key = True
            elif self._j_expect_key and not c.isspace() and not self._j_committed:
                return self._json_reject(text, i, j - 1)
        self._j_parts.append(text[i:j] if i or j < n else text)
        return n

    def _json_complete(self, text: str, start: int, k: int) -> int:
        self._j_parts.append(text[start:k])
        raw = "".join(self._j_parts)
        if self._j_echo:
            if not _is_json(raw):
                self._j_parts = [raw]
                return self._json_reject(text, k, k)
            result: BlockResult | None = BlockResult(thinking=[raw])
        else:
            result = parse_bare_json(raw, self._tools, committed=self._j_committed)
            if result is None and self._echo_possible() and _is_json(raw):
                # Call-like keys but no call ({"id": "4", "name": "bread"}).
                result = BlockResult(thinking=[raw])
        if result is None:
            self._j_parts = [raw]
            return self._json_reject(text, k, k)
        self._j_parts = []
        self._add(result)
        self._removed()
        if self._j_fence:
            self._mode = _FENCE
            self._f_stage = _F_AFTER
            self._f_held = ""
        else:
            self._mode = _TEXT
        return k

    # --- end of stream ----------------------------------------------------

    def _finish_mode(self) -> None:
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
            body = "".join(self._b_parts)
            for term, consumed in _ENDS[self._b_kind]:
                if consumed:
                    for k in range(min(len(term) - 1, len(body)), 0, -1):
                        if body.endswith(term[:k]):
                            body = body[:-k]
                            break
            self._close_block(self._b_kind, body, closed=False)
        elif mode == _FENCE:
            held, self._f_held = self._f_held, ""
            if self._f_stage != _F_AFTER:
                self._run([(held, True)])
        elif mode == _JSON:
            raw = "".join(self._j_parts)
            self._j_parts = []
            if self._j_echo:
                # An echo cut off by the end of the reply: still no speech.
                self._think_out.extend((self._j_prefix, raw))
            elif self._j_committed:
                repaired = close_truncated_json(raw)
                result = (
                    parse_bare_json(repaired, self._tools, committed=True)
                    if repaired is not None
                    else None
                )
                if result is not None and result.calls and not result.problems:
                    # Only the closing brackets were cut off.
                    self._add(result)
                else:
                    reason = "the reply ended before the JSON call was complete"
                    self._problems.append(problem(reason, raw))
            else:
                self._run([(self._j_prefix, True), (raw, True)])


def _is_json(raw: str) -> bool:
    try:
        json.loads(raw)
    except ValueError, RecursionError:
        return False
    return True


def extract_text_calls(
    text: str,
    tools: Mapping[str, Mapping[str, Any]],
    *,
    starts_in_thinking: bool = False,
) -> FilterOutput:
    """Calls, speakable text, thinking and problems of a whole reply.

    Same result as feeding ``text`` in one piece to a :class:`TextCallFilter`
    and calling :meth:`TextCallFilter.finish`.
    """
    flt = TextCallFilter(tools, starts_in_thinking=starts_in_thinking)
    out = flt.feed(text)
    out.extend(flt.finish())
    return out
