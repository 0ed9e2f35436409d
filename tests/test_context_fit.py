"""A request never outgrows the server's context: the oldest turns are left
out (never the system prompt, the question or this turn's calls and
results); a server's context error leads to one retry with less history.

The server answers are real captures: llama.cpp's `/props` and its
`exceed_context_size_error`, llama-cpp-python's empty stream and
`context_length_exceeded`."""

from __future__ import annotations

from itertools import pairwise
import logging
from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import CONF_MAX_TOKENS, CONF_PROFILE

from .kit import converse, load_integration, question, speech
from .said import said
from .servers import (
    FakeLLMServer,
    ToolEndpoint,
    error,
    server_check,
    text_stream,
    tool_calls_stream,
)

LONG = "Tell me about the weather in Rome. " * 30  # ~1000 characters


async def chat(
    hass: HomeAssistant, llm_server: FakeLLMServer, turns: int
) -> str | None:
    """`turns` long exchanges in one conversation; return its id."""
    conversation_id = None
    for n in range(turns):
        llm_server.add(text_stream(f"Answer {n}."))
        result = await converse(hass, f"{n}: {LONG}", conversation_id=conversation_id)
        assert speech(result) == f"Answer {n}."
        conversation_id = result.conversation_id
    return conversation_id


def questions(body: dict[str, Any]) -> list[str]:
    """The user messages of a request, by their turn number."""
    return [question(m).split(":")[0] for m in body["messages"] if m["role"] == "user"]


@pytest.mark.parametrize(
    "agent_options", [{CONF_MAX_TOKENS: 256, CONF_PROFILE: "capable"}]
)
async def test_known_context_leaves_the_oldest_turns_out(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    config_entry: MockConfigEntry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """llama.cpp says `n_ctx: 2048`: a long conversation keeps its newest
    turns; the start it keeps stays the same from turn to turn."""
    llm_server.models_reply = server_check("llama-server-smollm2__models")
    llm_server.pages["GET /props"] = server_check("llama-server-smollm2__props")
    await load_integration(hass)
    caplog.set_level(logging.INFO)

    await chat(hass, llm_server, 8)

    sent = [questions(body) for body in llm_server.requests]
    assert sent[0] == ["0"]
    # Each request ends with its own question; the system prompt stays first.
    assert all(s[-1] == str(n) for n, s in enumerate(sent))
    assert all(b["messages"][0]["role"] == "system" for b in llm_server.requests)
    # Later requests left the oldest turns out, in steps: two requests in a
    # row start at the same turn, so the server's prompt cache is reused.
    assert sent[-1][0] != "0"
    assert any(a[0] == b[0] and len(b) == len(a) + 1 for a, b in pairwise(sent))
    # What fits: 2048 tokens minus the 256 kept for the answer, estimated at
    # 3 characters a token.
    for body in llm_server.requests:
        chars = len(str(body["messages"])) + len(str(body.get("tools")))
        assert chars / 3 < 2048 - 256
    assert "oldest of" in caplog.text


@pytest.mark.parametrize(
    "agent_options", [{CONF_MAX_TOKENS: 256, CONF_PROFILE: "capable"}]
)
async def test_this_turns_calls_and_results_are_kept(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    config_entry: MockConfigEntry,
) -> None:
    """Trimming never cuts into the turn being answered."""
    llm_server.models_reply = server_check("llama-server-smollm2__models")
    llm_server.pages["GET /props"] = server_check("llama-server-smollm2__props")
    await load_integration(hass)
    conversation_id = await chat(hass, llm_server, 6)
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        text_stream("Sunny."),
    )

    await converse(hass, "And in Rome?", conversation_id=conversation_id)

    last = llm_server.requests[-1]["messages"]
    assert [m["role"] for m in last[-3:]] == ["user", "assistant", "tool"]
    assert question(last[-3]) == "And in Rome?"
    assert last[-1]["content"] == "Rome: ☀️ +14°C"
    assert len(questions(llm_server.requests[-1])) < 7


