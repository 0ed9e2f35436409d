"""Lists of plain words written as text: `word_set("the a an is are")`.

A list of words reads as the words, wrapped at about 80 columns, rather than
one quoted word a line. `words` and `word_set` split their text at
whitespace; `phrase_set` splits at `|`, so that an item may be a phrase
(`"do it | go ahead | yes"`; the whitespace inside a phrase, a line break
too, reads as one space). `words` keeps the order, for lists whose order
matters. Patterns stay tuples of strings: a pattern is no word.
"""

from __future__ import annotations


def words(text: str) -> tuple[str, ...]:
    """The words of `text`, in order."""
    return tuple(text.split())


def word_set(text: str) -> frozenset[str]:
    """The words of `text`, as a set."""
    return frozenset(text.split())


def phrase_set(text: str) -> frozenset[str]:
    """The phrases of `text`, separated by `|`, as a set."""
    phrases = (" ".join(phrase.split()) for phrase in text.split("|"))
    return frozenset(phrase for phrase in phrases if phrase)
