"""What the agent says itself, in the user's language: its messages, and
what ends a turn whose model did not answer, or whose answer is not true.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import re
from typing import TYPE_CHECKING, Any

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm, translation

from ..const import DOMAIN
from ..engine.confirm import Confirmation
from .changes import Failure, says_failed
from .honesty import Withheld, asks_for_action
from .messages import AgentWords
from .read_out import results_in_words

if TYPE_CHECKING:
    from .state import Turn


async def async_spoken_message(
    hass: HomeAssistant, language: str | None, key: str, placeholders: dict[str, str]
) -> str:
    """Return the `exceptions` translation `key` in `language` (English fallback)."""
    lookup = f"component.{DOMAIN}.exceptions.{key}.message"
    for lang in dict.fromkeys((language or hass.config.language, "en")):
        strings = await translation.async_get_translations(
            hass, lang, "exceptions", [DOMAIN]
        )
        if template := strings.get(lookup):
            try:
                return template.format(**placeholders)
            except KeyError, IndexError, ValueError:
                return template
    return key


async def async_spoken_error(
    hass: HomeAssistant, language: str | None, err: HomeAssistantError
) -> str:
    """Return a translated error of this integration in `language`."""
    if err.translation_domain == DOMAIN and err.translation_key:
        return await async_spoken_message(
            hass, language, err.translation_key, err.translation_placeholders or {}
        )
    return str(err)


def action_words(tool: str) -> str:
    """A tool's name as a person says it ("add item" for
    `http-tools__add_item`, "turn on" for `assist__intent__HassTurnOn`)."""
    name = tool.rpartition("__")[2].removeprefix("Hass")
    return " ".join(w.lower() for w in _NAME_WORD.findall(name)) or name


_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _argument_words(arguments: dict[str, Any]) -> str:
    """A call's arguments as a person reads them ("item id 3, name milk")."""
    return ", ".join(
        f"{' '.join(key.replace('-', '_').split('_'))} {value}"
        for key, value in arguments.items()
        if isinstance(value, (str, int, float)) and not isinstance(value, bool)
    )


async def async_confirm_question(
    hass: HomeAssistant,
    language: str | None,
    call: llm.ToolInput,
    confirmation: Confirmation,
    removes: str | None = None,
) -> str:
    """What the agent asks before a held call runs: the tool's own question
    filled with the call's arguments, else "Should I remove the bread?"
    for a call that `removes` an item read by its name, else one built from
    the tool's name and the arguments; for a tool with a PIN, how to give
    it."""
    question = confirmation.ask(call.tool_args)
    if question is None and removes is not None:
        question = await async_spoken_message(
            hass, language, "confirm_remove", {"name": removes}
        )
    if question is None:
        details = _argument_words(call.tool_args)
        question = await async_spoken_message(
            hass,
            language,
            "confirm_question" if details else "confirm_question_plain",
            {"action": action_words(call.tool_name), "details": details},
        )
    if confirmation.pin is None:
        return question
    how = await async_spoken_message(hass, language, "confirm_pin", {})
    return f"{question} {how}"


def agent_words(
    agent_id: str, text: str, history: str | None = None
) -> conversation.AssistantContent:
    """The agent's own words as chat log content: marked so, never sent to
    the model as words it wrote (`messages.AgentWords`); later requests
    carry `history` in their place."""
    return conversation.AssistantContent(
        agent_id=agent_id, content=text, native=AgentWords(history)
    )


@dataclass(frozen=True, slots=True)
class Said:
    """What the agent says: a message key and its placeholders, a failure
    whose reason fills `{reason}`, and what later requests carry in its
    place (None: the turn is left out of them if it made no call)."""

    key: str
    placeholders: dict[str, str] = field(default_factory=dict)
    failure: Failure | None = None
    history: str | None = None


async def async_words(hass: HomeAssistant, language: str | None, said: Said) -> str:
    """`said` in `language` (a failure's reason translated too)."""
    placeholders = dict(said.placeholders)
    if said.failure is not None:
        placeholders["reason"] = await async_spoken_message(
            hass, language, said.failure.reason, said.failure.placeholders
        )
    return await async_spoken_message(hass, language, said.key, placeholders)


def read_out(turn: Turn) -> Said | None:
    """The agent's read-out of this turn's results that the request asked
    for (`turn/read_out.py`); None when it asked for none of them."""
    result = results_in_words(
        turn.chat_log,
        turn.offered.read_only,
        turn.confirmed_request,
        speech=turn.own_speech,
        words=turn.read_out_words,
        listers=turn.offered.listers,
    )
    if result is None:
        return None
    key, placeholders = result
    return Said(key, placeholders, history=placeholders.get("result"))


def what_happened(turn: Turn) -> Said | None:
    """What the agent says to end a turn whose model did not answer, or
    whose answer is not true; None when the model's words stand.

    An action that failed is said as failed, whatever the model wrote; a
    question never gets an action's wording; a read-out is only of what
    the request asked for (`turn/read_out.py`)."""
    chat_log = turn.chat_log
    last = chat_log.content[-1]
    said = (
        last.content.strip()
        if isinstance(last, conversation.AssistantContent)
        and last.content
        and not isinstance(last.native, AgentWords)
        else ""
    )
    acts = turn.actions()
    if turn.verdict is not None and not acts.done:
        return Said(*turn.verdict)
    if acts.failed and not (said and says_failed(said)):
        failure = acts.failed[0]
        if acts.done:
            action = {"action": action_words(failure.tool)}
            return Said("action_partly_failed", action, failure)
        return Said("action_failed", {}, failure)
    if said and not turn.nothing_done:
        return None
    asked_action = asks_for_action(turn.question)
    result = read_out(turn)
    ran = turn.gate.ran > 0
    if turn.nothing_done:
        # A narration, a claim or a made-up result again, never the call:
        # nothing was done.
        if turn.retried is Withheld.RESULT or not asked_action:
            return Said("no_result" if not ran else "could_not_find_out")
        return Said("nothing_done" if not ran else "not_done")
    if result is not None and not (asked_action and not acts.done):
        # A model that ran tools but could not put their results into words
        # (even when its rounds ran out): the results are read.
        return result
    if not turn.unreadable and not any(
        isinstance(content, conversation.ToolResultContent)
        for content in turn.since_question
    ):
        return Said("empty_answer")  # no call was even tried
    if asked_action:
        # A change was asked for and none ran: never a read-out of other
        # results instead.
        return Said("nothing_done" if not ran else "not_done")
    return Said("could_not_find_out")
