"""Say only what happened: a reply's words against what ran.

Three things a reply may say that are not an answer, in every language of
`lexicon/` (the words are there; the patterns are built here, once):

- it narrates a call instead of making it (`narrates_call`): "Done. The tool
  get_weather called with city Oslo.", "I'll call the delete_item tool";
  an offered tool's name as a model writes it (`delete_item`,
  `HassTurnOn`) or words that describe calling a tool;
- it confirms an action (`claims_action`): "Eggs have been added", "Ho
  eliminato l'articolo", "He encendido la luz"; true only when a tool that
  changes something ran, so it counts only when the user asked for an action
  (`asks_for_action`);
- it repeats the agent's own instruction to the model
  (`echoes_instruction`): "The user asked: …", "using the tool results above".

`SpokenCheck` holds each sentence of a reply until it is complete and checks
it before it is spoken.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from enum import StrEnum
import functools
import re

from ..lexicon import alternatives, every

# Words that describe calling a tool, or a tool's result as a log would.
_NARRATION = re.compile("|".join(every(lambda lex: lex.narration)), re.IGNORECASE)

# A tool name as a model writes it in a narration: with an underscore, or in
# CamelCase (Assist's intents), as a word of its own.
_IDENTIFIER = re.compile(r"[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+|(?:[A-Z][a-z0-9]+){2,}")


def tool_names_pattern(tools: Iterable[str]) -> re.Pattern[str] | None:
    """The offered tools' names as a model writes them in a narration."""
    return _names_pattern(tuple(sorted(tools)))


@functools.lru_cache(maxsize=64)
def _names_pattern(tools: tuple[str, ...]) -> re.Pattern[str] | None:
    names = {name.rpartition("__")[2] for name in tools}
    names = {name for name in names if _IDENTIFIER.fullmatch(name)}
    if not names:
        return None
    written = "|".join(re.escape(name) for name in sorted(names))
    return re.compile(rf"(?<!\w)(?:{written})(?!\w)", re.IGNORECASE)


def narrates_call(text: str, tools: Iterable[str] | re.Pattern[str] | None) -> bool:
    """Whether `text` describes calling a tool rather than answering
    (`tools`: the offered names, or their `tool_names_pattern`): words that
    describe a call, or a tool's name written as a call (`get_weather(`,
    `delete_item with`, `add_item:`). A name alone is no narration: asked
    "Who are you?", a model may list what it can do."""
    if _NARRATION.search(text):
        return True
    if tools is None or isinstance(tools, re.Pattern):
        pattern = tools
    else:
        pattern = tool_names_pattern(tools)
    if pattern is None:
        return False
    return any(_AS_CALL.match(text, found.end()) for found in pattern.finditer(text))


# What follows a tool's name written as a call: a bracket, a colon, or a
# language's words ("with", "con").
_AS_CALL = re.compile(
    r"\s*" + alternatives((r"\(", r"\{", ":", *every(lambda lex: lex.call_followers))),
    re.IGNORECASE,
)


# A confirmation that something was done.
_CLAIM = re.compile(
    "|".join(every(lambda lex: lex.claims)), re.IGNORECASE | re.MULTILINE
)

# A request for an action (an imperative, or "I need …"), not a question.
_ACTION = re.compile(
    r"\b"
    + alternatives(re.escape(word) for word in every(lambda lex: lex.action_words))
    + r"\b",
    re.IGNORECASE,
)

# Asking to be told something: a question, whatever its verb ("Tell me the
# weather in Rome.", "Dimmi cosa c'è nella lista.").
_INFO_REQUEST = re.compile(
    "|".join(every(lambda lex: lex.info_requests)), re.IGNORECASE
)


def asks_for_action(request: str) -> bool:
    """Whether the user's words ask for something to be done: an action
    word ("Add milk."), or a thing switched without one ("Kitchen lights
    off."), never in a question."""
    if _ACTION.search(_INFO_REQUEST.sub(" ", request)):
        return True
    return _SWITCHED is not None and any(
        _SWITCHED.fullmatch(sentence) and not _asks(sentence)
        for sentence in _SENTENCE.findall(request)
    )


