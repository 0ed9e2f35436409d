"""The request for the answer (`Rules.answer_request`): after a round's
results, the instruction to answer and the only calls that still run.

Asked "Rome and Paris?", a small model calls the weather for Rome only;
asked for the answer, with the question again, it calls Paris (Qwen2.5-0.5B
called for Milan after Tokyo; without the question, not), then recites the
other tools: those never run.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
import re
from typing import Any

from ..lexicon import every

# The request for the answer says the question again: after the results, a
# small model then calls for the part they leave out more often (asked so,
# Qwen2.5-0.5B called for Milan after Tokyo; without the question, not).
ANSWER_NUDGE = (
    "If that asks for more than these results, call the tool again for the "
    "rest; else answer the user's question now in plain text using the tool "
    "results above."
)


def answer_nudge(question: str) -> str:
    """The instruction of the request for the answer."""
    return f'The user asked: "{question}". {ANSWER_NUDGE}'


@dataclass(frozen=True, slots=True)
class MoreOf:
    """The calls that run on the request for the answer: a tool the turn
    already called, again, for something else the user named.

    Asked "Rome and Paris?", a small model calls the weather for Rome only;
    asked for the answer, or to call for what the results leave out, it
    calls Paris, then recites the other tools. Those other calls never run,
    and neither does a call whose text is not the user's (an invented city)
    or is all asked for already: every text argument must be words of the
    user's request, and one of them new for that tool.
    """

    # Per tool the turn called, the text values its calls had (lower-cased).
    asked: Mapping[str, frozenset[str]]
    request: str  # the user's words, lower-cased

    def allows(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """Whether this call asks for more of what the user asked."""
        texts = texts_of(arguments)
        return (
            name in self.asked
            and bool(texts)
            and all(text in self.request for text in texts)
            and not texts <= self.asked[name]
        )


def texts_of(arguments: Mapping[str, Any]) -> frozenset[str]:
    """A call's text arguments, lower-cased (as `MoreOf` compares them)."""
    return frozenset(
        v.strip().lower()
        for v in arguments.values()
        if isinstance(v, str) and v.strip()
    )


_JOINERS = frozenset(every(lambda lexicon: lexicon.joiners))
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def may_ask_more(request: str, tools: Iterable[str]) -> bool:
    """Whether the request for the answer may still call for part of the
    request: it joins several things ("Rome and Paris", "Madrid or Oslo",
    in any language the agent knows) and the round called each of its
    `tools` once, so a thing may be left out (`MoreOf`)."""
    called = list(tools)
    # A joiner that opens the request joins it to the turn before ("And in
    # Paris?"), not two things.
    words = _WORD.findall(request.lower())[1:]
    return len(set(called)) == len(called) and any(w in _JOINERS for w in words)
