"""Rounds of a small model: thinking alone counts as no answer, `required`
holds on the first round only, and what the agent adds to each request
(thinking switch, extra body) reaches the server."""

from __future__ import annotations

from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import (
    CONF_EXTRA_BODY,
    CONF_MAX_TOKENS,
    CONF_STREAM,
    CONF_THINKING,
    CONF_TOOL_CHOICE,
)

from .kit import converse, load_integration, speech
from .said import said
from .servers import (
    QWEN_THINK_AND_CALL,
    FakeLLMServer,
    ToolEndpoint,
    chunk,
    completion,
    documented,
    sse,
    text_stream,
    tool_calls_stream,
    transcript,
)


def reasoning_only(*pieces: str, finish_reason: str = "stop") -> Any:
    """A streamed reply that holds only `reasoning_content` deltas: a thinking
    model behind a server whose parser swallowed the rest."""
    return sse(
        [
            chunk({"role": "assistant", "content": None}),
            *(chunk({"reasoning_content": p}) for p in pieces),
            chunk({}, finish_reason),
        ]
    )


@pytest.mark.usefixtures("setup_integration")
async def test_thinking_only_round_is_asked_again_without_streaming(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    setup_integration: MockConfigEntry,
) -> None:
    """Only reasoning, no words and no call: asked once more without
    streaming, where the call comes through (guide, section 7)."""
    llm_server.add(
        reasoning_only("The user wants the weather. ", "I will call get_weather."),
        completion(None, [("get_weather", {"city": "Rome"})], "tool_calls"),
        text_stream("Rome is sunny, 14 degrees."),
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == "Rome is sunny, 14 degrees."
    assert [r.get("stream", False) for r in llm_server.requests] == [True, False, True]
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]
    assert setup_integration.runtime_data.model_quirks["thinking_only_round"] == 1


