"""What a model is sent of the conversation's earlier turns.

home-llm lets the user choose how many turns a small model remembers; here
an agent's `history` setting chooses the shape (bench/RESULTS.md, P4m, has
what each does to the follow-up turns):

- `all`: every earlier turn as it happened, calls and results included;
- `text`: earlier turns as the user's words and the answers only, without
  their calls and results (a small model copies the shape of what it sees);
- `recent`: the last `history_turns` turns, whole;
- `none`: only the question being answered.

`profile` (the default) is `all` for a capable model and the measured best
for a small one (`small/rules.py`, `Rules.history`). The system prompt and the turn being
answered are always sent whole (for a yes to a held call, the request it
answers too).
"""

from __future__ import annotations

from collections.abc import Sequence

from openai.types.chat import ChatCompletionMessageParam


def shape_history(
    messages: Sequence[ChatCompletionMessageParam],
    mode: str,
    turns: int,
    *,
    current_turns: int = 1,
) -> list[ChatCompletionMessageParam]:
    """The messages with the earlier turns in the shape `mode` asks for; the
    last `current_turns` user turns are the turn being answered (two for a
    yes to a held call: the request and the yes)."""
    if mode == "all":
        return list(messages)
    starts = [i for i, m in enumerate(messages) if m["role"] == "user"]
    starts = starts[: max(len(starts) - current_turns + 1, 1)]
    if len(starts) < 2:
        return list(messages)
    head = [m for m in messages[: starts[0]] if m["role"] == "system"]
    current = list(messages[starts[-1] :])
    earlier = [
        list(messages[start:end])
        for start, end in zip(starts, [*starts[1:], starts[-1]], strict=True)
        if start < starts[-1]
    ]
    if mode == "none":
        earlier = []
    elif mode == "recent":
        earlier = earlier[-turns:] if turns > 0 else []
    elif mode == "text":
        earlier = [words for turn in earlier if (words := _words_only(turn))]
    return head + [m for turn in earlier for m in turn] + current


def _words_only(
    turn: list[ChatCompletionMessageParam],
) -> list[ChatCompletionMessageParam]:
    """A turn as the question and its answer in words (none without one)."""
    question = turn[0]
    answers = [
        m
        for m in turn[1:]
        if m["role"] == "assistant"
        and not m.get("tool_calls")
        and isinstance(m.get("content"), str)
        and str(m.get("content")).strip()
    ]
    return [question, answers[-1]] if answers else []