async def test_llama_cpp_python_context_error_is_retried_with_less_history(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    setup_integration: MockConfigEntry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """llama-cpp-python (`--n_ctx 512`) sends an empty stream, then refuses
    the request unstreamed; its error gives the size: the request goes once
    more with the history that fits."""
    caplog.set_level(logging.INFO)
    conversation_id = await chat(hass, llm_server, 3)
    llm_server.add(
        server_check("llama-cpp-python-smollm2__context_exceeded_stream"),
        server_check("llama-cpp-python-smollm2__context_exceeded_nostream"),
        text_stream("Hello again!"),
    )

    result = await converse(hass, "Hello", conversation_id=conversation_id)

    assert speech(result) == "Hello again!"
    *_, streamed, unstreamed, retried = llm_server.requests
    assert [r.get("stream", False) for r in (streamed, unstreamed, retried)] == [
        True,
        False,
        True,
    ]
    assert questions(unstreamed) == ["0", "1", "2", "Hello"]
    assert questions(retried) == ["Hello"]
    assert retried["messages"][0]["role"] == "system"
    assert "longer than the server's context (512 tokens)" in caplog.text
    quirks = setup_integration.runtime_data.model_quirks
    assert quirks["context_overflow"] == 1


async def test_llama_server_context_error_is_retried(
    hass: HomeAssistant, llm_server: FakeLLMServer, setup_integration: MockConfigEntry
) -> None:
    """llama.cpp refuses with `exceed_context_size_error` (`n_ctx: 2048`,
    `n_prompt_tokens: 3235`): retried once, streamed as before."""
    conversation_id = await chat(hass, llm_server, 3)
    llm_server.add(
        server_check("llama-server-smollm2__context_exceeded_stream"),
        text_stream("Fine."),
    )

    result = await converse(hass, "How are you?", conversation_id=conversation_id)

    assert speech(result) == "Fine."
    *_, refused, retried = llm_server.requests
    assert refused["stream"] is True
    assert retried["stream"] is True
    assert questions(retried)[-1] == "How are you?"


async def test_a_context_error_without_a_size_drops_all_history(
    hass: HomeAssistant, llm_server: FakeLLMServer, setup_integration: MockConfigEntry
) -> None:
    """An OpenAI-style error that gives no size: every earlier turn is left
    out of the retry."""
    conversation_id = await chat(hass, llm_server, 2)
    refusal = error(400, "Too long.")
    refusal.body = (
        b'{"error": {"message": "Too long.", "type": "invalid_request_error", '
        b'"code": "context_length_exceeded"}}'
    )
    llm_server.add(refusal, text_stream("Short now."))

    result = await converse(hass, "Again?", conversation_id=conversation_id)

    assert speech(result) == "Short now."
    assert questions(llm_server.requests[-1]) == ["Again?"]


async def test_a_question_that_never_fits_ends_in_a_sentence(
    hass: HomeAssistant, llm_server: FakeLLMServer, setup_integration: MockConfigEntry
) -> None:
    """Even the question alone does not fit: after one retry the agent says
    so in its own words, never the server's error."""
    refusal = server_check("llama-server-smollm2__context_exceeded_stream")
    llm_server.add(refusal, refusal)

    result = await converse(hass, LONG)

    assert speech(result) == said("context_too_long")
    assert "exceeds" not in speech(result)
    assert len(llm_server.requests) == 2


CAPABLE = [{CONF_PROFILE: "capable"}]
# A weather service whose answer is too long for the model's context.
LONG_CITY = "Rome" + " and more Rome" * 300


@pytest.mark.parametrize("agent_options", CAPABLE)
async def test_a_result_too_long_is_cut_and_answered(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    setup_integration: MockConfigEntry,
) -> None:
    """The request carrying a long result is refused twice: the third sends
    the result cut (saying so) and no tools, and the model answers from it."""
    refusal = server_check("llama-server-smollm2__context_exceeded_stream")
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": LONG_CITY})),
        refusal,
        refusal,
        text_stream("Sunny in Rome."),
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == "Sunny in Rome."
    called, refused, _, cut = llm_server.requests
    assert "tools" in called
    assert "tools" in refused
    assert "tools" not in cut
    full = refused["messages"][-1]["content"]
    short = cut["messages"][-1]["content"]
    assert cut["messages"][-1]["role"] == "tool"
    assert short.startswith(full[:100])
    assert len(short) < len(full)
    assert short.endswith("did not fit the model's context]")
    assert len(tool_endpoint.requests) == 1  # the call ran once


@pytest.mark.parametrize("agent_options", CAPABLE)
async def test_a_result_that_never_fits_ends_in_a_sentence(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    setup_integration: MockConfigEntry,
) -> None:
    """Cut, it is still refused: the agent's sentence, not the server's."""
    refusal = server_check("llama-server-smollm2__context_exceeded_stream")
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": LONG_CITY})),
        refusal,
        refusal,
        refusal,
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == said("context_too_long")
    assert len(llm_server.requests) == 4
