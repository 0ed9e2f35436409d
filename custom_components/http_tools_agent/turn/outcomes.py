"""What became of a call, read from its result in the chat log.

Our tools' results carry their outcome (`tools/call_result.py`); results of
other APIs' tools (Assist's intents) are read from their structured data,
never from their wording.
"""

from __future__ import annotations

from collections.abc import Mapping

from homeassistant.components import conversation
from homeassistant.helpers import llm

# Named again here for `turn/reply.py`, which imports it from this module.
from ..tools.call_result import CallOutcome, CallResult

_NO_DEVICE_CODES = frozenset({"no_valid_targets", "no_intent_match"})
_NOT_UNDERSTOOD_ERRORS = frozenset({"InvalidSlotInfo", "MultipleInvalid", "Invalid"})


def outcome_of(result: llm.ToolResult) -> CallOutcome:
    """What became of the call whose result this is."""
    if isinstance(result, CallResult):
        return result.outcome
    data = result.data
    details = data.get("data")
    if not result.error and data.get("response_type") != "error":
        # An intent that ran, but not for every target ("Dim the kitchen
        # lights": the light took no color).
        if isinstance(details, dict) and failed_targets(details):
            return CallOutcome.FAILED
        return CallOutcome.DONE
    code = details.get("code") if isinstance(details, dict) else None
    if data.get("error") == "MatchFailedError" or code in _NO_DEVICE_CODES:
        return CallOutcome.NO_DEVICE
    if data.get("error") in _NOT_UNDERSTOOD_ERRORS:
        return CallOutcome.NOT_UNDERSTOOD
    return CallOutcome.FAILED


def failed_targets(details: Mapping[str, object]) -> list[str]:
    """The names of an intent's targets that failed (`IntentResponse`'s
    `failed`)."""
    failed = details.get("failed")
    if not isinstance(failed, list):
        return []
    return [
        str(target["name"])
        for target in failed
        if isinstance(target, dict) and target.get("name")
    ]


def content_outcome(content: conversation.ToolResultContent) -> CallOutcome:
    """`outcome_of` a chat log's tool result."""
    return outcome_of(content.result)


def own_speech(content: conversation.ToolResultContent) -> str | None:
    """The tool's own sentence of a call that succeeded, else None."""
    result = content.result
    if isinstance(result, CallResult) and result.outcome is CallOutcome.DONE:
        return result.speech
    return None


def succeeded(content: conversation.ToolResultContent) -> bool:
    """Whether the call ran and did what it was for."""
    return content_outcome(content) is CallOutcome.DONE
