"""A reply's structured `tool_calls`, assembled from the server's deltas.

A streamed call comes in pieces by `index` (its id and name first, then its
arguments a few characters at a time); a whole answer has each call
complete. When the reply ends (or the server says it finished) each call
goes to the call gate: its arguments parsed as one JSON object, or, when
they are not one, an `Error: …` result the model reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
from typing import Any

from .calls import ReplyCalls


def text_of(value: object) -> str:
    """A text field of the answer (`null` and other types count as none)."""
    return value if isinstance(value, str) else ""


@dataclass(slots=True)
class _PartialCall:
    """A structured tool call being assembled from stream deltas."""

    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass(slots=True)
class StructuredCalls:
    """The calls of one reply being assembled, in arrival order."""

    _partial: dict[int, _PartialCall] = field(default_factory=dict)
    # The server's `index` -> the call it is currently filling.
    _slots: dict[int, int] = field(default_factory=dict)

    def add_delta(self, tool_call: dict[str, Any]) -> None:
        """One streamed piece of a call."""
        index = tool_call.get("index")
        index = index if isinstance(index, int) else 0
        call_id = text_of(tool_call.get("id"))
        slot = self._slots.get(index)
        partial = self._partial.get(slot) if slot is not None else None
        if partial is None or (
            # Some servers (Ollama) send every call whole with index 0: a new
            # id on a call that already has a name starts the next call.
            call_id and partial.id and partial.name and call_id != partial.id
        ):
            slot = len(self._partial)
            self._slots[index] = slot
            partial = self._partial[slot] = _PartialCall()
        if call_id:
            partial.id = call_id
        if isinstance(function := tool_call.get("function"), dict):
            partial.name += text_of(function.get("name"))
            partial.arguments += text_of(function.get("arguments"))

    def add_whole(self, tool_call: dict[str, Any]) -> None:
        """A call of an answer that was not streamed."""
        if isinstance(function := tool_call.get("function"), dict):
            self._partial[len(self._partial)] = _PartialCall(
                text_of(tool_call.get("id")),
                text_of(function.get("name")),
                text_of(function.get("arguments")),
            )

    def flush(self, gate: ReplyCalls) -> None:
        """The calls assembled so far, to the gate."""
        for index in sorted(self._partial):
            partial = self._partial[index]
            name = partial.name
            try:
                arguments = json.loads(partial.arguments) if partial.arguments else {}
            except (json.JSONDecodeError, RecursionError) as err:
                reason = err.msg if isinstance(err, json.JSONDecodeError) else str(err)
                error = f"Error: invalid JSON arguments for tool '{name}': {reason}"
                gate.unreadable(name, {}, error, partial.id)
                continue
            if not isinstance(arguments, dict):
                error = f"Error: arguments for tool '{name}' must be a JSON object"
                gate.unreadable(name, {}, error, partial.id)
                continue
            gate.offer(name, arguments, partial.id)
        self._partial.clear()
        self._slots.clear()
