"""What the agent reads out of a turn's results when the model did not put
them into words (common below 1B parameters), in the user's language: a
tool's own sentence, or what Home Assistant's agent says of an intent
("Turned on the lights."), said as it is; other results as words
(`engine/speakable.py`): "Berlin: clear, temperature 16 °C.", "3 items:
apples (3), bananas (6) and milk (1).", after a change "Done: eggs (1).".

Only what the request asked for is read: a change the request asks for, a
read whose values or tool the request names. The weather in London read
for "Tell everyone dinner is ready.", or Assist's overview of the house,
never is; after a change, the reads that led to it are no news.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
import re

from homeassistant.components import conversation
from homeassistant.helpers import llm

from ..engine.speakable import ENGLISH, ReadOutWords, joined, says_all, speakable
from ..small.answer import texts_of
from ..small.guards import asks_for, tool_act
from ..tools.call_result import RESULT_KEY
from .messages import this_turn, tool_result_text
from .named import removal_of
from .outcomes import own_speech, succeeded

type OwnSpeech = Callable[[conversation.ToolResultContent], str | None]

# Assist's overview of the house: what the model reads to act, never an
# answer of its own.
_CONTEXT_TOOLS = ("GetLiveContext",)


_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_SAID_WORD = re.compile(r"[^\W\d_]+")


def _asked(
    content: conversation.ToolResultContent,
    call: llm.ToolInput | None,
    question: str,
    read_only: frozenset[str],
) -> bool:
    """Whether the user's words ask for what this call gave. A change: its
    verb or another word of its name (`rules.asks_for`). A read: its
    text arguments are words of the request ("Madrid" for "How hot is it in
    Madrid?"), or a word of its name is ("list" for "What's on my shopping
    list?"); the weather in London read for "Tell everyone dinner is
    ready." is neither."""
    name = content.tool_name.rpartition("__")[2]
    if name in _CONTEXT_TOOLS:
        return False
    if content.tool_name not in read_only:
        return asks_for(content.tool_name, question)
    lowered = question.lower()
    texts = texts_of(call.tool_args) if call is not None else frozenset()
    if texts and all(text in lowered for text in texts):
        return True
    said = set(_SAID_WORD.findall(lowered))
    words = {w.lower() for w in _NAME_WORD.findall(name) if len(w) > 2}
    # A said word may also carry an ending of its own language ("liste",
    # "lista" for `list_items`).
    return any(
        w in said
        or f"{w}s" in said
        or w.rstrip("s") in said
        or (len(w) > 3 and any(s.startswith(w) for s in said))
        for w in words
    )


def _intent_words(data: Mapping[str, object], words: ReadOutWords) -> str | None:
    """An Assist intent's result with no sentence of its own: the names of
    what it acted on ("Kitchen Lights"), never its keys; None for other
    results."""
    details = data.get("data")
    if "response_type" not in data or not isinstance(details, dict):
        return None
    targets = details.get("success")
    names = [
        str(target["name"])
        for target in (targets if isinstance(targets, list) else ())
        if isinstance(target, dict) and target.get("name")
    ]
    return joined(list(dict.fromkeys(names)), words)


def _plain_change(
    chat_log: conversation.ChatLog,
    content: conversation.ToolResultContent,
    calls: Mapping[str, llm.ToolInput],
    listers: Mapping[str, str] | None,
) -> tuple[str, dict[str, str]] | None:
    """A removal of an item the conversation read, or a message sent, as
    the agent says it; None for another change."""
    act = tool_act(content.tool_name)
    if act == "send":
        return "sent", {}
    call = calls.get(content.tool_call_id)
    if act != "delete" or call is None or not listers:
        return None
    name = removal_of(chat_log.content, call, listers)
    return ("removed", {"name": name}) if name else None


def _result_text(content: conversation.ToolResultContent) -> str:
    """What a result's read-out is made of: the tool's answer as the model
    reads it."""
    raw = content.result.data.get(RESULT_KEY)
    return raw if isinstance(raw, str) else tool_result_text(content.result)


def read_out_whole(content: conversation.ToolResultContent) -> bool:
    """Whether the read-out of a result says all the model could read in it
    (`speakable.says_all`): the weather in Berlin, a shopping list's names
    and counts; not a list of places with their coordinates."""
    return says_all(_result_text(content))


def results_in_words(
    chat_log: conversation.ChatLog,
    read_only: frozenset[str],
    request: str | None = None,
    *,
    speech: OwnSpeech = own_speech,
    words: ReadOutWords = ENGLISH,
    listers: Mapping[str, str] | None = None,
) -> tuple[str, dict[str, str]] | None:
    """This turn's successful results that the request asked for, as an
    answer, as a spoken message key and its placeholders; None when none
    did. The weather nobody asked for, or Assist's overview of the house,
    is never read out. `request`: what was asked, when the turn's words are
    only a yes to a held call; `speech`: a call's own sentence (the tool's,
    or Home Assistant's for an intent); `words`: the user's language's."""
    question, since = this_turn(chat_log)
    question = request if request is not None else question
    calls = {
        call.id: call
        for content in since
        if isinstance(content, conversation.AssistantContent)
        for call in content.tool_calls or ()
    }
    asked = [
        content
        for content in since
        if isinstance(content, conversation.ToolResultContent)
        and succeeded(content)
        and _asked(content, calls.get(content.tool_call_id), question, read_only)
    ]
    if not asked:
        return None
    changes = [content for content in asked if content.tool_name not in read_only]
    # One change said by what it did, not by its result's echo: "Removed
    # the bread." for `{"deleted": "7"}`, "Sent." for `{"received":
    # "Laundry is done."}`.
    if (
        len(changes) == 1
        and speech(changes[0]) is None
        and (plain := _plain_change(chat_log, changes[0], calls, listers))
    ):
        return plain
    sentences: list[str] = []
    texts: list[str] = []
    # "Done" is said of the changes: the reads that led to them are no news.
    for content in changes or asked:
        if (sentence := speech(content)) is not None:
            # The call's own sentence says it as a person would.
            if (said := sentence.rstrip(".")) not in sentences:
                sentences.append(said)
            continue
        text = _intent_words(content.result.data, words)
        if text is None:
            text = speakable(_result_text(content), words=words)
        if (spoken := text.strip()) and spoken not in texts:
            texts.append(spoken)
    said = " ".join(f"{sentence}." for sentence in sentences)
    result = "; ".join(texts).rstrip(".") + "." if texts else ""
    if changes and texts:
        done = ("tool_result_done", {"result": result})
    elif changes:
        done = ("done", {})
    elif texts:
        done = ("tool_result_only", {"result": result})
    else:
        done = ("tool_result_empty", {})
    if not sentences:
        return done
    key, placeholders = done
    if key in ("done", "tool_result_empty"):
        return "tool_result_only", {"result": said}
    return key, {"result": f"{placeholders['result']} {said}"}
