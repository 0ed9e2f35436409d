"""What the model reads of a call the gate does not run (`turn/calls.py`):
each says it did not run and what to do instead, so the model can go on.
"""

from __future__ import annotations


def over_budget_error(limit: int) -> str:
    """What the model reads for a call over the turn's limit."""
    return (
        f"Error: not run: this turn already made {limit} tool calls, the limit. "
        "Answer with the results you have."
    )


# What the model reads of a held call: it did not run, the agent asks.
HELD_TEXT = (
    "Not run yet: the user is asked to confirm this call; it runs after their yes."
)
NO_ONE_TO_ASK_ERROR = (
    "Error: not run: this call needs the user's confirmation, and no one "
    "can be asked here. Say that it needs a yes through the conversation agent."
)
ONE_HELD_ERROR = (
    "Error: not run: another call already waits for the user's confirmation."
)


def untrusted_id_error(value: str, lister: str | None) -> str:
    """What the model reads for a change whose id it read nowhere."""
    then = (
        f"Call {lister} to find the item's id, then use it."
        if lister
        else "Use an id a tool's result gave."
    )
    return f"Error: not run: the id '{value}' was not read from any result. {then}"
