"""Where the request for the answer's instruction goes (P4 variants).

The small profile adds "…answer the user's question now in plain text…" to
the last tool result (Mistral's and Qwen 3.5's templates refuse a system message
there, Mistral's a user message after a result). These variants send it as a
message of its own instead, for the benchmark only, to measure what the
placement costs a model whose template takes either (Qwen2.5).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from custom_components.http_tools_agent.server.client import Request
from custom_components.http_tools_agent.small.answer import ANSWER_NUDGE
from custom_components.http_tools_agent.turn import state as turn_module
from custom_components.http_tools_agent.turn.request import Ask
from custom_components.http_tools_agent.turn.state import Turn


@contextmanager
def nudge_as_message(role: str) -> Iterator[None]:
    """Move the instruction to answer out of the tool result into a `role`
    message after it."""
    original = Turn.request

    def request(self: Turn, ask: Ask = Ask.ROUND) -> Request:
        built = original(self, ask)
        messages: list[Any] = list(built.params["messages"])
        last = messages[-1]
        content = last.get("content")
        if (
            ask is Ask.ANSWER
            and isinstance(content, str)
            and content.endswith(ANSWER_NUDGE)
        ):
            # The instruction is the result's last paragraph.
            result, _, instruction = content.rpartition("\n\n")
            messages[-1] = {**last, "content": result}
            messages.append({"role": role, "content": instruction})
            built.params["messages"] = messages
        return built

    with mock.patch.object(turn_module.Turn, "request", request):
        yield
