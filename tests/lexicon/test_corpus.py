"""Every language's sentences, classified by the checks that read its words.

Each language of `lexicon/` has a corpus here (`corpus_<language>.json`):
for each check, sentences it must say yes to and sentences it must say no
to. A language added with a lexicon but no corpus, a corpus with a check
missing, or a lexicon without translations fails here.
"""

from __future__ import annotations

from collections.abc import Callable
import json
from pathlib import Path
from typing import Any

import pytest

from custom_components.http_tools_agent.engine.speakable import speakable
from custom_components.http_tools_agent.lexicon import ACTS, LEXICONS, guess_language
from custom_components.http_tools_agent.small.answer import may_ask_more
from custom_components.http_tools_agent.small.guards import asks_for
from custom_components.http_tools_agent.turn.changes import says_failed
from custom_components.http_tools_agent.turn.examples import generated_examples
from custom_components.http_tools_agent.turn.hold import Answer, read_answer
from custom_components.http_tools_agent.turn.honesty import (
    NARRATION_OPENERS,
    NARRATION_TRIGGER,
    SpokenCheck,
    Withheld,
    asks_for_action,
    claims_action,
    echoes_instruction,
    is_question,
    makes_up_result,
    narrates_call,
)
from dev.tool_server import DEMO_TOOLS

HERE = Path(__file__).parent
TRANSLATIONS = HERE.parents[1] / "custom_components/http_tools_agent/translations"
NAMES = [*DEMO_TOOLS, "intent__HassTurnOn"]
# What the demo's reading tools tell, as `makes_up_result` is given it.
DOMAINS = [
    "get_weather: Current weather and temperature for a city.",
    "list_items: List the items on the shopping list, optionally filtered by name.",
]


def _example_value(description: str) -> Any:
    """The value a generated example gives a text argument so described."""
    schema = {
        "type": "object",
        "properties": {"x": {"type": "string", "description": description}},
        "required": ["x"],
    }
    line = generated_examples({"t": schema}).splitlines()[2]
    return json.loads(line)["arguments"]["x"]


def _check_language(language: str) -> Callable[[Any], bool]:
    return lambda text: guess_language(text, None) == language


# What each check of a corpus calls with one of its entries.
CHECKS: dict[str, Callable[[str], Callable[[Any], bool]]] = {
    "narration": lambda _: lambda text: narrates_call(text, NAMES),
    "claim": lambda _: claims_action,
    "action": lambda _: asks_for_action,
    "question": lambda _: is_question,
    "instruction_echo": lambda _: echoes_instruction,
    "says_failed": lambda _: says_failed,
    "asks_for": lambda _: lambda pair: asks_for(pair[0], pair[1]),
    # A reading tool's result said in a turn in which no tool ran.
    # [request, sentence].
    "made_up": lambda _: lambda pair: makes_up_result(pair[1], pair[0], [], DOMAINS),
    "language": _check_language,
    # A request that names several things of a kind: one call for it may
    # leave the rest out (`small/answer.may_ask_more`).
    "joins": lambda _: lambda text: may_ask_more(text, ["get_weather"]),
    # A tool's result read out in the language. yes: [result, what is said];
    # no: [result, what is not] (another language's words, keys as words).
    "read_out": lambda language: (
        lambda pair: speakable(pair[0], words=LEXICONS[language].read_out) == pair[1]
    ),
    # Whether a description gives an example value. yes: [description, the
    # value taken from it]; no: a description (a placeholder is shown).
    "example": lambda _: (
        lambda entry: (
            _example_value(entry[0]) == entry[1]
            if isinstance(entry, list)
            else _example_value(entry) != "<x>"
        )
    ),
}
# Which tool asks for which act in a corpus's `asks_for` entries.
TOOL_ACTS = {
    "add_item": "add",
    "delete_item": "delete",
    "update_item": "update",
    "send_webhook": "send",
    "list_items": "get",
    "HassTurnOn": "turn_on",
    "HassTurnOff": "turn_off",
}


def corpus(language: str) -> dict[str, Any]:
    """A language's corpus."""
    data: dict[str, Any] = json.loads(
        (HERE / f"corpus_{language}.json").read_text(encoding="utf-8")
    )
    return data


def _entries() -> list[Any]:
    return [
        pytest.param(language, check, expected, entry, id=f"{language}-{check}")
        for language in sorted(LEXICONS)
        if (HERE / f"corpus_{language}.json").exists()
        for check, sides in corpus(language).items()
        for expected in ("yes", "no")
        for entry in sides.get(expected, [])
    ]


