"""Turns through the conversation agent against a real OpenAI client and
scripted servers on loopback."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from homeassistant.core import HomeAssistant
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from syrupy.assertion import SnapshotAssertion

from custom_components.http_tools_agent.const import (
    CONF_CHAIN_CALLS,
    CONF_MAX_TOOL_ITERATIONS,
    CONF_PROFILE,
    CONF_STREAM,
    CONF_TOOLS,
    CONF_TOOLS_ENABLED,
)

from .kit import API_ID, converse, question, speech
from .markup import assert_clean
from .said import said
from .servers import (
    FakeLLMServer,
    Reply,
    ToolEndpoint,
    chunk,
    completion,
    error,
    sse,
    text_stream,
    tool_calls_stream,
    transcript,
)


@pytest.mark.usefixtures("setup_integration")
async def test_llama_cpp_python_text_call_then_answer(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    snapshot: SnapshotAssertion,
) -> None:
    """A bare JSON call in content (llama-cpp-python + Qwen) runs the tool."""
    llm_server.add(
        transcript("llama-cpp-python__weather_stream"),
        text_stream("It is sunny in Rome, ", "14 degrees."),
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == "It is sunny in Rome, 14 degrees."
    assert [(r.method, r.path) for r in tool_endpoint.requests] == [
        ("GET", "/weather/Rome")
    ]
    first, second = llm_server.requests
    assert first["tool_choice"] == "auto"
    # The HTTP tools, and the date and time on request (no clock in the prompt).
    assert [t["function"]["name"] for t in first["tools"]] == [
        "get_weather",
        "send_webhook",
        "GetDateTime",
    ]
    assert first["stream"] is True
    # The standard round trip: the call as structured tool_calls, then the
    # engine's text as the tool message.
    assistant, tool = second["messages"][-2:]
    assert assistant["role"] == "assistant"
    call = assistant["tool_calls"][0]
    assert call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == {"city": "Rome"}
    assert tool == {
        "role": "tool",
        "tool_call_id": call["id"],
        "content": "Rome: ☀️ +14°C",
    }
    # Everything after the system prompt, and the tools (the minute the
    # question was asked is checked by `question` and left out).
    assert {
        "messages": [
            {k: v for k, v in m.items() if k != "tool_calls"}
            | ({"content": question(m)} if m["role"] == "user" else {})
            | (
                {"tool_calls": [{"function": c["function"]} for c in m["tool_calls"]]}
                if "tool_calls" in m
                else {}
            )
            | ({"tool_call_id": "<id>"} if "tool_call_id" in m else {})
            for m in second["messages"][1:]
        ],
        "tools": second["tools"],
        "tool_choice": second["tool_choice"],
    } == snapshot


@pytest.mark.parametrize(
    ("second_round", "answer"),
    [
        # After its result, a small model repeats the call: not run again.
        (transcript("llama-server__second_round_stream"), "Rome is sunny, 14 degrees."),
        # llama-cpp-python's second round repeats the call and echoes the
        # result as JSON.
        (
            transcript("llama-cpp-python__second_round_stream"),
            "It is sunny in Rome, 14 degrees.",
        ),
        # A small model answers the tool result with the result's JSON.
        (
            text_stream('{"id": "4", ', '"name": "bread", "qty": 1}'),
            "Bread is on your list.",
        ),
    ],
    ids=["repeated-call", "echoed-result", "json-restating-the-result"],
)
@pytest.mark.parametrize(
    "agent_options", [{CONF_PROFILE: "small", CONF_CHAIN_CALLS: "on"}]
)
@pytest.mark.usefixtures("setup_integration")
async def test_a_round_without_words_leads_to_the_answer(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    chat_contents: list[dict[str, Any]],
    second_round: Reply,
    answer: str,
) -> None:
    """A second round that only repeats the call or restates the result as
    JSON is neither run nor spoken: the agent asks plainly for the answer."""
    llm_server.add(
        transcript("llama-cpp-python__weather_stream"),
        second_round,
        text_stream(answer),
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == answer
    assert len(tool_endpoint.requests) == 1
    assert len(llm_server.requests) == 3
    # The closing request still describes the tools but forbids calls; it
    # sends the conversation as it stands (nothing is added to the result).
    assert llm_server.requests[2]["tool_choice"] == "none"
    assert llm_server.requests[2]["messages"] == llm_server.requests[1]["messages"]
    # What the chat shows: neither the call nor the JSON.
    assert all("{" not in (c.get("content") or "") for c in chat_contents)
    shown = "".join(c.get("content") or "" for c in chat_contents)
    assert_clean(shown)


@pytest.mark.usefixtures("setup_integration")
async def test_no_words_for_the_result_reads_the_result(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """The tool ran but the model never answers in words: the user hears the
    result, not silence and not JSON."""
    llm_server.add(
        tool_calls_stream(("send_webhook", {"message": "laundry done"})),
        text_stream('{"ok": true}'),
        text_stream('{"status": "sent"}'),
    )

    result = await converse(hass, "Tell the house the laundry is done")

    # The service's echo is no news: the message went.
    assert speech(result) == said("sent")
    assert [r.path for r in tool_endpoint.requests] == ["/hook"]


@pytest.mark.usefixtures("setup_integration")
async def test_no_words_for_two_results_reads_both(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Two calls in one round, then silence: the user hears both results (a
    failed third call is left out), not only the last one."""
    llm_server.add(
        tool_calls_stream(
            ("get_weather", {"city": "Rome"}),
            ("get_weather", {"city": "Paris"}),
            ("get_time", {}),
        ),
        text_stream(""),
        completion(""),
        text_stream(""),
        completion(""),
    )

    result = await converse(hass, "Weather in Rome and Paris?")

    assert speech(result) == "Rome: +14°C; Paris: +14°C."
    assert len(tool_endpoint.requests) == 2


