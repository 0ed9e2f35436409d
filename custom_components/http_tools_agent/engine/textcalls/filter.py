"""The streaming filter: text deltas in, speakable text and calls out.

It reads plain text, markers and thinking itself (the markers of every
family are one table, :mod:`.markers`), and hands blocks, values, fences
and line-start JSON to their scanners (:mod:`.blocks`, :mod:`.values`,
:mod:`.fences`, :mod:`.bare_json`). The rules are in ``docs/text-calls.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
import json
import re
from typing import Any

from .bare_json import BareJson
from .blocks import TaggedBlock
from .call_lists import harmony_call
from .fences import Fence, FenceEnd
from .markers import (
    HARMONY_ANALYSIS,
    HARMONY_CALL_ENDS,
    LONGEST,
    MARKERS,
    THOUGHT_LINE,
    WORD_OPENER,
    Marker,
    Role,
    Value,
    end_pattern,
    harmony_channel,
    in_think,
    is_listed_prefix,
    marker,
    may_be_bracket_marker,
    may_be_marker,
    opened,
)
from .markup import THINK, THINK_END, TOOL_CALL, Parsed, RawCall
from .names import ToolNames
from .output import FilterOutput, TextCall
from .values import ValueBlock

_TEXT, _TAG, _THINK, _BLOCK, _JSON, _FENCE, _VALUE, _WORD = range(8)

_DROP_PARTIAL = 4  # a trailing marker fragment this long is dropped at the end
_SPECIAL = re.compile(r"[<{\[`}]")
_WORD_START = re.compile(r"[A-Za-z_]")
_TOOL_CALL_ATTRS = TOOL_CALL[:-1]  # "<tool_call" + " id=1>", "\n", "s>"

type _Item = tuple[str, int, bool]  # text, start index, skip detection at 0


# What may follow a line-start JSON object before the next one: a list
# written without its brackets (`{...}, {...}]`), calls or echoed results.
_OBJECT_SEPARATORS = frozenset(", ]}\r\n\t")


def _closed_by_think(found: Marker | None) -> Marker:
    """A block opened inside thinking also ends where the thinking does."""
    assert found is not None
    return Marker(found.role, (*found.ends, THINK_END), found.reopens, found.parse)


def _key(call: RawCall) -> str:
    return call[0] + json.dumps(call[1], sort_keys=True, default=str)


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
        think_open: bool = False,
    ) -> None:
        """Filter for a reply offered ``tools`` (name -> parameters schema,
        or their :class:`ToolNames`, built once for several replies).

        ``after_tool_results``: the reply answers tool results, so a
        line-start JSON object that is no call echoes them.
        ``think_open``: the prompt opened ``<think>`` (Qwen3 thinking
        releases, DeepSeek-R1 distills, QwQ): the reply's words are held as
        possible thinking until a ``</think>`` says they were, or the reply
        ends without one (then they are the answer).
        """
        # Public: a caller resolving structured calls' names uses the same.
        self.names = tools if isinstance(tools, ToolNames) else ToolNames(tools)
        self._after_tool_results = after_tool_results
        self.think_open = think_open
        self._block = TaggedBlock(self.names)
        self._fence = Fence()
        self._json = BareJson(self.names)
        self._value = ValueBlock(self.names)
        self._text_out: list[str] = []
        self._think_out: list[str] = []
        self._held_out: list[str] = []
        self._calls: list[TextCall] = []
        self._problems: list[str] = []
        self._repaired = 0
        self._unopened_think = False
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
        self._tag = ""  # what may be the start of a marker
        self._tag_line = False  # ... at a line's start
        self._word = ""  # a reply's first word that may open a call
        self._think: Marker = HARMONY_ANALYSIS  # the thinking being read
        self._think_opener = ""
        self._think_hold = ""  # what may be the start of its end marker
        self._guess = False  # the words are held as possible thinking
        self._guessed: list[str] = []
        # Calls read inside thinking not closed yet (with their markup), and
        # the thinking after them: a </think> makes them thought, the reply's
        # end makes them calls.
        self._think_calls: list[tuple[str, Parsed]] = []
        self._think_after: list[str] = []
        self._block_in_think = ""  # the opener of a block read inside thinking
        self._found: set[str] = set()  # this reply's calls, for echoes
        self._tentative: list[tuple[str, Parsed]] = []  # calls, markers dropped
        self._reply_calls = 0  # calls found so far in this reply
        self._object_tail = False  # bare JSON just ended: "," or "]" may follow
        if self.think_open:
            self._enter_think(THINK, MARKERS[THINK], guess=True)

    # --- public ---------------------------------------------------------

    def feed(self, delta: str) -> FilterOutput:
        """Process one streamed text delta."""
        if delta and not self._stopped:
            if (
                self._mode == _TEXT
                and self._started
                and not self._object_tail
                and not self._tentative
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
        if self._tentative:
            self._confirm()
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
            unopened_think=self._unopened_think,
        )
        self._repaired = 0
        self._unopened_think = False
        self._text_out = []
        self._think_out = []
        self._held_out = []
        self._calls = []
        self._problems = []
        return out

    def _run(self) -> None:
        """Process the pieces on the stack, each in the mode it meets."""
        stack = self._stack
        steps = (
            self._step_text,
            self._step_tag,
            self._step_think,
            self._step_block,
            self._step_json,
            self._step_fence,
            self._step_value,
            self._step_word,
        )
        while stack and not self._stopped:
            text, i, skip = stack.pop()
            self._skip = skip
            n = len(text)
            while i < n and not self._stopped:
                i = steps[self._mode](text, i)
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

    def _then(self, text: str, rest: int, first: str) -> int:
        """Process ``first`` in the current mode, then the rest of ``text``."""
        self._stack.append((text, rest, False))
        if first:
            self._stack.append((first, 0, False))
        return len(text)

    def _emit(self, seg: str) -> None:
        if not seg:
            return
        if self._tentative:
            if seg.isspace():  # kept with the calls: words or nothing
                raw, parsed = self._tentative[-1]
                self._tentative[-1] = (raw + seg, parsed)
                return
            # Words after calls whose markers were dropped: those were words,
            # read as words are (markup in them is still no speech).
            raw = "".join(raw for raw, _ in self._tentative)
            self._tentative = []
            seg = self._as_words(raw) + seg
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
            k = max(self._tail.rfind("<"), self._tail.rfind("["))
            if k >= 0 and (
                may_be_marker(self._tail[k:]) or may_be_bracket_marker(self._tail[k:])
            ):
                seg = " " + seg  # "<" + markup + "think>" must not make a marker
        self._tail = (
            seg[-LONGEST:] if len(seg) >= LONGEST else (self._tail + seg)[-LONGEST:]
        )
        self._text_out.append(seg)

    def _as_words(self, raw: str) -> str:
        """What is spoken of ``raw`` read as words in the middle of a line
        (no call can start it): its markup removed, its thinking kept."""
        words = TextCallFilter(self.names, after_tool_results=self._after_tool_results)
        words._started = True
        words._line_blank = False
        out = words.feed(raw)
        out.extend(words.finish())
        self._think_out.append(out.thinking)
        self._held_out.append(out.held)
        return out.text

    def _removed(self) -> None:
        """Markup was removed: what follows starts a line, for JSON calls."""
        self._line_blank = True
        self._junction = True

    def _add(self, result: Parsed, *, bare: bool = False) -> None:
        """What a piece of markup gave. ``bare``: calls written without
        markers; those repeating a call of this reply echo it (LFM2 writes
        its call again after the end marker), never speech nor a call."""
        if bare and result.calls and all(_key(c) in self._found for c in result.calls):
            return
        if self._tentative and (result.calls or result.problems):
            self._confirm()
        self._found.update(_key(c) for c in result.calls)
        self._reply_calls += len(result.calls)
        self._repaired += result.repaired
        if result.stop:
            self._stopped = True
            self._stack.clear()
        self._calls.extend(TextCall(name, args) for name, args in result.calls)
        self._problems.extend(result.problems)
        self._think_out.extend(result.thinking)
        self._held_out.extend(result.thinking)

    def _confirm(self) -> None:
        """The reply went on with calls or ended: the calls whose markers
        were dropped are calls."""
        tentative, self._tentative = self._tentative, []
        for _, parsed in tentative:
            self._add(parsed)

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
        if not self._started:
            p = i
            while p < len(text) and text[p].isspace():
                p += 1
            if (
                p < len(text)
                and not (p == 0 and self._skip)
                and _WORD_START.match(text[p])
                and self._may_word(text[p])
            ):
                self._emit(text[i:p])
                self._mode = _WORD
                self._word = ""
                return p
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
                self._tag_line = False
                return p + 1
            skipped = p == 0 and self._skip
            if c == "[":  # a marker anywhere; a list at a line's start
                self._emit(text[i:p])
                self._mode = _TAG
                self._tag = "["
                self._tag_line = not skipped and self._blank_at(text, i, p)
                return p + 1
            if skipped:
                j = p + 1
                continue
            line_start = self._blank_at(text, i, p)
            if not line_start:
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

    # --- a reply's first word: a call whose markers were dropped ----------

    def _may_word(self, word: str) -> bool:
        """Whether the reply's first word so far may open a call: Phi-4's
        ``functools[``, Gemma 4's bare ``thought`` line, or an offered
        tool's name (``get_weather{…}``, ``call:get_weather{…}``)."""
        return (
            WORD_OPENER.startswith(word)
            or THOUGHT_LINE.startswith(word)
            or "call:".startswith(word)
            or (word.startswith("call:") and self._named(word[5:]))
            or self._named(word)
        )

    def _named(self, word: str) -> bool:
        return not word or self.names.may_start(word)

    def _step_word(self, text: str, i: int) -> int:
        word = self._word
        n = len(text)
        while i < n:
            c = text[i]
            if self._may_word(word + c):
                word += c
                i += 1
                continue
            self._word = ""
            name = word.removeprefix("call:")
            if word == WORD_OPENER and c == "[":
                self._begin_value(Value.LIST, "")
                return i
            if word == THOUGHT_LINE and c in "\r\n":
                self._mode = _TEXT
                self._removed()
                return i + 1
            if c in "{(" and self.names.exact(name) and (c == "{" or name == word):
                self._begin_value(Value.STRIPPED, word)
                return i
            self._mode = _TEXT
            self._emit(word)
            return i
        self._word = word
        return n

    # --- markers ----------------------------------------------------------

    def _step_tag(self, text: str, i: int) -> int:
        tag = self._tag
        n = len(text)
        while i < n:
            cand = tag + text[i]
            found = marker(cand)
            if found is not None:
                self._tag = ""
                self._open(cand, found)
                return i + 1
            if cand[0] == "[" and may_be_bracket_marker(cand):
                tag = cand
                i += 1
                continue
            if cand[0] == "<" and may_be_marker(cand):
                tag = cand
                i += 1
                continue
            self._tag = ""
            if tag.startswith(_TOOL_CALL_ATTRS):
                self._begin_block(marker(TOOL_CALL))
                return self._then(text, i, tag[len(_TOOL_CALL_ATTRS) :])
            if tag[0] == "[" and self._tag_line:
                return self._begin_list(text, i, tag)
            self._mode = _TEXT
            self._emit(tag)
            return i
        self._tag = tag
        return n

    def _begin_list(self, text: str, i: int, tag: str) -> int:
        """``[`` at a line's start that opens no marker: JSON calls, or
        Python calls when a name follows (``[get_weather(city="Rome")]``)."""
        first = tag[1:2] or text[i]
        if _WORD_START.match(first):
            self._begin_value(Value.PYTHONIC, "[")
        else:
            self._begin_json("[", "", fence=False)
        return self._then(text, i, tag[1:])

    def _open(self, tag: str, found: Marker) -> None:
        """A whole marker was read in text mode."""
        role = found.role
        if role in (Role.THINKING, Role.ECHO):
            self._enter_think(tag, found)
        elif role in (Role.BLOCK, Role.HEADER):
            self._begin_block(found)
        elif role is Role.VALUE:
            assert found.value is not None
            self._begin_value(found.value, "")
        else:  # a stray marker: dropped
            if tag == THINK_END and self._started:
                self._unopened_think = True
            self._mode = _TEXT
            self._removed()

    # --- thinking ---------------------------------------------------------

    def _enter_think(self, opener: str, found: Marker, *, guess: bool = False) -> None:
        self._mode = _THINK
        self._think = found
        self._think_opener = opener
        self._think_hold = ""
        self._guess = guess

    def _step_think(self, text: str, i: int) -> int:
        hold = self._think_hold
        found = self._think
        calls = in_think(self._think_opener)
        window = hold + text[i:] if hold or i else text
        m = end_pattern(found.ends, (*found.reopens, *calls)).search(window)
        if m is not None:
            p = m.start()
            self._thought(window[:p])
            self._think_hold = ""
            end = m.group()
            after = i + m.end() - len(hold)
            if end in calls:  # a call opened before the thinking closed
                self._think_to_out()
                self._block_in_think = end
                self._begin_block(_closed_by_think(marker(end)))
                return after
            self._mode = _TEXT
            self._removed()
            if end in found.ends:
                self._think_closed()
                return after
            self._open(end, opened(end))  # the next gpt-oss message
            return after
        keep = 0
        ends = (*found.ends, *found.reopens, *calls)
        for k in range(min(LONGEST, len(window)), 0, -1):
            tail = window[-k:]
            if any(e.startswith(tail) for e in ends):
                keep = k
                break
        self._thought(window[: len(window) - keep])
        self._think_hold = window[len(window) - keep :] if keep else ""
        return len(text)

    def _thought(self, seg: str) -> None:
        if seg:
            if self._guess:
                self._guessed.append(seg)
            elif self._think_calls:
                self._think_after.append(seg)
            else:
                self._think_out.append(seg)

    def _think_closed(self) -> None:
        """``</think>``: what was held in the thinking was thought."""
        self._think_to_out()
        for raw, _ in self._think_calls:
            self._think_out.append(raw)
        self._think_out.extend(self._think_after)
        self._think_calls = []
        self._think_after = []

    def _think_block(self, parsed: Parsed) -> None:
        """A block inside thinking ended: a call is held until the thinking
        closes or the reply ends; markup that gave none is thought."""
        raw = self._block_in_think + self._block.raw.removesuffix(THINK_END)
        self._block_in_think = ""
        if parsed.calls:
            self._think_calls.append((raw, parsed))
        else:
            self._thought(raw)

    def _think_to_out(self) -> None:
        """Words held as possible thinking were thinking."""
        if self._guessed:
            self._think_out.extend(self._guessed)
            self._guessed = []
        self._guess = False

    # --- scanners ---------------------------------------------------------

    def _begin_block(self, found: Marker | None) -> None:
        assert found is not None
        self._mode = _BLOCK
        self._block.begin(found)

    def _step_block(self, text: str, i: int) -> int:
        block = self._block
        i = block.feed(text, i)
        if block.parsed is not None:
            parsed = block.parsed
            if self._block_in_think:
                self._think_block(parsed)
                self._mode = _THINK
                if block.end == THINK_END:
                    self._mode = _TEXT
                    self._removed()
                    self._think_closed()
                elif block.reopen is not None and block.reopen in in_think(
                    self._think_opener
                ):
                    self._block_in_think = block.reopen
                    self._begin_block(_closed_by_think(marker(block.reopen)))
                return i
            if parsed.channel is not None:
                self._mode = _TEXT
                self._removed()
                self._channel(parsed.channel)
                return i
            rest = self._end_markup(parsed)
            if block.reopen is not None:
                self._open(block.reopen, opened(block.reopen))
            if rest:
                return self._then_text(text, i, rest)
        return i

    def _channel(self, header: str) -> None:
        """A gpt-oss header ended: its message is thinking, a call, or words."""
        kind, recipient = harmony_channel(header)
        if kind == "analysis":
            self._enter_think("<|channel|>", HARMONY_ANALYSIS)
        elif kind == "call" and recipient:
            ends, reopens = HARMONY_CALL_ENDS
            self._mode = _BLOCK
            self._block.begin(
                Marker(Role.BLOCK, ends, reopens), harmony_call(recipient)
            )

    def _begin_value(self, kind: Value, prefix: str) -> None:
        self._mode = _VALUE
        self._value.begin(kind, prefix)

    def _step_value(self, text: str, i: int) -> int:
        scanner = self._value
        i = scanner.feed(text, i)
        if scanner.rejected:  # words after all
            return self._refeed(text, i, scanner.held())
        if scanner.parsed is not None:
            rest = self._value_done(scanner.parsed, scanner)
            if rest:
                return self._then_text(text, i, rest)
        return i

    def _value_done(self, parsed: Parsed, scanner: ValueBlock) -> str:
        """A value ended; returns the words it left (read next)."""
        kind = scanner.kind
        raw = scanner.raw
        self._mode = _TEXT
        self._removed()
        if kind is Value.CODE:  # more calls, or the fence's end, may follow
            self._mode = _FENCE
            self._fence.after_call()
        if kind is Value.STRIPPED and not parsed.stop:
            if not (parsed.calls and all(_key(c) in self._found for c in parsed.calls)):
                self._tentative.append((raw, parsed))  # else an echo: dropped
            return ""
        self._add(parsed, bare=kind is Value.PYTHONIC)
        return parsed.rest

    def _then_text(self, text: str, rest: int, first: str) -> int:
        """Process ``first`` as text (what a piece of markup left), then the
        rest of ``text``."""
        self._stack.append((text, rest, False))
        self._push_text([first])
        return len(text)

    def _step_fence(self, text: str, i: int) -> int:
        fence = self._fence
        i = fence.feed(text, i)
        if fence.end is FenceEnd.TEXT:
            return self._refeed(text, i, [fence.held])
        if fence.end is FenceEnd.CALL:
            if text[i] in "{[":
                self._begin_json(text[i], fence.held, fence=True)
                return i + 1
            # Gemma 3: ```tool_code, then get_weather(city="Rome")
            self._mode = _VALUE
            self._value.begin(Value.CODE, "", lead=fence.held)
            return i
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

    def _end_markup(self, result: Parsed) -> str:
        """A piece of markup ended: back to text, with what it gave; returns
        the words it left (read next)."""
        self._mode = _TEXT
        self._removed()
        self._add(result)
        return result.rest

    # --- end of stream ----------------------------------------------------

    def _finish_mode(self) -> None:
        """Close the current mode; what must be read again goes on the stack."""
        mode = self._mode
        self._mode = _TEXT
        if mode == _TAG:
            tag, self._tag = self._tag, ""
            if len(tag) < _DROP_PARTIAL or not is_listed_prefix(tag):
                if tag[0] == "[" and self._tag_line and len(tag) > 1:
                    self._begin_list(tag, len(tag), tag)
                else:
                    self._emit(tag)
        elif mode == _WORD:
            word, self._word = self._word, ""
            if word != THOUGHT_LINE:
                self._emit(word)
        elif mode == _THINK:
            if self._think_hold:
                self._thought(self._think_hold)
            self._think_hold = ""
            calls, self._think_calls = self._think_calls, []
            guessed, self._guessed = self._guessed, []
            self._guess = False
            self._think_out.extend(self._think_after)
            self._think_after = []
            for _, parsed in calls:  # the call ended the thinking
                self._removed()
                self._add(parsed)
            self._push_text(guessed)  # no </think>: they were the answer
        elif mode == _BLOCK:
            result = self._block.cut_off()
            self._removed()
            if self._block_in_think:
                self._think_block(result)
                self._mode = _THINK
                return
            if result.calls or result.problems:
                self._add(result)
            if result.rest:
                self._stack.append((result.rest, 0, False))
        elif mode == _VALUE:
            kind = self._value.kind
            cut = self._value.cut_off()
            if cut is None:  # words after all
                self._push_text(self._value.held())
            else:
                self._removed()
                self._add(cut, bare=kind is Value.PYTHONIC)
                if cut.rest:
                    self._push_text([cut.rest])
        elif mode == _FENCE:
            self._push_text([self._fence.cut_off()])
        elif mode == _JSON:
            self._add(self._json.cut_off())
