"""What a language's module holds."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Lexicon:
    """One language's words."""

    language: str
    # Words frequent in that language and rare in the others (articles,
    # prepositions, question words, common verbs): they tell the language
    # of a request.
    marks: frozenset[str]
