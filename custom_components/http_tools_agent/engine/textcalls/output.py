"""What the text-call filter releases: speakable text, thinking, the calls
found in the text (`TextCall`) and the problems of those it could not read."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class TextCall:
    """One tool call found in the text."""

    name: str  # resolved tool name (as written when it resolves to nothing)
    arguments: dict[str, Any]


@dataclass(slots=True)
class FilterOutput:
    """What one step of the filter released."""

    text: str = ""  # speakable text
    thinking: str = ""  # text from inside <think>...</think>
    calls: list[TextCall] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # each "Error: ..."
    # What a scanner held back from speech (JSON echoing a tool result); it is
    # in ``thinking`` too.
    held: str = ""
    repaired: int = 0  # of ``calls``, those read from near-JSON
    # The reply ran off inside a call (`bare_json.MAX_CALL_CHARS`): the
    # filter reads nothing more of it, and the caller may stop reading.
    stopped: bool = False
    # A `</think>` came with no `<think>`: the prompt opened the thinking
    # (a template that starts the reply inside `<think>`).
    unopened_think: bool = False

    def extend(self, other: FilterOutput) -> None:
        """Append ``other`` (a later step) to this output."""
        self.text += other.text
        self.thinking += other.thinking
        self.held += other.held
        self.repaired += other.repaired
        self.stopped = self.stopped or other.stopped
        self.unopened_think = self.unopened_think or other.unopened_think
        self.calls.extend(other.calls)
        self.problems.extend(other.problems)