def _at_start(patterns: Sequence[str]) -> re.Pattern[str]:
    return re.compile(r"^\W*(?:" + "|".join(patterns) + ")", re.IGNORECASE)


_QUESTION_OPENER = _at_start(every(lambda lex: lex.question_openers))
_REQUEST_OPENER = _at_start(every(lambda lex: lex.request_openers))
_FIRST_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
_ACTION_WORDS = frozenset(w.lower() for w in every(lambda lex: lex.action_words))


_SENTENCE = re.compile(r"[^.?!;]+[.?!;]*")
_SWITCH_PHRASES = every(lambda lex: lex.switch_phrases)
_SWITCHED = (
    re.compile(r"\W*" + alternatives(_SWITCH_PHRASES) + r"\W*", re.IGNORECASE)
    if _SWITCH_PHRASES
    else None
)


def is_question(request: str) -> bool:
    """Whether the user's words ask to be told, not for a change: "Is the
    garage open?", "La luce è accesa?"; never "Can you open the garage?"
    (a request asked as a question), "Open the garage?", or "Is it raining?
    Also add an umbrella." (every sentence must be a question).
    Speech-to-text often leaves the question mark out, so a question's
    opening word is enough."""
    sentences = [s for s in _SENTENCE.findall(request) if _FIRST_WORD.search(s)]
    return bool(sentences) and all(_asks(sentence) for sentence in sentences)


def _asks(sentence: str) -> bool:
    if _REQUEST_OPENER.match(sentence):
        return False
    if _QUESTION_OPENER.match(sentence):
        return True
    if not sentence.rstrip().endswith("?"):
        return False
    first = _FIRST_WORD.search(sentence)
    return first is None or first.group().lower() not in _ACTION_WORDS


_ANY_QUESTION_WORD = re.compile(
    r"\b(?:" + "|".join(every(lambda lex: lex.question_openers)) + ")",
    re.IGNORECASE,
)


def asks_back(answer: str) -> bool:
    """Whether the agent's answer ends asking the user something, whatever
    its last character: a question ("Which city?", "Quale città"), or a
    request to be told ("Please tell me which city.", "Dimmi quale città.").
    A closing courtesy ("Let me know if you need anything.") holds no
    question word after its request and is a statement."""
    sentences = [s for s in _SENTENCE.findall(answer) if _FIRST_WORD.search(s)]
    if not sentences:
        return False
    last = sentences[-1]
    if last.rstrip().endswith("?") or _QUESTION_OPENER.match(last):
        return True
    told = _INFO_REQUEST.search(last)
    return told is not None and bool(_ANY_QUESTION_WORD.search(last, told.end()))


def claims_action(text: str) -> bool:
    """Whether `text` says that something was done."""
    return bool(_CLAIM.search(text))


# The agent's own instruction to the model (`rules`), as models
# restate it.
_INSTRUCTION = re.compile(
    "|".join(every(lambda lex: lex.instruction_echoes)), re.IGNORECASE
)


def echoes_instruction(text: str) -> bool:
    """Whether `text` repeats the agent's instruction instead of answering."""
    return bool(_INSTRUCTION.search(text))


_TOKEN = re.compile(r"\d+(?:[.,]\d+)?|[^\W\d_]+", re.UNICODE)
_NUMBER = re.compile(r"\d")
# Words that say nothing of a tool's domain.
_COMMON = frozenset(every(lambda lex: lex.common))
# Each language's words for what a reading tool tells, to the words tool
# descriptions use: "Wetter" and "temps" are about "weather".
_TOPICS: dict[str, set[str]] = {}
for _topic, _word in every(
    lambda lex: ((topic, w) for topic, ws in lex.topics.items() for w in ws)
):
    _TOPICS.setdefault(_word, set()).add(_topic)
