"""What a turn's calls that change something did: done, or failed and why.

A call changes something unless its tool only reads (`llm.ToolAnnotations`:
GET/HEAD/OPTIONS/TRACE tools, Assist's state tools). A failed one (an HTTP
error, a request that never reached the service, an intent that matched no
device: its `outcomes.CallOutcome`) that no later call of the same tool made
good is said as failed, whatever the model writes (`entity.py`), with a
short reason in the user's language. A call the agent's rules refused, or
markup that was no call, is no action that failed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
import re

from homeassistant.components import conversation

from ..lexicon import alternatives, every
from ..tools.call_result import CallOutcome, CallResult
from .outcomes import content_outcome, failed_targets


@dataclass(frozen=True, slots=True)
class Failure:
    """Why an action did not happen: a spoken message key and placeholders,
    and the tool that failed."""

    reason: str
    placeholders: dict[str, str]
    tool: str = ""


@dataclass(frozen=True, slots=True)
class Actions:
    """The tools that changed something this turn, and what failed."""

    done: frozenset[str]
    failed: tuple[Failure, ...]


_REASONS = {
    CallOutcome.UNREACHABLE: "reason_unreachable",
    CallOutcome.NOT_SENT: "reason_not_sent",
    CallOutcome.SIGNED_OUT: "reason_signed_out",
    CallOutcome.NO_DEVICE: "reason_no_device",
    CallOutcome.NOT_UNDERSTOOD: "reason_not_understood",
    CallOutcome.FAILED: "reason_refused",
}


def failure_of(content: conversation.ToolResultContent) -> Failure | None:
    """Why a call that was made failed, or None when it did not (or was
    never made: refused by the agent's rules, or no call of a tool)."""
    outcome = content_outcome(content)
    if outcome is CallOutcome.DONE or not outcome.ran:
        return None
    details = content.result.data.get("data")
    if (
        outcome is CallOutcome.FAILED
        and isinstance(details, dict)
        and (names := failed_targets(details))
    ):
        return Failure("reason_failed_targets", {"names": ", ".join(names)})
    if outcome is CallOutcome.HTTP_ERROR:
        result = content.result
        status = result.status if isinstance(result, CallResult) else None
        return Failure("reason_http_status", {"status": str(status)})
    return Failure(_REASONS[outcome], {})


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
            or not content_outcome(content).ran
        ):
            continue
        failure = failure_of(content)
        if failure is None:
            done.add(content.tool_name)
            failed.pop(content.tool_name, None)  # a later call made it good
        else:
            failed[content.tool_name] = replace(failure, tool=content.tool_name)
    return Actions(frozenset(done), tuple(failed.values()))


# An answer that already says the action did not happen.
_SAYS_FAILED = re.compile(
    r"\b" + alternatives(every(lambda lex: lex.says_failed)) + r"\w*", re.IGNORECASE
)


def says_failed(text: str) -> bool:
    """Whether an answer says that something did not happen."""
    return bool(_SAYS_FAILED.search(text))
