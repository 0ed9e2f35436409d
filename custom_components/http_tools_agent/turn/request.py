"""What one request of a turn sends the server.

A request carries the chat log as messages (`turn/messages.py`), shaped by
what the model is sent of earlier turns (`_shape_history`), the agent's
examples at the end of the system prompt, the history that fits the
server's context (`turn/context_fit.py`), `tool_choice` (`required` only on
the first round: after it the model must be free to answer), and the
agent's extra body with its thinking switch. The request for the answer
carries its instruction on the last result (`small/answer.py`); a request
asked again after a reply that was not spoken says why (`RETRY_NUDGES`).
For a model that reads images, the request after a round whose tools
answered images shows them (`_pictures_message`).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import TYPE_CHECKING, Any

from homeassistant.components import conversation
from openai.types.chat import (
    ChatCompletionContentPartImageParam,
    ChatCompletionContentPartParam,
    ChatCompletionContentPartTextParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.chat_completion_content_part_image_param import ImageURL
from openai.types.chat.completion_create_params import CompletionCreateParamsBase

from ..agent_options import ToolChoice, request_extra, thinking_fields
from ..engine.bodies import Picture
from ..server.client import Request
from ..server.info import KIND_LLAMA_CPP, KIND_LLAMA_CPP_PYTHON
from ..small.answer import answer_nudge
from ..tools.call_result import CallResult
from .context_fit import answer_reserve
from .examples import examples_text
from .honesty import Withheld
from .messages import chat_messages

if TYPE_CHECKING:
    from .state import Turn


class Ask(Enum):
    """What a request asks for."""

    ROUND = "round"  # the model's choice: calls or an answer
    # Small models, after a round's results: the answer, or more calls of a
    # tool the turn used for what the user named and the results leave out
    # (`small/answer.py` `MoreOf`).
    ANSWER = "answer"
    CLOSING = "closing"  # the answer; no call runs (`tool_choice: none`)
    # Once more after a reply that was not spoken (`turn/honesty.py`): it
    # narrated a call, claimed an action no tool did, restated the
    # instruction, or wrote a call that could not be read.
    RETRY = "retry"


# What the request after a withheld reply says (on its last message).
RETRY_NUDGES = {
    Withheld.NARRATION: (
        "You described a tool call instead of making it. If the request needs "
        "a tool, call it now; otherwise answer in plain words."
    ),
    Withheld.CLAIM: (
        "Nothing has been done yet: no tool that does it ran. Call the tool "
        "now, or say in plain words that you cannot."
    ),
    Withheld.INSTRUCTION: "Answer the user in plain words.",
    Withheld.NOT_SPEECH: "Answer the user in plain words, not JSON.",
    Withheld.UNREADABLE: (
        "Your tool call could not be read: it was not valid JSON. Write the "
        "call again as one valid JSON object, or answer in plain words."
    ),
    Withheld.RESULT: (
        "No tool ran: do not make up a result. Call the tool that gives it "
        "now, or say in plain words that you cannot."
    ),
}


def _with_instruction(
    message: ChatCompletionMessageParam, instruction: str
) -> ChatCompletionMessageParam:
    """The message with the agent's instruction after its text (the user's
    question or the last tool result: every chat template takes those)."""
    content = message.get("content")
    if message["role"] == "user" and isinstance(content, str):
        return ChatCompletionUserMessageParam(
            role="user", content=f"{content}\n\n{instruction}"
        )
    if message["role"] == "tool" and isinstance(content, str):
        return ChatCompletionToolMessageParam(
            role="tool",
            tool_call_id=message["tool_call_id"],
            content=f"{content}\n\n{instruction}",
        )
    return message


def tool_choice(turn: Turn, ask: Ask) -> ToolChoice:
    """`none` to close; `required` on the first round only."""
    if ask is Ask.CLOSING:
        return "none"
    if turn.options.tool_choice == "required" and turn.round > 0:
        return "auto"
    return turn.options.tool_choice


def response_format(schema: dict[str, Any], server_kind: str) -> Any:
    """An answer that fits `schema`, in the form the server reads:
    llama.cpp's servers (llama-server and llama-cpp-python) take
    `json_object` with a `schema`; OpenAI, vLLM and Ollama take OpenAI's
    `json_schema`."""
    if server_kind in (KIND_LLAMA_CPP, KIND_LLAMA_CPP_PYTHON):
        return {"type": "json_object", "schema": schema}
    return {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": schema},
    }


def build_request(turn: Turn, ask: Ask) -> Request:
    """The request `ask` sends now."""
    options = turn.options
    messages = _shape_history(
        chat_messages(turn.chat_log.content, turn.notes.note),
        turn.history_mode,
        options.history_turns,
        # A yes to a held call is no request of its own: the turn it
        # answers is sent whole with it (`turn/hold.py`).
        current_turns=2 if turn.confirmed_request is not None else 1,
    )
    _add_examples(turn, messages)
    if turn.images:
        _add_images(messages, turn.images)
    last = messages[-1]
    if (
        ask is Ask.ANSWER
        and turn.rules.answer_request
        and turn.gate.seen
        and last["role"] == "tool"
    ):
        # Small models: the instruction to answer, with the question again.
        # In the result itself: Mistral's and Qwen 3.5's templates refuse a
        # system message there, and Mistral's a user message after a result.
        messages[-1] = ChatCompletionToolMessageParam(
            role="tool",
            tool_call_id=last["tool_call_id"],
            content=f"{last['content']}\n\n{answer_nudge(turn.question)}",
        )
    if ask is Ask.RETRY and turn.retried is not None:
        messages[-1] = _with_instruction(messages[-1], RETRY_NUDGES[turn.retried])
    messages = _fit(turn, messages)
    # Last: the nudges stay on the last result, and the fit never leaves
    # the pictures out.
    pictures = _fresh_pictures(turn.chat_log.content) if turn.pictures else []
    if pictures:
        messages.append(_pictures_message(pictures))
    params = CompletionCreateParamsBase(
        model=options.model,
        messages=messages,
        temperature=options.temperature,
        max_tokens=options.max_tokens,
        user=turn.chat_log.conversation_id,
    )
    if turn.tools and not (turn.trimmed and turn.gate.seen):
        # Cut to fit, with results in: the model answers from them.
        params["tools"] = turn.tools
        params["tool_choice"] = tool_choice(turn, ask)
    if turn.structure is not None and (
        ask in (Ask.ANSWER, Ask.CLOSING) or not turn.tools
    ):
        # An AI task's structure, on a request for the answer (a round that
        # may call tools has none: a grammar would keep the model from
        # calling): the server writes only JSON that fits it. The 0.5B
        # model, asked for the data after reading the weather, wrote the
        # JSON schema itself without it.
        params["response_format"] = response_format(turn.structure, turn.server.kind)
    extra = request_extra(
        options.extra_body, thinking_fields(options.thinking, turn.server.kind)
    )
    return Request(params, extra, images=len(turn.images) + len(pictures))


def _add_images(
    messages: list[ChatCompletionMessageParam], images: tuple[str, ...]
) -> None:
    """A task's attachments go with its instructions (its first user
    message: a retry's note comes later), as image parts."""
    for index, message in enumerate(messages):
        if message["role"] == "user" and isinstance(
            text := message.get("content"), str
        ):
            parts: list[ChatCompletionContentPartParam] = [
                ChatCompletionContentPartTextParam(type="text", text=text)
            ]
            parts.extend(_image_part(url) for url in images)
            messages[index] = ChatCompletionUserMessageParam(role="user", content=parts)
            return