# A tool's result stated with no number ("The list is empty.").
_STATED = re.compile("|".join(every(lambda lex: lex.stated_results)), re.IGNORECASE)


def _words(text: str) -> list[str]:
    return [w.lower() for w in _TOKEN.findall(text)]


def _shape(text: str, named: set[str]) -> tuple[str, ...]:
    """A text's words with its numbers and the words its request named
    (a city, an item) taken out: "Rome: sunny, 16°C" asked for Rome ->
    (sunny, N, c)."""
    return tuple("N" if _NUMBER.match(w) else w for w in _words(text) if w not in named)


_SKELETON = re.compile(r"\d+(?:[.,]\d+)?|[^\W\d_]+|[^\w\s]", re.UNICODE)


def _skeleton(text: str) -> tuple[str, ...]:
    """A text's form: each number N, each word W, punctuation kept
    ("Rome: sunny, 16°C" -> W : W , N ° W)."""
    return tuple(
        "N" if t[0].isdigit() else "W" if t[0].isalpha() else t
        for t in _SKELETON.findall(text.strip().rstrip("."))
    )


def makes_up_result(
    sentence: str,
    request: str,
    earlier: Iterable[tuple[str, str]],
    domains: Iterable[str],
) -> bool:
    """Whether `sentence`, said in a turn in which no tool ran, states a
    tool's result: it has the form of a result (or an answer) an earlier
    turn got (`earlier`: its request and that text), a number among other
    values ("Paris: sunny, 18°C." after "Rome: sunny, 16°C"), or it holds a
    number and the request or the sentence is about what a tool that reads
    tells (`domains`: each such tool's name and description, e.g.
    "get_weather: Current weather…"), or it states such a result with no
    number ("The list is empty."). A language's words for a domain count
    as the description's (`Lexicon.topics`)."""
    named = set(_words(request))
    mine = _shape(sentence, named)
    form = _skeleton(sentence)
    said = " ".join(_words(sentence))
    for asked, result in earlier:
        # Said again word for word, an earlier result is no invention.
        if said in " ".join(_words(result)):
            continue
        theirs = _shape(result, set(_words(asked)))
        if len(theirs) >= 2 and mine == theirs:
            return True
        if "N" in form and len(form) >= 4 and form == _skeleton(result):
            return True
    sentence_words = set(_words(sentence))
    # The sentence's words in the tools' terms: "Le temps à Lyon est 20
    # heures." is about "weather".
    told = sentence_words | {t for w in sentence_words for t in _TOPICS.get(w, ())}
    if _NUMBER.search(sentence):
        # The request's words or the sentence's: "Che tempo fa a Milano?"
        # was answered "The temperature in Milano is 23°C." (get_weather:
        # "Current weather and temperature for a city.").
        said_words = named | told
    elif _STATED.search(sentence):
        # No number, a result said all the same: "The demo shopping list is
        # empty.", "No, you do not need an umbrella in Amsterdam."
        said_words = told
    else:
        return False
    words = {w for w in said_words if len(w) > 3 and w not in _COMMON}
    return any(words & set(_words(domain.replace("_", " "))) for domain in domains)


# Where a sentence ends (the check runs on whole sentences).
SENTENCE_END = re.compile(r"(?<=[.!?…:;])\s+|\n")


class Withheld(StrEnum):
    """Why a reply's words were not spoken."""

    NARRATION = "narrated_call"
    CLAIM = "claim_without_call"
    INSTRUCTION = "echoed_instruction"
    # A reply that was only JSON (`reply`: held from speech).
    NOT_SPEECH = "json_instead_of_words"
    # A tool's result stated with no call that gave it.
    RESULT = "made_up_result"
    # Call markup that could not be read, and nothing else (`reply`).
    UNREADABLE = "unreadable_call"


type SentenceCheck = Callable[[str], Withheld | None]