async def two_cities_turn(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    calls: Reply,
) -> list[dict[str, Any]]:
    """Run "Palermo and Turin" with `calls` as the first reply; both requests
    must reach the tool server. Return the messages of the second request."""
    llm_server.add(calls, text_stream("Both sunny."))

    result = await converse(hass, "Weather in Palermo and Turin?")

    assert speech(result) == "Both sunny."
    assert sorted(r.path for r in tool_endpoint.requests) == [
        "/weather/Palermo",
        "/weather/Turin",
    ]
    messages: list[dict[str, Any]] = llm_server.requests[1]["messages"]
    return messages


@pytest.mark.usefixtures("setup_integration")
async def test_structured_parallel_calls(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    snapshot: SnapshotAssertion,
) -> None:
    """vLLM/OpenAI structured streamed calls, two in one round (Palermo, Turin)."""
    messages = await two_cities_turn(
        hass,
        llm_server,
        tool_endpoint,
        tool_calls_stream(
            ("get_weather", {"city": "Palermo"}), ("get_weather", {"city": "Turin"})
        ),
    )
    # Both ran; each call goes back in its own assistant message followed by
    # its result (Llama 3's chat templates refuse two calls in one message).
    assert [
        (m["role"], [c["id"] for c in m.get("tool_calls", [])], m.get("content"))
        for m in messages[-4:]
    ] == [
        ("assistant", ["call_0_get_weather"], ""),
        ("tool", [], "Palermo: ☀️ +14°C"),
        ("assistant", ["call_1_get_weather"], ""),
        ("tool", [], "Turin: ☀️ +14°C"),
    ]
    assert [m.get("tool_call_id") for m in messages[-3::2]] == [
        "call_0_get_weather",
        "call_1_get_weather",
    ]
    # The whole round trip after the system prompt (without the minute).
    assert [
        {**m, "content": question(m)} if m["role"] == "user" else m
        for m in messages[1:]
    ] == snapshot


@pytest.mark.usefixtures("setup_integration")
async def test_empty_streamed_round_is_asked_again_without_streaming(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """A parser that swallows the call on the SSE path: re-ask once, unstreamed."""
    llm_server.add(
        sse([chunk({"role": "assistant", "content": ""}), chunk({}, "stop")]),
        completion(None, [("get_weather", {"city": "Rome"})], "tool_calls"),
        text_stream("Sunny in Rome."),
    )

    result = await converse(hass, "What's the weather in Rome?")

    assert speech(result) == "Sunny in Rome."
    assert [r.get("stream", False) for r in llm_server.requests] == [True, False, True]
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]


