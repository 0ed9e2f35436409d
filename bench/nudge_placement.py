"""Where the closing request's instruction goes (P4 variants).

The agent adds "Answer the user's question now in plain text ..." to the
last tool result, or, where the server shows a chat template that takes
one (llama-server's `/props`), sends it as a user message after the result
(`template_probe`). These variants force one placement, for the benchmark
only: a message of its own (`user`, `system`) on any server, or the words
in the result (`result`) on llama-server too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

from custom_components.http_tools_agent import (
    server_info as server_info_module,
    turn as turn_module,
)
from custom_components.http_tools_agent.turn import CLOSING_NUDGE, Request, Turn


@contextmanager
def nudge_as_message(role: str) -> Iterator[None]:
    """Move the closing instruction out of the tool result into a `role`
    message after it (`result`: keep it in the result on every server)."""
    if role == "result":
        with mock.patch.object(
            server_info_module, "takes_user_after_tool", return_value=False
        ):
            yield
        return
    original = Turn.request

    def request(self: Turn, *, closing: bool) -> Request:
        built = original(self, closing=closing)
        messages: list[Any] = list(built.params["messages"])
        last = messages[-1]
        content = last.get("content")
        suffix = f"\n\n{CLOSING_NUDGE}"
        if closing and isinstance(content, str) and content.endswith(suffix):
            messages[-1] = {**last, "content": content.removesuffix(suffix)}
            messages.append({"role": role, "content": CLOSING_NUDGE})
            built.params["messages"] = messages
        return built

    with mock.patch.object(turn_module.Turn, "request", request):
        yield
