"""What a turn's calls that change something did: done, or failed and why.

A call changes something unless its tool only reads (`llm.ToolAnnotations`:
GET/HEAD/OPTIONS/TRACE tools, Assist's state tools). A failed one (an HTTP
error, a request that never reached the service, an intent that matched no
device) that no later call of the same tool made good is said as failed,
whatever the model writes (`entity.py`), with a short reason in the user's
language.
"""

from __future__ import annotations

from dataclasses import dataclass
import re

from homeassistant.components import conversation

from .llm_api import RESULT_KEY

_HTTP_STATUS = re.compile(r"^Error: HTTP (\d{3})")
# Calls the agent answered without running them: refused by its rules
# (`call_policy`, `small_model`) or of no offered tool. The model reads why;
# they are no action the user asked for that failed.
_NOT_A_CALL = ("Error: not run", "Error: unknown tool", "Error: invalid JSON")


@dataclass(frozen=True, slots=True)
class Failure:
    """Why an action did not happen: a spoken message key and placeholders."""

    reason: str
    placeholders: dict[str, str]


@dataclass(frozen=True, slots=True)
class Actions:
    """The tools that changed something this turn, and what failed."""

    done: frozenset[str]
    failed: tuple[Failure, ...]


def not_a_call(content: conversation.ToolResultContent) -> bool:
    """Whether the agent answered the call without running it."""
    text = content.result.data.get(RESULT_KEY)
    return isinstance(text, str) and text.startswith(_NOT_A_CALL)


def failure_of(content: conversation.ToolResultContent) -> Failure | None:
    """Why a call that ran failed, or None when it did not."""
    data = content.result.data
    text = data.get(RESULT_KEY)
    if isinstance(text, str):
        if not text.startswith("Error:"):
            return None
        if (status := _HTTP_STATUS.match(text)) is not None:
            return Failure("reason_http_status", {"status": status[1]})
        if text.startswith("Error: tool request failed"):
            return Failure("reason_unreachable", {})
        return Failure("reason_refused", {})
    if not content.result.error and data.get("response_type") != "error":
        return None
    details = data.get("data")
    code = details.get("code") if isinstance(details, dict) else None
    if data.get("error") == "MatchFailedError" or code in (
        "no_valid_targets",
        "no_intent_match",
    ):
        return Failure("reason_no_device", {})
    if data.get("error") in ("InvalidSlotInfo", "MultipleInvalid", "Invalid"):
        return Failure("reason_not_understood", {})
    return Failure("reason_refused", {})


def turn_actions(
    since_question: list[conversation.Content], read_only: frozenset[str]
) -> Actions:
    """What the calls of this turn (the content after its question) that
    change something did."""
    done: set[str] = set()
    failed: dict[str, Failure] = {}
    for content in since_question:
        if (
            not isinstance(content, conversation.ToolResultContent)
            or content.tool_name in read_only
            or not_a_call(content)
        ):
            continue
        failure = failure_of(content)
        if failure is None:
            done.add(content.tool_name)
            failed.pop(content.tool_name, None)  # a later call made it good
        else:
            failed[content.tool_name] = failure
    return Actions(frozenset(done), tuple(failed.values()))


# An answer that already says the action did not happen.
_SAYS_FAILED = re.compile(
    r"\b(?:can(?:no|')t|could(?: not|n't)|unable|failed|did(?: not|n't)|"
    r"was(?: not|n't)|not (?:able|possible|found)|no (?:device|entity)|error|"
    r"non (?:posso|riesco|sono riuscit|ho potuto|è stat|trovo)|errore|"
    r"no (?:puedo|pude|he podido|se pudo|encontr)|error)\w*",
    re.IGNORECASE,
)


def says_failed(text: str) -> bool:
    """Whether an answer says that something did not happen."""
    return bool(_SAYS_FAILED.search(text))