@pytest.mark.usefixtures("setup_integration")
async def test_normal_turn_makes_no_extra_request(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """Small talk: one request, streamed, spoken as it came."""
    llm_server.add(transcript("llama-cpp-python__smalltalk_stream"))

    result = await converse(hass, "Hello, how are you?")

    assert (
        speech(result) == "Hello! I'm doing well, thank you for asking. How about you?"
    )
    assert len(llm_server.requests) == 1
    assert result.continue_conversation is True


@pytest.mark.parametrize("extra_options", [{CONF_TOOLS: []}])
@pytest.mark.usefixtures("setup_integration")
async def test_no_tools_configured_sends_no_tools(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """`tools_enabled: auto` with no tool: no tools and no tool_choice sent."""
    llm_server.add(text_stream("Hi!"))

    result = await converse(hass, "Hello")

    assert speech(result) == "Hi!"
    assert "tools" not in llm_server.requests[0]
    assert "tool_choice" not in llm_server.requests[0]


@pytest.mark.parametrize("extra_options", [{CONF_TOOLS_ENABLED: "off"}])
@pytest.mark.usefixtures("setup_integration")
async def test_tools_switched_off(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """`tools_enabled: off` never offers the tools, though they are configured."""
    llm_server.add(text_stream("No tools today."))

    await converse(hass, "What's the weather in Rome?")

    assert "tools" not in llm_server.requests[0]


@pytest.mark.parametrize("extra_options", [{CONF_MAX_TOOL_ITERATIONS: 2}])
@pytest.mark.usefixtures("setup_integration")
async def test_rounds_run_out_the_user_hears_the_last_result(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """A model that keeps calling: two rounds, a closing request (asked once
    more without streaming when it comes back empty), then the turn's
    results read out (Qwen2.5-0.5B with one round: 3 of 10 weather answers
    were "I used all 1 tool rounds" with the weather right there)."""
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        tool_calls_stream(("get_weather", {"city": "Milan"})),
        sse([chunk({"role": "assistant", "content": ""}), chunk({}, "stop")]),
        completion(""),
    )

    result = await converse(hass, "Weather everywhere")

    assert speech(result) == "Rome: +14°C; Milan: +14°C."
    assert len(tool_endpoint.requests) == 2
    assert [
        (r.get("tool_choice"), r.get("stream", False)) for r in llm_server.requests
    ] == [("auto", True), ("auto", True), ("none", True), ("none", False)]


@pytest.mark.parametrize("extra_options", [{CONF_MAX_TOOL_ITERATIONS: 2}])
@pytest.mark.usefixtures("setup_integration")
async def test_rounds_run_out_on_errors_the_user_hears_why(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Rounds that ended in errors leave nothing to read: the agent says it
    could not find out (a question), in words a person would say."""
    llm_server.add(
        tool_calls_stream(("get_time", {"city": "Rome"})),
        tool_calls_stream(("get_time", {"city": "Milan"})),
        text_stream(""),
        completion(""),
    )

    result = await converse(hass, "Time everywhere")

    assert speech(result) == said("could_not_find_out")
    assert tool_endpoint.requests == []


@pytest.mark.usefixtures("setup_integration")
async def test_unknown_tool_is_an_error_the_model_reads(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """A call to a tool that does not exist is answered with the error text the model can act on."""
    llm_server.add(
        tool_calls_stream(("get_time", {"city": "Rome"})),
        text_stream("Sorry, I can't tell the time."),
    )

    result = await converse(hass, "What time is it in Rome?")

    assert speech(result) == "Sorry, I can't tell the time."
    assert tool_endpoint.requests == []
    assert (
        llm_server.requests[1]["messages"][-1]["content"]
        == "Error: unknown tool 'get_time'"
    )


@pytest.mark.usefixtures("setup_integration")
async def test_tool_http_error_is_text_for_the_model(
    hass: HomeAssistant,
    llm_server: FakeLLMServer,
    tool_endpoint: ToolEndpoint,
    config_entry: MockConfigEntry,
) -> None:
    """A failing endpoint gives `Error: HTTP 500 — …` to the model, not a crash."""
    failing = {
        "name": "fail",
        "description": "Always fails.",
        "url": f"{tool_endpoint.url}/fail",
        "method": "GET",
    }
    hass.config_entries.async_update_entry(
        config_entry, options={CONF_TOOLS: [failing]}
    )
    await hass.async_block_till_done()
    llm_server.add(
        tool_calls_stream(("fail", {})),
        text_stream("The service is down."),
    )

    result = await converse(hass, "Try it")

    assert speech(result) == "The service is down."
    assert llm_server.requests[1]["messages"][-1]["content"] == (
        "Error: HTTP 500 — backend exploded"
    )


def _cut(reply: Reply, at: int) -> Reply:
    reply.cut_after = at
    return reply


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            error(401, "Invalid API key", type_="auth"),
            said("invalid_auth"),
        ),
        (
            error(
                400,
                '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
            ),
            said(
                "server_error",
                status="400",
                message='"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set',
            ),
        ),
        (
            Reply(status=500, body=b"Internal Server Error", content_type="text/plain"),
            said("server_error", status="500", message="Internal Server Error"),
        ),
        (
            _cut(transcript("llama-server__smalltalk_stream"), 900),
            said("stream_interrupted"),
        ),
        (
            Reply(
                content_type="text/event-stream",
                body=b'data: {"id": "x", "choices": [{"index": 0, "delta": {"content": "Hel\n\n',
            ),
            said("malformed_response"),
        ),
    ],
    ids=["401", "400-vllm", "500", "cut-stream", "malformed-sse"],
)
@pytest.mark.usefixtures("setup_integration")
async def test_server_errors_are_spoken_and_next_turn_works(
    hass: HomeAssistant, llm_server: FakeLLMServer, reply: Reply, expected: str
) -> None:
    """Every LLM server failure becomes a readable, spoken error."""
    # The client retries a 5xx once, as it does a dropped connection.
    llm_server.add(reply, *([reply] if reply.status >= 500 else []))
    llm_server.add(text_stream("Back again."))

    result = await converse(hass, "Hello")

    assert result.response.response_type.value == "error"
    assert speech(result) == expected
    assert speech(await converse(hass, "Hello")) == "Back again."


async def test_server_down_is_spoken(
    hass: HomeAssistant, llm_server: FakeLLMServer, setup_integration: MockConfigEntry
) -> None:
    """Connection refused: the user hears that the server cannot be reached."""
    await llm_server.stop()

    result = await converse(hass, "Hello")

    assert speech(result).startswith("I can't reach the language model server")
    # Diagnostics keep the failure.
    (recent,) = setup_integration.runtime_data.recent_errors
    assert recent.kind == "llm"
    assert recent.message == speech(result)


@pytest.mark.usefixtures("setup_integration")
async def test_error_is_spoken_in_the_users_language(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """An Italian conversation hears the Italian message."""
    llm_server.add(error(401, "nope"))

    result = await converse(hass, "Ciao", language="it")

    assert speech(result) == said("invalid_auth", "it")


def _ollama_stream(*calls: tuple[str, dict[str, Any]]) -> Reply:
    """Ollama's `/v1` stream: each call whole, all at index 0, then `stop`."""
    chunks = [
        chunk(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"call_{n}",
                        "index": 0,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        for n, (name, args) in enumerate(calls)
    ]
    chunks.append(chunk({"role": "assistant", "content": ""}, "stop"))
    return sse(chunks)


@pytest.mark.usefixtures("setup_integration")
async def test_ollama_calls_all_at_index_zero(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Two whole calls sharing index 0, flushed on `stop`, are two calls."""
    messages = await two_cities_turn(
        hass,
        llm_server,
        tool_endpoint,
        _ollama_stream(
            ("get_weather", {"city": "Palermo"}), ("get_weather", {"city": "Turin"})
        ),
    )
    tool_messages = [m for m in messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_0", "call_1"]


@pytest.mark.usefixtures("setup_integration")
async def test_calls_with_empty_ids_get_ids(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """A server that sends `"id": ""` still gets a matching `tool_call_id`."""
    llm_server.add(
        sse(
            [
                chunk({"role": "assistant", "content": None}),
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "",
                                "type": "function",
                                "function": {
                                    "name": "get_weather",
                                    "arguments": '{"city": "Rome"}',
                                },
                            }
                        ]
                    }
                ),
                chunk({}, "stop"),
            ]
        ),
        text_stream("Sunny."),
    )

    await converse(hass, "Weather in Rome?")

    assistant, tool = llm_server.requests[1]["messages"][-2:]
    call_id = assistant["tool_calls"][0]["id"]
    assert call_id
    assert tool["tool_call_id"] == call_id
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]


@pytest.mark.usefixtures("setup_integration")
async def test_reasoning_is_never_spoken(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """`reasoning_content` deltas and `<think>` blocks stay out of the answer."""
    llm_server.add(
        sse(
            [
                chunk({"role": "assistant", "content": None}),
                chunk({"reasoning_content": "The user greets me. "}),
                chunk({"reasoning_content": "I greet back."}),
                chunk({"content": "<think>Still thinking."}),
                chunk({"content": "</think>Hello there!"}),
                chunk({}, "stop"),
            ]
        )
    )

    result = await converse(hass, "Hi")

    assert speech(result) == "Hello there!"


@pytest.mark.parametrize(
    "agent_options",
    [{CONF_STREAM: True}, {CONF_STREAM: False}],
    ids=["stream", "no-stream"],
)
@pytest.mark.usefixtures("setup_integration")
async def test_html_instead_of_json_is_a_readable_error(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """A web page where the API should be (a proxy, a wrong URL) is spoken as
    a malformed answer, never a stack trace."""
    page = Reply(content_type="text/html", body=b"<html><body>Login</body></html>")
    llm_server.add(page, page)

    result = await converse(hass, "Hello")

    assert speech(result) == said("malformed_response")


@pytest.mark.usefixtures("setup_integration")
async def test_stream_of_strings_is_a_readable_error(
    hass: HomeAssistant, llm_server: FakeLLMServer
) -> None:
    """`data: "text"` lines are no chunks: a readable error."""
    llm_server.add(
        Reply(
            content_type="text/event-stream",
            body=b'data: "Hello"\n\ndata: [DONE]\n\n',
        )
    )

    result = await converse(hass, "Hello")

    assert speech(result) == said("malformed_response")


@pytest.mark.parametrize(
    "agent_options",
    [{"llm_hass_api": [API_ID, "assist"]}],
)
@pytest.mark.usefixtures("setup_integration")
async def test_tools_of_merged_apis_answer_to_their_short_name(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """With Assist selected too, Home Assistant prefixes our tools with the
    API's name; a model that calls the short name still reaches the tool."""
    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Rome"})),
        text_stream("Sunny in Rome."),
    )

    result = await converse(hass, "Weather in Rome?")

    offered = [t["function"]["name"] for t in llm_server.requests[0]["tools"]]
    assert "http-tools__get_weather" in offered
    assert speech(result) == "Sunny in Rome."
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Rome"]


@pytest.mark.parametrize("agent_options", [{CONF_PROFILE: "small"}])
@pytest.mark.usefixtures("setup_integration")
async def test_calls_instead_of_the_answer_are_cut_short(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """Asked for the answer, a small model may write calls instead, one after
    the other (Qwen2.5-0.5B listed twenty cities so, 30 s on a CPU). On the
    request for the answer the first call that may not run (no city the user
    named) ends the reading, on the closing request the second; then the
    agent reads the result. The rest of those replies is never waited for."""
    call = '{"name": "get_weather", "arguments": {"city": "%s"}}\n'
    never = asyncio.Event()

    def cities(*names: str, hold_before: int) -> Any:
        return text_stream(
            *(call % name for name in names),
            hold_before_piece=hold_before,
            hold_until=never.wait,
        )

    llm_server.add(
        tool_calls_stream(("get_weather", {"city": "Madrid"})),
        cities("Paris", "Berlin", hold_before=1),
        cities("Oslo", "Paris", "Berlin", hold_before=2),
    )

    async with asyncio.timeout(10):  # the held rests would take 40 s
        result = await converse(hass, "How warm is it in Madrid and in Rome?")

    never.set()  # let the server's handlers end
    assert speech(result) == "Madrid: +14°C."
    assert [r.path for r in tool_endpoint.requests] == ["/weather/Madrid"]
    assert [r["tool_choice"] for r in llm_server.requests] == ["auto", "auto", "none"]


@pytest.mark.usefixtures("setup_integration")
async def test_a_reply_looping_on_a_call_is_cut_short(
    hass: HomeAssistant, llm_server: FakeLLMServer, tool_endpoint: ToolEndpoint
) -> None:
    """After the result, a small model may write the same call again and
    again until `max_tokens` (Qwen2.5-0.5B on llama-server: 25 s on a CPU).
    At its second repeat the agent stops reading and asks for the answer;
    the rest of that reply is never waited for."""
    call = '{"name": "get_weather", "arguments": {"city": "Rome"}}\n'
    never = asyncio.Event()
    llm_server.add(
        text_stream(call),
        text_stream(call, call, call, call, hold_before_piece=2, hold_until=never.wait),
        text_stream("It is sunny in Rome, 14 degrees."),
    )

    async with asyncio.timeout(10):  # the held rest would take 20 s
        result = await converse(hass, "What's the weather in Rome?")

    never.set()  # let the server's handler end
    assert speech(result) == "It is sunny in Rome, 14 degrees."
    assert len(tool_endpoint.requests) == 1
    assert llm_server.requests[2]["tool_choice"] == "none"
