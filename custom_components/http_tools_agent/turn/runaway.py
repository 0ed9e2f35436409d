"""A reply that runs away: the same words again and again, or far longer
than anything said aloud.

Qwen2.5-Coder-0.5B answered "what do I need to buy?" in the demo with
4,415 characters in 33 s, one line repeated 107 times, cut by `max_tokens`
in the middle of a number. Through a speaker that is minutes of the same
words. In every profile:

- a line or sentence said once already in this reply is not said again
  (its start is held while it reads like the earlier one, so nothing of it
  is spoken), and the reply ends there;
- past `MAX_CHARS` the reply ends at the next sentence end (or, without
  one, at `HARD_CHARS`).

The server stops writing as soon as the agent stops reading, and the reply
ends with a short note saying it was cut.
"""

from __future__ import annotations

import re

# About 80 s of speech (text-to-speech reads some 15 characters a second):
# more than any answer of the oracle scenarios or the benchmarks' requests
# (their longest: 260 characters), less than a third of what
# `max_tokens` (1,024 tokens, some 4,000 characters) lets a model write.
MAX_CHARS = 1200
# Where a reply with no sentence end after `MAX_CHARS` is cut.
HARD_CHARS = MAX_CHARS + 300
# A sentence this long is a repeat when it comes again ("OK." twice is not).
MIN_REPEAT = 20

_END = re.compile(r"[.!?…]+(?=\s)|\n")
_ENUMERATOR = re.compile(r"^\s*(?:\d+[.)]|[-*•])\s*")
_WORD_END = re.compile(r"\s")


def _key(sentence: str) -> str:
    """A sentence as compared: no list number or bullet, spaces folded."""
    return " ".join(_ENUMERATOR.sub("", sentence).lower().split())


class RunawayGuard:
    """Passes a reply's spoken text on; ends it when it runs away."""

    __slots__ = ("_current", "_held", "_said", "cut", "spoken")

    def __init__(self) -> None:
        """A guard for one reply."""
        self._said: set[str] = set()
        self._current = ""  # the sentence being written, spoken so far
        self._held = ""  # its part held back: it reads like an earlier one
        self.spoken = 0  # characters passed on
        self.cut = False  # the reply ran away: nothing more is passed

    def feed(self, text: str) -> str:
        """Take spoken text; return what may be said now."""
        out: list[str] = []
        while text and not self.cut:
            match = _END.search(text)
            if match is None:
                piece, text = text, ""
            else:
                piece, text = text[: match.end()], text[match.end() :]
            said = self._piece(piece, ended=match is not None)
            self.spoken += len(said)
            out.append(said)
        return "".join(out)

    def finish(self) -> str:
        """The reply ended: what is still held (an unfinished sentence that
        read like an earlier one until the end)."""
        if self.cut:
            return ""
        rest, self._held = self._held, ""
        self.spoken += len(rest)
        return rest

    def _piece(self, piece: str, *, ended: bool) -> str:
        """One piece of the current sentence; `ended`: it ends the sentence."""
        sentence = self._current + self._held + piece
        key = _key(sentence)
        if not key and sentence.strip():
            # A list's number ("7.") alone: held with what follows it, so a
            # repeated line is never begun.
            self._held += piece
            return ""
        if ended:
            if len(key) >= MIN_REPEAT and key in self._said:
                self.cut = True
                return ""
            if len(key) >= MIN_REPEAT:
                self._said.add(key)
            said = self._held + piece
            self._current = self._held = ""
            if self.spoken + len(said) >= MAX_CHARS:
                self.cut = True
            return said
        if key and any(earlier.startswith(key) for earlier in self._said):
            self._held += piece  # it may be a repeat: say nothing of it yet
            return ""
        said = self._held + piece
        self._current += said
        self._held = ""
        if self.spoken + len(said) >= HARD_CHARS:
            self.cut = True
            return said[: _last_word_end(said)]
        return said


def _last_word_end(text: str) -> int:
    """Where the last whole word of `text` ends."""
    ends = [m.start() for m in _WORD_END.finditer(text)]
    return ends[-1] if ends else len(text)
