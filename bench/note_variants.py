"""Where the note of the time a question was asked goes (P4 variants).

Our agent keeps the system prompt byte-identical from turn to turn (the
server's prompt cache) by moving Home Assistant's clock line into each user
message, before the question: "Current time is 21:05. Today's date is
2026-11-30.\\n\\n<question>". These variants move or reword that note, for
the benchmark only, to see what a small model makes of it (small talk such
as "Thank you!" answered with the time).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from unittest import mock

from homeassistant.components import conversation
from openai.types.chat import ChatCompletionMessageParam

from custom_components.http_tools_agent import openai_format, turn as turn_module

type Note = Callable[[conversation.UserContent], str]
type Placement = Callable[[str, str], str]

PLACEMENTS: dict[str, Placement] = {
    # The question, then the note in brackets.
    "after": lambda question, note: f"{question}\n\n({note})",
    # Before the question, marked as context rather than speech.
    "bracketed": lambda question, note: f"[{note}]\n{question}",
}


@contextmanager
def note_placement(name: str) -> Iterator[None]:
    """Build user messages with the note placed as `PLACEMENTS[name]` says."""
    place = PLACEMENTS[name]

    def chat_messages(
        contents: Sequence[conversation.Content], note: Note
    ) -> list[ChatCompletionMessageParam]:
        notes = [note(c) for c in contents if isinstance(c, conversation.UserContent)]
        messages = openai_format.chat_messages(contents, lambda _content: "")
        users = iter(notes)
        result: list[ChatCompletionMessageParam] = []
        for message in messages:
            if message["role"] == "user" and (text := next(users, "")):
                content: Any = message["content"]
                result.append({"role": "user", "content": place(str(content), text)})
            else:
                result.append(message)
        return result

    with mock.patch.object(turn_module, "chat_messages", chat_messages):
        yield