@pytest.mark.usefixtures("setup_integration")
async def test_a_think_block_alone_is_no_answer_either(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """A `<think>` block in the content and nothing after it: the same."""
    llm_server.add(
        text_stream("<think>", "The user wants the weather.", "</think>\n\n"),
        completion("".join(QWEN_THINK_AND_CALL)),
        text_stream("Sunny in Rome."),
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == "Sunny in Rome."
    assert [r.get("stream", False) for r in llm_server.requests] == [True, False, True]
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]


@pytest.mark.usefixtures("setup_integration")
async def test_thinking_only_closing_round_is_asked_again(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """The closing request (after a reply that only repeated the call) that
    comes back with thinking alone is asked once more without streaming."""
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        reasoning_only("I have the result. ", "Rome is sunny."),
        completion("Rome is sunny and 14 degrees."),
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == "Rome is sunny and 14 degrees."
    assert [
        (r.get("tool_choice"), r.get("stream", False)) for r in llm_server.requests
    ] == [("auto", True), ("auto", True), ("none", True), ("none", False)]
    assert len(tool_endpoint.requests) == 1


@pytest.mark.usefixtures("setup_integration")
async def test_thinking_that_used_every_token_is_not_asked_again(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    setup_integration: MockConfigEntry,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Reasoning cut off by `max_tokens` would be cut off again: no second
    request; the log says what to change."""
    llm_server.add(
        reasoning_only("Let me think about this. " * 5, finish_reason="length")
    )

    result = await converse(hass, "Tell me a story")

    assert speech(result) == said("empty_answer")
    assert len(llm_server.requests) == 1
    assert "spent all 1024 tokens thinking" in caplog.text
    assert setup_integration.runtime_data.model_quirks["thinking_used_max_tokens"] == 1


@pytest.mark.parametrize(
    ("agent_options", "sent"),
    [
        ({CONF_THINKING: "off"}, {"chat_template_kwargs": {"enable_thinking": False}}),
        ({CONF_THINKING: "on"}, {"chat_template_kwargs": {"enable_thinking": True}}),
        ({CONF_THINKING: "auto"}, {}),
        (
            # The switch wins over the extra body's; its other keys stay.
            {
                CONF_THINKING: "off",
                CONF_EXTRA_BODY: {
                    "chat_template_kwargs": {"enable_thinking": True, "x": 1},
                    "top_k": 20,
                },
            },
            {
                "chat_template_kwargs": {"enable_thinking": False, "x": 1},
                "top_k": 20,
            },
        ),
    ],
    ids=["off", "on", "auto", "with-extra-body"],
)
@pytest.mark.usefixtures("setup_integration")
async def test_thinking_switch_reaches_the_request(
    hass: HomeAssistant, llm_server: FakeLLMServer, sent: dict[str, Any]
) -> None:
    """llama.cpp and vLLM read `chat_template_kwargs.enable_thinking`."""
    llm_server.add(text_stream("Hi!"))

    await converse(hass, "Hello")

    (body,) = llm_server.requests
    assert {k: body[k] for k in ("chat_template_kwargs", "top_k") if k in body} == sent


@pytest.mark.parametrize(
    ("mode", "effort"), [("off", "none"), ("on", "medium"), ("auto", None)]
)
async def test_thinking_switch_on_ollama(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    config_entry: MockConfigEntry,
    mode: str,
    effort: str | None,
) -> None:
    """Ollama's `/v1` reads `reasoning_effort` (`none` is off), not
    `chat_template_kwargs`."""
    llm_server.models_reply = documented("ollama__models")
    llm_server.pages["GET /api/version"] = documented("ollama__version")
    llm_server.pages["POST /api/show"] = documented("ollama__show_qwen3")
    subentry = next(iter(config_entry.subentries.values()))
    hass.config_entries.async_update_subentry(
        config_entry, subentry, data={**subentry.data, CONF_THINKING: mode}
    )
    await load_integration(hass)
    llm_server.add(text_stream("Hi!"))

    await converse(hass, "Hello")

    (body,) = llm_server.requests
    assert body.get("reasoning_effort") == effort
    assert "chat_template_kwargs" not in body


@pytest.mark.parametrize(
    "agent_options",
    [
        {
            CONF_EXTRA_BODY: {
                "top_k": 20,
                "min_p": 0.05,
                "cache_prompt": True,
                "id_slot": 0,
                # Stored before these were refused, or written into storage by
                # hand: never sent.
                "messages": [],
                "stream": False,
                "tools": [],
            },
            CONF_STREAM: True,
        }
    ],
)
@pytest.mark.usefixtures("setup_integration")
async def test_extra_body_is_merged_but_cannot_replace_the_agents_fields(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """The extra fields reach every request; messages, tools and stream stay
    the agent's."""
    llm_server.add(
        transcript("llama-cpp-python__weather_stream"),
        text_stream("Sunny in Rome."),
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == "Sunny in Rome."
    for body in llm_server.requests:
        assert {k: body[k] for k in ("top_k", "min_p", "cache_prompt", "id_slot")} == {
            "top_k": 20,
            "min_p": 0.05,
            "cache_prompt": True,
            "id_slot": 0,
        }
        assert body["stream"] is True
        assert body["messages"][-1]["content"]
        assert [t["function"]["name"] for t in body["tools"]] == [
            "get_weather",
            "send_webhook",
            "GetDateTime",
        ]


@pytest.mark.parametrize("agent_options", [{CONF_TOOL_CHOICE: "required"}])
@pytest.mark.usefixtures("setup_integration")
async def test_required_on_the_first_round_only(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """`required` forces the first round's call; after it the model must be
    free to answer (else a compliant server loops until the rounds run out)."""
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        text_stream("Sunny in Rome."),
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == "Sunny in Rome."
    assert [r["tool_choice"] for r in llm_server.requests] == ["required", "auto"]


@pytest.mark.parametrize("agent_options", [{CONF_TOOL_CHOICE: "required"}])
async def test_an_answer_in_words_under_required_is_accepted(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    setup_integration: MockConfigEntry,
) -> None:
    """llama-cpp-python ignores `required`: the model's words are the answer
    (no loop), and diagnostics record it."""
    llm_server.add(transcript("llama-cpp-python__smalltalk_stream"))

    result = await converse(hass, "Hello, how are you?")

    assert speech(result).startswith("Hello!")
    assert len(llm_server.requests) == 1
    runtime = setup_integration.runtime_data
    assert runtime.model_quirks["required_answered_in_words"] == 1
    assert [e.kind for e in runtime.recent_errors] == ["required_answered_in_words"]


@pytest.mark.parametrize("agent_options", [{CONF_MAX_TOKENS: 64}])
@pytest.mark.usefixtures("setup_integration")
async def test_unstreamed_retry_sends_the_same_extra_fields(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """The re-ask without streaming is the same request, unstreamed."""
    llm_server.add(reasoning_only("Hmm."), completion("Hello!"))

    result = await converse(hass, "Hi")

    assert speech(result) == "Hello!"
    first, second = llm_server.requests
    assert {k: v for k, v in first.items() if k not in ("stream",)} == {
        k: v for k, v in second.items() if k not in ("stream",)
    }