def _add_examples(turn: Turn, messages: list[ChatCompletionMessageParam]) -> None:
    """The agent's examples end the system prompt (its stable part)."""
    text = examples_text(
        turn.options.examples, turn.options.custom_examples, turn.schemas
    )
    first = messages[0] if messages else None
    if text and first is not None and first["role"] == "system":
        content = first.get("content")
        if isinstance(content, str):
            messages[0] = ChatCompletionSystemMessageParam(
                role="system", content=f"{content}\n\n{text}"
            )


def _fit(
    turn: Turn, messages: list[ChatCompletionMessageParam]
) -> list[ChatCompletionMessageParam]:
    """Leave the oldest turns out when the context is known to be short."""
    context = turn.context
    n_ctx = context.learned_n_ctx or turn.server.model(turn.options.model).context
    if n_ctx is None and not turn.drop_history:
        return messages
    budget = n_ctx - answer_reserve(n_ctx, turn.options.max_tokens) if n_ctx else 0
    messages = context.fit(
        turn.chat_log.conversation_id,
        messages,
        turn.tools,
        budget,
        drop_all=turn.drop_history,
    )
    return context.cut_results(messages, budget) if turn.trimmed else messages


def _shape_history(
    messages: Sequence[ChatCompletionMessageParam],
    mode: str,
    turns: int,
    *,
    current_turns: int = 1,
) -> list[ChatCompletionMessageParam]:
    """The messages with the earlier turns in the shape `mode` asks for; the
    last `current_turns` user turns are the turn being answered (two for a
    yes to a held call: the request and the yes).

    home-llm lets the user choose how many turns a small model remembers;
    here an agent's `history` setting chooses the shape (bench/RESULTS.md,
    P4m, has what each does to the follow-up turns):

    - `all`: every earlier turn as it happened, calls and results included;
    - `text`: earlier turns as the user's words and the answers only, without
      their calls and results (a small model copies the shape of what it sees);
    - `recent`: the last `history_turns` turns, whole;
    - `none`: only the question being answered.

    `profile` (the default) is `all` for a capable model and the measured best
    for a small one (`small/rules.py`, `Rules.history`). The system prompt and
    the turn being answered are always sent whole.
    """
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


def _image_part(url: str) -> ChatCompletionContentPartImageParam:
    """An image content part (`url`: a data URL or an address)."""
    return ChatCompletionContentPartImageParam(
        type="image_url", image_url=ImageURL(url=url)
    )


def _fresh_pictures(
    contents: Sequence[conversation.Content],
) -> list[tuple[str, Picture]]:
    """(tool name, picture) of the results the chat log ends with: the round
    the next request answers."""
    found: list[tuple[str, Picture]] = []
    for content in reversed(contents):
        if not isinstance(content, conversation.ToolResultContent):
            break
        result = content.result
        if isinstance(result, CallResult) and result.picture is not None:
            found.append((content.tool_name, result.picture))
    return found[::-1]


def _pictures_message(
    pictures: Sequence[tuple[str, Picture]],
) -> ChatCompletionUserMessageParam:
    """The user message that shows the model the round's images, each after
    the words that say which tool's result it is.

    A chat-completions tool message carries text only (OpenAI's API and the
    servers' chat templates), so the images of a round's results go in one
    user message after them, each an `image_url` part with a data URL
    (`data:image/jpeg;base64,…`), the way core's OpenAI and OpenRouter
    integrations send attachments. Only the request that answers those
    results carries them: once the model has replied (the chat log no longer
    ends with them), later requests and turns read the result's description
    (`image/jpeg, 48 KB`) as a model that cannot see does.
    """
    parts: list[ChatCompletionContentPartParam] = []
    for tool, picture in pictures:
        parts.append(
            ChatCompletionContentPartTextParam(
                type="text", text=f"The image the tool {tool} returned:"
            )
        )
        parts.append(_image_part(picture.data_url()))
    return ChatCompletionUserMessageParam(role="user", content=parts)
