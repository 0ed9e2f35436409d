"""What a turn's replies made the agent make up for, counted in the entry's
diagnostics (`HttpToolsRuntime.record_quirk`): calls over the limit,
unasked changes, invented places and filters, ids nothing vouched for,
near-JSON mended, runaway replies, thinking-only rounds, calls copied from
results, and `required` answered in words."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..runtime import HttpToolsRuntime
    from .reply import Reply
    from .state import Turn


def note_required_answered(runtime: HttpToolsRuntime, turn: Turn, reply: Reply) -> None:
    """The server does not enforce `required` (llama-cpp-python, small
    models): the words are the answer, not a reason to loop."""
    if turn.options.tool_choice == "required" and reply.text.strip():
        runtime.record_quirk(
            "required_answered_in_words",
            "The model answered in words although tool_choice is "
            "required (the server does not enforce it)",
        )


def note_quirks(runtime: HttpToolsRuntime, reply: Reply) -> None:
    """Count what the agent made up for in `reply`."""
    counts = reply.gate.counts
    for quirk, count in (
        ("calls_over_the_limit", counts["over_budget"]),
        ("unasked_change", counts["unasked"]),
        ("invented_place", counts["invented_places"]),
        ("invented_filter", counts["invented_filters"]),
        ("untrusted_id", counts["untrusted"]),
        ("near_json_repaired", reply.repaired),
        ("runaway_cut", reply.ran_away),
        ("thinking_only_round", reply.empty and bool(reply.thinking.strip())),
    ):
        if count:
            runtime.record_quirk(quirk)
    if counts["copied"]:
        runtime.record_quirk(
            "call_copied_from_result",
            "A call written in a tool's result was not run",
        )
