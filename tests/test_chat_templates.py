"""The requests the agent sends, rendered by the real chat templates of the
model families users run: every template accepts them, and where the
template allows it each request's prompt starts with the previous one's, so
the server's prompt cache keeps the work it did."""

from __future__ import annotations

import os
from typing import Any

from homeassistant.core import HomeAssistant
from jinja2 import TemplateError
import pytest

from custom_components.http_tools_agent.const import (
    CONF_CHAIN_CALLS,
    CONF_HISTORY,
    CONF_PROFILE,
)

from .chat_templates import FAMILIES, render
from .kit import converse, speech
from .servers import FakeLLMServer, text_stream, tool_calls_stream, transcript

# The requests of one conversation (see `conversation_requests`).
REQUESTS = (
    "text call",
    "after the result",
    "closing request",
    "two calls",
    "after two results",
    "third turn",
)
# Consecutive requests of the conversation whose prompts should extend
# each other: the server then re-reads only what is new.
CHAIN = (
    ("text call", "after the result"),
    ("after the result", "two calls"),
    ("two calls", "after two results"),
    ("after two results", "third turn"),
)
# Where a template itself rewrites earlier parts of the prompt, not ours to
# fix (measured with the requests below): Mistral's templates put the tools
# (Nemo also the system prompt) into the newest user message; Qwen 3.5
# renders a reply that called tools differently once a newer turn follows;
# Gemma 4's generation prompt opens a thought channel that the history does
# not repeat (26 characters).
REWRITTEN_BY_TEMPLATE: dict[str, set[tuple[str, str]]] = {
    "qwen3.5": {CHAIN[1], CHAIN[3]},
    "mistral-nemo": set(CHAIN),
    "mistral-small-3.2": {CHAIN[1], CHAIN[3]},
    "gemma4": {CHAIN[0], CHAIN[2]},
}


def tail(before: str, after: str) -> int:
    """How many characters at the end of `before` that `after` does not repeat."""
    # Character by character is what is wanted here, not paths.
    return len(before) - len(os.path.commonprefix([before, after]))  # noqa: RUF071


@pytest.fixture
def agent_options() -> dict[str, Any]:
    """The small-model rules, calls after results allowed (the Qwen 0.5B
    model these transcripts come from runs as small), every earlier turn
    sent (the small profile sends none by default): what a cached prompt
    has to survive."""
    return {CONF_PROFILE: "small", CONF_CHAIN_CALLS: "on", CONF_HISTORY: "all"}


@pytest.fixture
async def conversation_requests(
    hass: HomeAssistant, setup_integration: Any, llm_server: FakeLLMServer
) -> dict[str, dict[str, Any]]:
    """Three turns of one conversation, as real servers answered them.

    1. llama-cpp-python + Qwen: a call as bare JSON; after the result the
       model repeats the call, so the agent sends the closing request.
    2. Two structured calls in one reply (vLLM/OpenAI style), then the answer.
    3. Small talk.
    """
    llm_server.add(
        transcript("llama-cpp-python__weather_stream"),
        transcript("llama-cpp-python__second_round_stream"),
        text_stream("It is sunny in Rome, 14 degrees."),
        # vLLM and llama.cpp give Mistral models ids of 9 letters and digits.
        tool_calls_stream(
            ("get_weather", {"city": "Paris"}),
            ("get_weather", {"city": "Oslo"}),
            ids=("Kq3Zp9XbA", "Wm7Rt2YcE"),
        ),
        text_stream("Paris and Oslo are sunny."),
        text_stream("You're welcome!"),
    )
    first = await converse(hass, "What's the weather in Rome?")
    assert speech(first) == "It is sunny in Rome, 14 degrees."
    later = first.conversation_id
    second = await converse(hass, "And in Paris and Oslo?", conversation_id=later)
    assert speech(second) == "Paris and Oslo are sunny."
    third = await converse(hass, "Thanks!", conversation_id=later)
    assert speech(third) == "You're welcome!"
    assert len(llm_server.requests) == len(REQUESTS)
    return dict(zip(REQUESTS, llm_server.requests, strict=True))


@pytest.mark.parametrize("family", FAMILIES)
async def test_every_template_accepts_the_requests(
    family: str, conversation_requests: dict[str, dict[str, Any]]
) -> None:
    """No template refuses a request: tool call ids of 9 letters and digits
    (Mistral), one call per assistant message (Llama 3), the request to
    answer inside the last tool result (no late system or user message)."""
    for name, body in conversation_requests.items():
        try:
            prompt = render(family, body)
        except TemplateError as err:
            pytest.fail(f"{family} refuses the {name!r} request: {err}")
        assert "What's the weather in Rome?" in prompt


@pytest.mark.parametrize("family", FAMILIES)
async def test_each_prompt_extends_the_one_before(
    family: str, conversation_requests: dict[str, dict[str, Any]]
) -> None:
    """The server only re-reads what is new in each request: the system
    prompt holds no clock, earlier turns are sent exactly as before."""
    rendered = {
        name: render(family, body) for name, body in conversation_requests.items()
    }
    rewritten = {pair for pair in CHAIN if tail(rendered[pair[0]], rendered[pair[1]])}
    assert rewritten == REWRITTEN_BY_TEMPLATE.get(family, set())


@pytest.mark.parametrize("family", FAMILIES)
async def test_the_closing_request_rereads_nothing(
    family: str, conversation_requests: dict[str, dict[str, Any]]
) -> None:
    """The closing request sends the conversation as it stands (only its
    `tool_choice` differs): the server has read its whole prompt already."""
    before = render(family, conversation_requests["after the result"])
    closing = render(family, conversation_requests["closing request"])
    assert tail(before, closing) == 0
