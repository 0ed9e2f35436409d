"""Which checks each sentence of the next reply must pass before it is
spoken (`turn/honesty.py` has the checks themselves).

- a narrated call, while no call ran (every profile, tools offered);
- a claim that something was done, when the user asked for an action and
  no change ran (the small profile, and any profile once an action failed);
- the agent's own instruction restated (the small profile, after results);
- a made-up result in a turn in which no tool ran (the small profile): the
  form of an earlier result or answer with other values, a number about
  what a reading tool tells, or an earlier answer again for an action.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from homeassistant.components import conversation

from .honesty import (
    NARRATION_OPENERS,
    NARRATION_TRIGGER,
    SpokenCheck,
    Withheld,
    asks_for_action,
    claims_action,
    echoes_instruction,
    makes_up_result,
    narrates_call,
    tool_names_pattern,
)
from .messages import tool_result_text

if TYPE_CHECKING:
    from .state import Turn


def sentence_check(turn: Turn) -> SpokenCheck | None:
    """The check of the next reply's sentences, or None when none applies.
    Checked for narrations only (a capable model before its first call), a
    sentence is spoken as it comes until it holds a word a narration needs
    (`NARRATION_TRIGGER`): a plain answer is never held."""
    narration = bool(turn.tools) and not turn.gate.ran
    acts = turn.actions()
    question = turn.question
    claims = (
        (turn.rules.claims_need_calls or bool(acts.failed))
        and not acts.done
        and asks_for_action(question)
    )
    instruction = bool(turn.gate.seen) and turn.rules.answer_request
    results = turn.rules.results_need_calls and narration
    if not (narration or claims or instruction):
        return None
    names = tool_names_pattern(turn.schemas) if narration else None
    earlier = _earlier_results(turn.chat_log) if results else []
    # Asked for an action, an earlier answer said again is none.
    answered = (
        _earlier_answers(turn.chat_log, len(turn.since_question) + 1)
        if results and asks_for_action(question)
        else ""
    )
    domains = (
        [
            f"{tool['function']['name']}: {tool['function'].get('description', '')}"
            for tool in turn.tools
            if tool["function"]["name"] in turn.offered.read_only
        ]
        if results
        else []
    )

    def check(sentence: str) -> Withheld | None:
        if narration and narrates_call(sentence, names):
            return Withheld.NARRATION
        if claims and claims_action(sentence):
            return Withheld.CLAIM
        if instruction and echoes_instruction(sentence):
            return Withheld.INSTRUCTION
        if results and makes_up_result(sentence, question, earlier, domains):
            return Withheld.RESULT
        if answered and " ".join(sentence.lower().split()) in answered:
            return Withheld.RESULT
        return None

    if claims or instruction or results:
        return SpokenCheck(check)
    short_names = (tool["function"]["name"].rpartition("__")[2] for tool in turn.tools)
    return SpokenCheck(check, NARRATION_TRIGGER, (*NARRATION_OPENERS, *short_names))


def _earlier_results(chat_log: conversation.ChatLog) -> list[tuple[str, str]]:
    """Each earlier turn's question with each of its tools' results and the
    answers it got (a model copies either's form)."""
    found: list[tuple[str, str]] = []
    question = ""
    for content in chat_log.content:
        if isinstance(content, conversation.UserContent):
            question = content.content
        elif isinstance(content, conversation.ToolResultContent):
            found.append((question, tool_result_text(content.result)))
        elif isinstance(content, conversation.AssistantContent) and content.content:
            found.append((question, content.content))
    return found


def _earlier_answers(chat_log: conversation.ChatLog, since: int) -> str:
    """The earlier turns' answers, as words (lower-cased); `since`: how many
    contents at the end belong to this turn."""
    return " ".join(
        " ".join(content.content.lower().split())
        for content in chat_log.content[:-since]
        if isinstance(content, conversation.AssistantContent) and content.content
    )
