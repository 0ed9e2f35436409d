"""What became of each tool call of a turn, as a type carried with its result.

Every result this integration puts in the chat log is a `CallResult`: the
model reads its text, the agent decides by its `outcome` (what is said,
what failed, what counts as done). The turn reads other APIs' results into
the same outcomes (`turn/outcomes.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from homeassistant.helpers import llm

from ..engine.bodies import Picture
from ..engine.executor import Outcome as RequestOutcome, ToolRunResult

RESULT_KEY = "result"


class CallOutcome(StrEnum):
    """What became of one call."""

    DONE = "done"  # it ran and its service (or Home Assistant) said yes
    HTTP_ERROR = "http_error"  # the service answered with an error status
    UNREACHABLE = "unreachable"  # the request got no answer
    NOT_SENT = "not_sent"  # invalid arguments, or a host the policy refuses
    # Not sent: the user must sign in (again) to the tool's service.
    SIGNED_OUT = "signed_out"
    # A rule of the agent did not let it run (a change nobody asked for, a
    # call copied from a result, over the turn's limit, an id nobody read).
    REFUSED = "refused"
    # Held for the user's yes (`turn/hold.py`): not run in this turn.
    HELD = "held"
    # No call of an offered tool: an unknown name, or call markup that
    # could not be read.
    NOT_A_CALL = "not_a_call"
    # Home Assistant's intent found no such device.
    NO_DEVICE = "no_device"
    # Home Assistant could not use the intent's slots.
    NOT_UNDERSTOOD = "not_understood"
    FAILED = "failed"  # another API's tool failed in another way

    @property
    def ran(self) -> bool:
        """Whether the call was made (it reached its tool or service)."""
        return self not in (
            CallOutcome.REFUSED,
            CallOutcome.HELD,
            CallOutcome.NOT_A_CALL,
        )


_FROM_REQUEST = {
    RequestOutcome.DONE: CallOutcome.DONE,
    RequestOutcome.HTTP_ERROR: CallOutcome.HTTP_ERROR,
    RequestOutcome.UNREACHABLE: CallOutcome.UNREACHABLE,
    RequestOutcome.NOT_SENT: CallOutcome.NOT_SENT,
    RequestOutcome.SIGNED_OUT: CallOutcome.SIGNED_OUT,
}


@dataclass(slots=True, kw_only=True)
class CallResult(llm.ToolResult):
    """A tool result with what became of the call."""

    outcome: CallOutcome = CallOutcome.DONE
    # The service's HTTP status, when it answered.
    status: int | None = None
    # The tool's own sentence over its result (`speech`), when it has one:
    # kept beside what the model reads, never in it.
    speech: str | None = None
    # The answer's image, for a model that reads images: sent with the next
    # request only (`turn/request.py`); the text describes it.
    picture: Picture | None = None

    @classmethod
    def of_run(cls, run: ToolRunResult) -> CallResult:
        """The result of one HTTP tool run."""
        return cls(
            data={RESULT_KEY: run.text},
            error=not run.ok,
            outcome=_FROM_REQUEST[run.outcome],
            status=run.status,
            speech=run.speech if run.ok else None,
            picture=run.picture,
        )

    @classmethod
    def not_run(cls, text: str, outcome: CallOutcome) -> CallResult:
        """A call the agent answered without running it (`text`: what the
        model reads)."""
        return cls(data={RESULT_KEY: text}, error=True, outcome=outcome)