# What a narration holds early in its sentence: the words it opens with ("I",
# "let me", "call", "using") or needs (a tool, a function, a name
# written the way tool names are). Until a sentence holds one of these it
# cannot be becoming one (`narrates_call`), so it is spoken as it comes when
# narration is all a reply is checked for. The openers are here so a held
# narration leaves no fragment ("I will call the") in speech.
NARRATION_TRIGGER = re.compile(
    r"\b"
    + alternatives(every(lambda lex: lex.narration_openers))
    + r"|[A-Za-z0-9]_[A-Za-z0-9]|(?-i:[a-z][A-Z])|[({`]",
    re.IGNORECASE,
)


# The trigger's words whole: a sentence's last word, still being written, is
# held while it may grow into one of these or into an offered tool's name
# ("cal" → "call", "get" → "get_weather"), and spoken at once when it cannot
# ("It" of "It is sunny").
NARRATION_OPENERS = every(lambda lex: lex.opener_words)

_LAST_WORD = re.compile(r"[\w']*\Z")


class SpokenCheck:
    """Holds a reply's words sentence by sentence and checks each before it
    is spoken: from the first sentence that fails, nothing more is spoken.

    Text-to-speech starts on whole sentences anyway (Home Assistant streams
    to it after the first 60 characters), so a sentence's wait costs a voice
    user nothing. A chat shows text as it comes, though: with a `trigger`
    (`NARRATION_TRIGGER` for a capable model, checked for narrations only),
    a sentence is held only from the moment it holds what its check looks
    for; until then it is spoken as it arrives.
    """

    # A sentence this short ("Done.", "Sure!") is checked with the next one:
    # alone it says too little to judge, and spoken it cannot be taken back.
    SHORT = 24

    __slots__ = (
        "_check", "_held_words", "_pending", "_released", "_trigger", "reason",
        "withheld",
    )  # fmt: skip

    def __init__(
        self,
        check: SentenceCheck,
        trigger: re.Pattern[str] | None = None,
        held_words: Iterable[str] = (),
    ) -> None:
        """Check each sentence with `check` (a reason, or None when fine);
        with a `trigger`, a last word that may grow into one of `held_words`
        waits for the next characters."""
        self._check = check
        self._trigger = trigger
        self._held_words = tuple(word.lower() for word in held_words)
        self._pending = ""
        # What of the sentence being written was spoken already (`trigger`).
        self._released = ""
        self.reason: Withheld | None = None
        self.withheld = ""

    def feed(self, text: str) -> str:
        """Take a piece of the reply; return what may be spoken now."""
        if self.reason is not None:
            self.withheld += text
            return ""
        self._pending += text
        spoken = ""
        start = 0
        while (end := SENTENCE_END.search(self._pending, start)) is not None:
            sentence = self._released + self._pending[: end.end()]
            if len(sentence.strip()) < self.SHORT:
                start = end.end()  # wait for the next sentence
                continue
            if (reason := self._check(sentence)) is not None:
                self.reason = reason
                self.withheld, self._pending = self._pending, ""
                return spoken
            spoken += self._pending[: end.end()]
            self._pending = self._pending[end.end() :]
            self._released = ""
            start = 0
        trigger = self._trigger
        if (
            trigger is not None
            and self._pending
            and not trigger.search(self._released + self._pending)
        ):
            # The last word may still be growing into one the trigger knows
            # ("cal" → "call"): then it waits for the characters after it.
            cut = _LAST_WORD.search(self._pending).start()  # type: ignore[union-attr]
            last = self._pending[cut:].lower()
            if not last or not any(w.startswith(last) for w in self._held_words):
                cut = len(self._pending)
            spoken += self._pending[:cut]
            self._released += self._pending[:cut]
            self._pending = self._pending[cut:]
        return spoken

    def finish(self) -> str:
        """The reply ended: check what is left."""
        rest, self._pending = self._pending, ""
        sentence = self._released + rest
        if self.reason is None and sentence.strip():
            self.reason = self._check(sentence)
        if self.reason is not None:
            self.withheld += rest
            return ""
        return rest
