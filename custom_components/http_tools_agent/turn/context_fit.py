"""Keep each request within the server's context.

A server started with `-c 2048` refuses (llama.cpp, vLLM, llama-cpp-python)
or silently cuts (Ollama) a prompt longer than its context, and a long
conversation gets there. When the context is known (`info`, or from a
server's context error), the oldest turns of the history are left out of the
request: never the system prompt, never the question being answered nor the
calls and results of its turn. What is left out is logged.

When even the turn alone does not fit (a long result), the next request cuts
its tool results to what fits and, with results in, offers no tools: the
model answers from what it read. A third context error ends the turn in the
agent's own sentence, never the server's error.

Tokens are estimated from characters, calibrated by what the server reports
(`usage.prompt_tokens`, or the counts in its context error). History is left
out in steps, down to three quarters of the budget, and the point where it
starts is kept per conversation, so the following turns send the same start
(the server's prompt cache keeps working) until the next step.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from openai.types.chat import (
    ChatCompletionMessageParam,
    ChatCompletionToolMessageParam,
)

from ..const import LOGGER
from ..server.client import request_chars

# Characters per token before the server has said anything: low, so the
# estimate errs towards dropping (English ~4, JSON ~3).
START_CHARS_PER_TOKEN = 3.0
# A reported ratio is trusted with this margin.
SAFETY = 0.9
LOW_WATER = 0.75
# A result cut for a context of unknown size keeps this much; none keeps less.
CUT_UNKNOWN = 1000
CUT_LEAST = 200
CUT_NOTE = " [cut: the rest did not fit the model's context]"
MAX_CONVERSATIONS = 256


@dataclass(slots=True)
class ContextWindow:
    """One agent's view of its server's context (shared by its turns)."""

    # The context the server reported in an error, when it has no probe.
    learned_n_ctx: int | None = None
    chars_per_token: float = START_CHARS_PER_TOKEN
    # Conversation -> how many of its oldest turns are left out.
    _dropped: OrderedDict[str, int] = field(default_factory=OrderedDict)

    def calibrate(self, chars: int, prompt_tokens: object) -> None:
        """The server read `prompt_tokens` tokens for `chars` characters."""
        if isinstance(prompt_tokens, int) and prompt_tokens > 0 and chars > 0:
            ratio = chars / prompt_tokens * SAFETY
            self.chars_per_token = min(max(ratio, 1.0), 6.0)

    def tokens(self, messages: Sequence[Any], tools: Sequence[Any]) -> int:
        """Estimated prompt tokens of a request."""
        return int(request_chars(messages, tools) / self.chars_per_token) + 1

    def fit(
        self,
        conversation_id: str,
        messages: list[ChatCompletionMessageParam],
        tools: Sequence[Any],
        budget: int,
        *,
        drop_all: bool = False,
    ) -> list[ChatCompletionMessageParam]:
        """The messages with the oldest turns left out until they fit `budget`
        tokens (`drop_all`: every earlier turn)."""
        head = messages[:1] if messages and messages[0]["role"] == "system" else []
        turns = _turns(messages[len(head) :])
        if len(turns) < 2:
            return messages
        earlier = len(turns) - 1  # the last turn is the one being answered
        dropped = min(self._dropped.get(conversation_id, 0), earlier)
        if drop_all:
            dropped = earlier

        def kept(n: int) -> list[ChatCompletionMessageParam]:
            return head + [m for turn in turns[n:] for m in turn]

        if self.tokens(kept(dropped), tools) > budget:
            while dropped < earlier and self.tokens(kept(dropped), tools) > (
                budget * LOW_WATER
            ):
                dropped += 1
        if dropped > self._dropped.get(conversation_id, 0):
            self._remember(conversation_id, dropped)
            LOGGER.info(
                "Left the %d oldest of %d turns (%d messages) of conversation %s "
                "out of the request to fit the model's context (~%d tokens)",
                dropped,
                len(turns),
                sum(len(t) for t in turns[:dropped]),
                conversation_id,
                budget,
            )
        return kept(dropped)

    def cut_results(
        self, messages: list[ChatCompletionMessageParam], budget: int
    ) -> list[ChatCompletionMessageParam]:
        """The messages with each tool result cut to its share of what is
        left of `budget` tokens (0: the size is unknown)."""
        results = [i for i, m in enumerate(messages) if m["role"] == "tool"]
        if not results:
            return messages
        if budget:
            others = request_chars([m for m in messages if m["role"] != "tool"], ())
            room = budget * LOW_WATER * self.chars_per_token - others
            limit = max(CUT_LEAST, int(room / len(results)))
        else:
            limit = CUT_UNKNOWN
        cut = list(messages)
        for index in results:
            message = cut[index]
            content = message.get("content")
            if (
                message["role"] == "tool"
                and isinstance(content, str)
                and len(content) > limit
            ):
                cut[index] = ChatCompletionToolMessageParam(
                    role="tool",
                    tool_call_id=message["tool_call_id"],
                    content=content[:limit] + CUT_NOTE,
                )
        return cut

    def _remember(self, conversation_id: str, dropped: int) -> None:
        self._dropped[conversation_id] = dropped
        self._dropped.move_to_end(conversation_id)
        while len(self._dropped) > MAX_CONVERSATIONS:
            self._dropped.popitem(last=False)


def _turns(
    messages: list[ChatCompletionMessageParam],
) -> list[list[ChatCompletionMessageParam]]:
    """Messages grouped by turn: each starts at a user message."""
    turns: list[list[ChatCompletionMessageParam]] = []
    for message in messages:
        if message["role"] == "user" or not turns:
            turns.append([])
        turns[-1].append(message)
    return turns


def answer_reserve(n_ctx: int, max_tokens: int) -> int:
    """Tokens kept free for the answer.

    llama-cpp-python refuses a prompt whose length plus `max_tokens` passes
    the context; llama.cpp only the prompt. Half the context at most.
    """
    return min(max_tokens, n_ctx // 2)
