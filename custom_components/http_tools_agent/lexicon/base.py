"""What a language's module holds.

Patterns are regular-expression source strings (matched case-insensitively
unless they say `(?-i:…)`); the checks that read them (`turn/honesty.py`,
`turn/changes.py`, `small/guards.py`, `turn/examples.py`) join every
language's into one pattern, compiled once. Words (not patterns) are matched
whole, as written, and written as text (`engine/words.py`: `words`,
`word_set`, `phrase_set` for phrases separated by `|`). The verbs of tool
names (`delete_item`, `remove_item`) are no language's: identifiers, kept in
the standalone engine (`engine/textcalls/names.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..engine.speakable import ReadOutWords

# What a request may ask a tool to do (`small/guards.py`).
ACTS = ("add", "delete", "update", "send", "get", "turn_on", "turn_off")


@dataclass(frozen=True, slots=True, kw_only=True)
class Lexicon:
    """One language's words."""

    language: str
    # Words frequent in that language and rare in the others (articles,
    # prepositions, question words, common verbs): they tell the language
    # of a request.
    marks: frozenset[str]
    # Words that describe calling a tool, or a tool's result as a log
    # would: "I'll call the delete_item tool" (patterns).
    narration: tuple[str, ...]
    # What follows a tool's name written as a call: "delete_item with …"
    # (patterns, after the name and its spaces).
    call_followers: tuple[str, ...]
    # What a narration holds early in its sentence, from a word boundary:
    # the words it opens with or needs ("I", "let me", "call", "tool").
    # Until a sentence holds one, it is spoken as it streams (patterns).
    narration_openers: tuple[str, ...]
    # The same words whole: a sentence's last word, still being written, is
    # held while it may grow into one ("cal" -> "call") and spoken at once
    # when it cannot ("It" of "It is sunny").
    opener_words: tuple[str, ...]
    # A confirmation that something was done: "I've added eggs" (patterns,
    # line by line: `^` is a line's start).
    claims: tuple[str, ...]
    # Imperatives and verbs that ask for an action ("add", "turn"): whole
    # words.
    action_words: tuple[str, ...]
    # A thing switched without a verb: "Kitchen lights off.", "Fan on in the
    # bedroom, please." (patterns a whole sentence matches, punctuation
    # around it aside; a question never counts). It asks for a change as an
    # action word does.
    switch_phrases: tuple[str, ...] = ()
    # Asking to be told something, whatever its verb: "tell me" (patterns);
    # taken out of a request before `action_words` are looked for.
    info_requests: tuple[str, ...]
    # The words a question opens with ("is", "what", "c'è"; patterns at the
    # request's start): "Is the garage open?" asks for no change, though
    # "open" is an action word. A request that opens with none and ends
    # with "?" is a question too, unless its first word is an action word
    # ("Open the garage?").
    question_openers: tuple[str, ...]
    # A request for an action asked as a question ("can you", "puoi";
    # patterns at the request's start): never taken for a question.
    request_openers: tuple[str, ...]
    # The agent's instruction to the model as a model restates it: "The user
    # asked: …" (patterns).
    instruction_echoes: tuple[str, ...]
    # Openings of words that say an action did not happen: "could not",
    # "non posso" (patterns; the word may go on).
    says_failed: tuple[str, ...]
    # For each of `ACTS`, the words or their stems (longer than three
    # letters: a word that starts with one) that ask for it.
    acts: Mapping[str, tuple[str, ...]]
    # What a tool's result is said with when the agent reads it out
    # (`engine/speakable.py`): "and", yes and no, an empty list, a counted
    # list, common keys in the language.
    read_out: ReadOutWords
    # Words that introduce an example value in a tool's description
    # ("e.g.", "for example"; patterns).
    example_markers: tuple[str, ...] = ()
    # Words that say nothing of a tool's domain ("the", "what", "tool").
    common: frozenset[str] = field(default_factory=frozenset)
    # What a reading tool tells, in the language's words: for a word a
    # tool's description uses ("weather", "temperature", "list"), the
    # language's words that name it or a result of it ("Wetter", "temps",
    # "umbrella"; whole words, lower case). A sentence that holds one is
    # about that tool's domain (`turn/honesty.py`, `makes_up_result`).
    topics: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # A tool's result stated with no number: "The list is empty.", "you do
    # not need an umbrella" (patterns).
    stated_results: tuple[str, ...] = ()
    # What answers a question the agent asked before acting
    # (`turn/hold.py`): the words of a yes, and of a no.
    yes: frozenset[str] = frozenset()
    no: frozenset[str] = frozenset()
    # Words that may stand beside a yes or a no ("yes please", "the PIN is
    # 1234"): an answer made of them and a yes is a yes (`turn/hold.py`).
    fillers: frozenset[str] = frozenset()
    # A later time said around a tool's sentence, in Home Assistant's
    # sentence syntax with the wildcard `{later}` ("in {later} minutes"):
    # Home Assistant would make the request a delayed command that a tool
    # which asks first, or only reads, cannot carry out then (`sentences.py`).
    later: tuple[str, ...] = ()
    # Words that join several things a request names: "Rome and Paris",
    # "Madrid or Oslo" (whole words, lower case). A small model's one call
    # for such a request may leave the rest out (`small/answer.py`).
    joiners: frozenset[str] = frozenset()