@pytest.mark.parametrize(("language", "check", "expected", "entry"), _entries())
def test_each_sentence_is_classified(
    language: str, check: str, expected: str, entry: Any
) -> None:
    """Every sentence of every corpus gets the answer it should."""
    assert check in CHECKS, f"corpus_{language}.json: unknown check {check!r}"
    assert CHECKS[check](language)(entry) is (expected == "yes"), entry


@pytest.mark.parametrize("language", sorted(LEXICONS))
def test_each_language_has_a_whole_corpus(language: str) -> None:
    """A language with words has sentences for every check, both ways, an
    action of each kind asked for, and the translations of every string."""
    path = HERE / f"corpus_{language}.json"
    assert path.exists(), f"{language} has a lexicon but no {path.name}"
    data = corpus(language)
    for check in CHECKS:
        assert check in data, f"{path.name}: no {check!r}"
        for expected in ("yes", "no"):
            assert data[check].get(expected), f"{path.name}: {check}.{expected} empty"
    asked = {TOOL_ACTS.get(tool) for tool, _ in data["asks_for"]["yes"]}
    assert asked >= set(ACTS), f"{path.name}: asks_for misses {set(ACTS) - asked}"
    lexicon = LEXICONS[language]
    assert set(lexicon.acts) == set(ACTS), f"{language}: acts {set(lexicon.acts)}"
    assert all(lexicon.acts.values()), f"{language}: an act with no words"
    for words in ("yes", "no", "fillers"):
        assert getattr(lexicon, words), f"{language}: no {words} (a held call's answer)"
    assert (TRANSLATIONS / f"{language}.json").exists(), f"no {language}.json"


@pytest.mark.parametrize("language", sorted(LEXICONS))
def test_a_yes_or_a_no_with_each_filler_word(language: str) -> None:
    """A held call's answer in each language: its yes or no with any of its
    filler words ("sì grazie", "ja bitte") is that answer; a filler alone is
    none."""
    lexicon = LEXICONS[language]
    yes, no = sorted(lexicon.yes)[0], sorted(lexicon.no)[0]
    for filler in lexicon.fillers:
        assert read_answer(f"{yes} {filler}")[0] is Answer.YES, (yes, filler)
        assert read_answer(f"{filler} {no}")[0] is Answer.NO, (filler, no)
        assert read_answer(filler)[0] is Answer.OTHER, filler


def test_every_corpus_has_a_lexicon() -> None:
    """No corpus is left for a language the agent no longer has words for."""
    corpora = {path.stem.removeprefix("corpus_") for path in HERE.glob("corpus_*")}
    assert corpora == set(LEXICONS)


@pytest.mark.parametrize("language", sorted(LEXICONS))
def test_a_narration_is_held_from_its_first_words(language: str) -> None:
    """Every narration of a corpus holds a word the streaming check waits on
    (`NARRATION_TRIGGER`): streamed word by word, no narration is spoken;
    and every language has the openers whole (`NARRATION_OPENERS`)."""
    assert LEXICONS[language].opener_words, language
    for sentence in corpus(language)["narration"]["yes"]:
        assert NARRATION_TRIGGER.search(sentence), sentence
        check = SpokenCheck(
            lambda text: Withheld.NARRATION if narrates_call(text, NAMES) else None,
            NARRATION_TRIGGER,
            (*NARRATION_OPENERS, *NAMES),
        )
        spoken = "".join(check.feed(word + " ") for word in sentence.split())
        spoken += check.finish()
        assert check.reason is Withheld.NARRATION, sentence
        assert not narrates_call(spoken, NAMES), (sentence, spoken)


# The agent's own sentences that say something was not done or not found
# (`turn/say.py`): a judge, or the failed-action check, must read each as
# a failure in its own language.
AGENT_FAILURES = (
    "not_done",
    "nothing_done",
    "no_result",
    "could_not_find_out",
    "action_failed",
)


@pytest.mark.parametrize("language", sorted(LEXICONS))
def test_the_agents_own_failures_say_failed(language: str) -> None:
    """ "Mi dispiace, non l'ho fatto." is a failure in Italian as "Sorry, I
    didn't do that." is in English."""
    messages = json.loads(
        (TRANSLATIONS / f"{language}.json").read_text(encoding="utf-8")
    )["exceptions"]
    unread = [
        text
        for key in AGENT_FAILURES
        if not says_failed(text := messages[key]["message"].format(reason="x"))
    ]
    assert not unread, f"{language}: not read as failed: {unread}"
