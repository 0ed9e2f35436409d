"""The words of each language the agent knows, one module per language.

Each module holds a `LEXICON` (`base.Lexicon`): every word the checks look
for, in that language. The checks join all languages' words (`every`), so a
request or reply in any of them is checked whatever the pipeline's language.
Adding a language is adding its module here, its corpus
(`tests/lexicon/corpus_<language>.json`) and its translations:
CONTRIBUTING.md, "Add a language".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
import re

from . import de, en, es, fr, it
from .base import ACTS, Lexicon

__all__ = ["ACTS", "LEXICONS", "Lexicon", "alternatives", "every", "guess_language"]

_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?", re.UNICODE)


LEXICONS: dict[str, Lexicon] = {
    lexicon.language: lexicon
    for lexicon in (en.LEXICON, it.LEXICON, es.LEXICON, de.LEXICON, fr.LEXICON)
}


def every[T](words: Callable[[Lexicon], Iterable[T]]) -> tuple[T, ...]:
    """One field of every language, in order, each entry once:
    `every(lambda lexicon: lexicon.claims)`."""
    return tuple(
        dict.fromkeys(
            entry for lexicon in LEXICONS.values() for entry in words(lexicon)
        )
    )


def alternatives(patterns: Iterable[str]) -> str:
    """Patterns as one group that matches any of them."""
    return "(?:" + "|".join(patterns) + ")"


def guess_language(text: str, default: str | None) -> str | None:
    """The language `text` is in, when its words say so clearly (two of a
    language's marks, and more than any other's); else `default`.

    The pipeline's language is what the user chose; a request typed or
    said in another language ("Che tempo fa a Milano?" to an English
    pipeline) is answered in that one where the agent has its words.
    """
    words = [w.lower() for w in _WORD.findall(text)]
    scores = sorted(
        ((sum(w in lex.marks for w in words), code) for code, lex in LEXICONS.items()),
        reverse=True,
    )
    (best, code), (second, _) = scores[0], scores[1]
    if best >= 2 and best > second:
        base = (default or "").split("-")[0].lower()
        return default if base == code else code
    return default
