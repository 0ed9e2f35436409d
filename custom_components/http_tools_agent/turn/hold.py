"""Calls held for the user's yes, owned by one store per entry (`HeldCalls`).

A call of a tool that needs confirmation (`engine/confirm.py`) is not run:
the gate holds it (`turn/calls.py`), the agent asks its question and the
conversation continues (`turn/loop.py`). The next turn of that conversation,
from the same device, answers it (`HeldCalls.answer`):

- a yes (the PIN with it, when the tool has one) runs exactly the held call
  once, through the chat log (same tool, same arguments, no model round to
  write it again);
- a no, or anything that is not a yes, runs nothing: the agent says so;
- a wrong PIN runs nothing; after `MAX_PIN_ATTEMPTS` the call is dropped.

A held call expires after `HOLD_SECONDS`, and is gone after the turn that
answers it (whatever the answer). Another conversation, or the same one
from another device, finds no held call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
import hmac
import re
import time

from homeassistant.helpers import llm

from ..lexicon import LEXICONS

# A satellite listens again at once (`continue_conversation`) and a typed
# answer takes seconds: a minute covers a user who looks up the item first,
# while a "yes" said minutes later, to another question, never confirms a
# call nobody remembers.
HOLD_SECONDS = 60.0
# Wrong PINs before the held call is dropped: three, as a card's PIN.
MAX_PIN_ATTEMPTS = 3

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)
_DIGITS = re.compile(r"\d")
_LONGEST_PHRASE = 3


class Answer(Enum):
    """What the user's words say to a held call."""

    YES = "yes"
    NO = "no"
    OTHER = "other"  # not an answer to the question


def _phrases(words: frozenset[str] | set[str]) -> set[tuple[str, ...]]:
    return {tuple(_WORD.findall(phrase.lower())) for phrase in words}


_YES = _phrases(set().union(*(lex.yes for lex in LEXICONS.values())))
_NO = _phrases(set().union(*(lex.no for lex in LEXICONS.values())))
_FILLER = frozenset().union(*(lex.fillers for lex in LEXICONS.values()))


def _made_of(words: list[str], phrases: set[tuple[str, ...]]) -> bool:
    """Whether `words` are only `phrases` (at least one) and filler words."""
    i, found = 0, False
    while i < len(words):
        for size in range(_LONGEST_PHRASE, 0, -1):
            if tuple(words[i : i + size]) in phrases:
                i, found = i + size, True
                break
        else:
            if words[i] not in _FILLER:
                return False
            i += 1
    return found


def read_answer(text: str) -> tuple[Answer, str]:
    """What `text` answers (a yes or a no in any language the agent has
    words for, nothing else beside it) and the digits it holds (a PIN)."""
    words = _WORD.findall(text.lower())
    digits = "".join(_DIGITS.findall(text))
    if _made_of(words, _YES):
        return Answer.YES, digits
    if _made_of(words, _NO):
        return Answer.NO, digits
    return Answer.OTHER, digits


def mask_digits(text: str) -> str:
    """`text` with its digits hidden (a PIN never reaches the model)."""
    return _DIGITS.sub("•", text)


@dataclass(slots=True)
class HeldCall:
    """One call waiting for its yes."""

    conversation_id: str
    device_id: str | None
    agent_id: str
    call: llm.ToolInput
    # The request the call answered, and the question the agent asked.
    request: str
    question: str
    language: str | None
    expires: float
    # The entry secret the PIN must match; None: no PIN.
    pin: str | None = None
    attempts: int = 0
    # Held by a tool's own sentence (`sentences.py`): the yes runs it
    # and says its words with no model, as the sentence would have.
    sentence: bool = False


class Verdict(Enum):
    """What becomes of a held call after the user's answer."""

    RUN = "run"  # the yes (and the PIN): run it now
    DECLINED = "declined"  # a no: dropped
    NOT_ANSWERED = "not_answered"  # anything else: dropped
    WRONG_PIN = "wrong_pin"  # kept, asked again
    LOCKED = "locked"  # the last PIN attempt failed: dropped
    EXPIRED = "expired"  # it waited too long: dropped


@dataclass(frozen=True, slots=True)
class Decision:
    """The verdict on a held call."""

    verdict: Verdict
    held: HeldCall


@dataclass(slots=True)
class HeldCalls:
    """The held calls of an entry's agents, one per conversation at most."""

    hold_seconds: float = HOLD_SECONDS
    clock: Callable[[], float] = time.monotonic
    _held: dict[str, HeldCall] = field(default_factory=dict)

    def hold(self, held: HeldCall) -> None:
        """Keep `held` for its conversation (replacing an older one)."""
        self._held[held.conversation_id] = held

    def deadline(self) -> float:
        """When a call held now expires."""
        return self.clock() + self.hold_seconds

    def waiting(self, conversation_id: str) -> HeldCall | None:
        """The call the conversation holds (expired or not)."""
        return self._held.get(conversation_id)

    def answer(
        self,
        conversation_id: str,
        device_id: str | None,
        agent_id: str,
        text: str,
        secrets: dict[str, str],
    ) -> Decision | None:
        """The user's words in `conversation_id`: what becomes of the call it
        holds. None when it holds none for this device and agent (a call
        belongs to its conversation, device and agent: nothing else can
        answer it, and it stays held for them until it expires)."""
        held = self._held.get(conversation_id)
        if held is None or held.device_id != device_id or held.agent_id != agent_id:
            return None
        answer, digits = read_answer(text)
        if self.clock() >= held.expires:
            del self._held[conversation_id]
            if answer is Answer.OTHER:
                return None  # a new request: the turn runs as any other
            return Decision(Verdict.EXPIRED, held)
        if answer is not Answer.YES:
            del self._held[conversation_id]
            verdict = Verdict.DECLINED if answer is Answer.NO else Verdict.NOT_ANSWERED
            return Decision(verdict, held)
        if held.pin is not None and not _pin_matches(digits, secrets.get(held.pin)):
            held.attempts += 1
            if held.attempts >= MAX_PIN_ATTEMPTS:
                del self._held[conversation_id]
                return Decision(Verdict.LOCKED, held)
            return Decision(Verdict.WRONG_PIN, held)
        del self._held[conversation_id]
        return Decision(Verdict.RUN, held)


def _pin_matches(given: str, expected: str | None) -> bool:
    """Whether the digits said match the secret (compared in constant time;
    a secret that is missing matches nothing)."""
    if not expected or not given:
        return False
    return hmac.compare_digest(given.encode(), expected.strip().encode())
