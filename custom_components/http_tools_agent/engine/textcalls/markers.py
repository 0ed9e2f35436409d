"""Every model family's markers, and what each one opens.

One table: a marker the filter meets in a reply opens thinking, an echoed
result, a block of calls that a closing marker ends, a call whose value
ends it, or a channel header (gpt-oss); or it is a stray marker, dropped.
Adding a family's format is adding its markers here and, where its calls
look new, a parser (``docs/text-calls.md`` has the table of families).

Besides the markers listed, any special token of the usual shapes
(``<|eot_id|>``, ``<|im_end|>``, ``<|turn>``, DeepSeek's full-width bars) is a
stray marker: a server that does not skip special tokens sends them as text,
and no answer holds one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum, auto
from functools import cache
import re

from ..words import words
from .call_lists import parse_call_list
from .gemma import parse_gemma
from .hermes import parse_tool_call
from .markup import (
    FUNC,
    FUNC_END,
    PARAM,
    PARAM_END,
    THINK,
    THINK_END,
    TOOL_CALL,
    TOOL_CALL_END,
    TOOL_RESPONSE,
    TOOL_RESPONSE_END,
    Parsed,
)
from .names import ToolNames
from .qwen_xml import parse_function, parse_orphan_parameter

type Parser = Callable[..., Parsed]


class Role(Enum):
    """What a marker opens."""

    THINKING = auto()  # text up to an end marker is thinking
    ECHO = auto()  # an echoed tool result: thinking, never speech
    BLOCK = auto()  # calls up to an end marker, read by ``parse``
    VALUE = auto()  # a call whose value (JSON or Python) ends it
    HEADER = auto()  # gpt-oss: a channel header, up to <|message|>
    DROP = auto()  # a stray marker: removed


class Value(Enum):
    """How the value after a VALUE marker is read (`values.ValueBlock`)."""

    MISTRAL = auto()  # NAME[ARGS]{…}, NAME[CALL_ID]ID[ARGS]{…}, or a JSON list
    LIST = auto()  # a JSON list or object, or Python calls
    SEQUENCE = auto()  # the same, several joined by ';' (Llama 3.x)
    STRIPPED = auto()  # NAME{…} / NAME(…) / call:NAME{…} with markers dropped
    PYTHONIC = auto()  # [NAME(…), …] at a line's start, no marker
    CODE = auto()  # NAME(…) in a ```tool_code fence (Gemma 3)


@dataclass(frozen=True, slots=True)
class Marker:
    """One opening marker: what it opens and what ends it."""

    role: Role
    ends: tuple[str, ...] = ()  # end markers, consumed with it
    # Markers that end it and open the next piece (read again).
    reopens: tuple[str, ...] = ()
    parse: Parser | None = None  # BLOCK: body, tools, closed=
    value: Value | None = None  # VALUE: how its value is read


def _header(body: str, _tools: ToolNames, *, closed: bool) -> Parsed:
    """A gpt-oss header: its text, for the message after it."""
    return Parsed(channel=body if closed else None)


HARMONY_MESSAGE = "<|message|>"
_HARMONY_NEXT = ("<|start|>", "<|channel|>")
_CALL_OPENERS = (TOOL_CALL, FUNC)

MARKERS: dict[str, Marker] = {
    # Thinking.
    THINK: Marker(Role.THINKING, (THINK_END,)),
    "[THINK]": Marker(Role.THINKING, ("[/THINK]",)),  # Magistral
    "<|channel>": Marker(Role.THINKING, ("<channel|>",)),  # Gemma 4's thought
    # Echoed results (the tags templates put around a tool's result).
    TOOL_RESPONSE: Marker(Role.ECHO, (TOOL_RESPONSE_END,)),
    "<|tool_response_start|>": Marker(Role.ECHO, ("<|tool_response_end|>",)),
    "<|tool_response>": Marker(Role.ECHO, ("<tool_response|>",)),
    "<start_function_response>": Marker(Role.ECHO, ("<end_function_response>",)),
    "[TOOL_RESULTS]": Marker(Role.ECHO, ("[/TOOL_RESULTS]",)),
    # Blocks of calls.
    TOOL_CALL: Marker(
        Role.BLOCK, (TOOL_CALL_END,), (TOOL_CALL,), parse=parse_tool_call
    ),
    FUNC: Marker(
        Role.BLOCK,
        (FUNC_END, TOOL_CALL_END),
        (FUNC, TOOL_CALL),
        parse=parse_function,
    ),
    PARAM: Marker(
        Role.BLOCK,
        (PARAM_END,),
        (FUNC, TOOL_CALL),
        parse=lambda body, _tools, **_: parse_orphan_parameter(body),
    ),
    "<|tool_call_start|>": Marker(  # LFM2, LFM2.5
        Role.BLOCK, ("<|tool_call_end|>",), parse=parse_call_list
    ),
    "<TOOLCALL>": Marker(Role.BLOCK, ("</TOOLCALL>",), parse=parse_call_list),
    "<|python_start|>": Marker(  # Llama 4
        Role.BLOCK, ("<|python_end|>",), parse=parse_call_list
    ),
    # Gemma 4 (some releases end a call with <turn|>, or write the result's
    # marker straight after it).
    "<|tool_call>": Marker(
        Role.BLOCK,
        ("<tool_call|>", "<turn|>"),
        ("<|tool_call>", "<|tool_response>"),
        parse=parse_gemma,
    ),
    "<start_function_call>": Marker(  # FunctionGemma
        Role.BLOCK,
        ("<end_function_call>",),
        ("<start_function_call>",),
        parse=parse_gemma,
    ),
    # A call whose value ends it.
    "[TOOL_CALLS]": Marker(Role.VALUE, value=Value.MISTRAL),
    "<|tool_call|>": Marker(Role.VALUE, value=Value.LIST),  # Granite 3
    "<|python_tag|>": Marker(Role.VALUE, value=Value.SEQUENCE),  # Llama 3.x
    # gpt-oss (harmony).
    "<|start|>": Marker(Role.HEADER, (HARMONY_MESSAGE,), parse=_header),
    "<|channel|>": Marker(Role.HEADER, (HARMONY_MESSAGE,), parse=_header),
}
# Stray markers: closing markers alone, and other families' turn markers
# that the special-token shapes below do not cover (Gemma 4's closing
# markers: <turn|>, <tool_call|>, ...).
for _stray in (
    TOOL_CALL_END,
    FUNC_END,
    PARAM_END,
    THINK_END,
    TOOL_RESPONSE_END,
    *words("""
        [/THINK] [/TOOL_RESULTS] [ARGS] [CALL_ID] [INST] [/INST] </TOOLCALL>
        <end_function_call> <end_function_response> <start_of_turn>
        <end_of_turn> <turn|> <tool_call|> <tool_response|> <tool|> <channel|>
        <eos> </s>
    """),
):
    MARKERS[_stray] = Marker(Role.DROP)

WORD_OPENER = "functools"  # Phi-4-mini: functools[{…}]
THOUGHT_LINE = "thought"  # Gemma 4's thought channel, its markers dropped

# Special tokens of the usual shapes: <|name|>, <|name> (Gemma 4), and
# DeepSeek's with full-width bars (U+FF5C).
_SPECIAL_FULL = re.compile(
    "<\\|[^|<>\\s\\[\\](){}]{1,40}\\|>|<\\|[a-z_]{1,40}>|<\uff5c[^\uff5c<>\\s]{1,40}\uff5c>"
)
_SPECIAL_PREFIX = re.compile(
    "<(?:\\|[^|<>\\s\\[\\](){}]{0,40}\\|?|\uff5c[^\uff5c<>\\s]{0,40}\uff5c?)?"
)
_MARKER_PREFIXES = frozenset(m[:k] for m in MARKERS for k in range(1, len(m) + 1))
_BRACKET_PREFIXES = frozenset(p for p in _MARKER_PREFIXES if p[0] == "[")
STRAY = Marker(Role.DROP)
LONGEST = max(len(m) for m in MARKERS) + 2


def opened(text: str) -> Marker:
    """The marker that ``text`` (a listed one) is."""
    found = marker(text)
    assert found is not None
    return found


def marker(text: str) -> Marker | None:
    """The marker ``text`` is whole, if any."""
    found = MARKERS.get(text)
    if found is None and _SPECIAL_FULL.fullmatch(text):
        return STRAY
    return found


def may_be_marker(text: str) -> bool:
    """Whether ``text`` may still grow into a marker."""
    if text in _MARKER_PREFIXES:
        return True
    return text[0] == "<" and _SPECIAL_PREFIX.fullmatch(text) is not None


def may_be_bracket_marker(text: str) -> bool:
    """Whether ``text`` (starting with ``[``) may still grow into a marker."""
    return text in _BRACKET_PREFIXES


def is_listed_prefix(text: str) -> bool:
    """A start of a listed marker or of ``<|…``: cut off at the reply's end,
    it is dropped when long enough to be no word."""
    return text in _MARKER_PREFIXES or text.startswith(("<|", "<\uff5c"))


@cache
def end_pattern(ends: tuple[str, ...], reopens: tuple[str, ...]) -> re.Pattern[str]:
    """What ends a block or thinking: any of its end markers."""
    return re.compile("|".join(re.escape(t) for t in (*ends, *reopens)))


def in_think(opener: str) -> tuple[str, ...]:
    """Markers that open a call inside ``opener``'s thinking (Qwen3.5 and
    Nemotron-3-Nano write the call before closing their thinking)."""
    return _CALL_OPENERS if opener == THINK else ()


def harmony_channel(header: str) -> tuple[str, str | None]:
    """A gpt-oss message header -> (``analysis``, ``final`` or ``call``, the
    recipient tool as written). ``<|start|>assistant<|channel|>commentary
    to=functions.get_weather <|constrain|>json``: the recipient may stand
    before or after the channel."""
    words = re.sub(r"<\|[a-z]+\|>", " ", header).split()
    recipient = next((w[3:] for w in words if w.startswith("to=")), None)
    if recipient is not None and recipient.startswith("functions."):
        return "call", recipient.removeprefix("functions.")
    if "analysis" in words or (recipient is not None and recipient != "assistant"):
        return "analysis", None  # built-in tools (to=python) are not ours
    return "final", None


HARMONY_ANALYSIS = Marker(Role.THINKING, ("<|end|>",), _HARMONY_NEXT)
HARMONY_CALL_ENDS = (("<|call|>", "<|end|>", "<|return|>"), _HARMONY_NEXT)
