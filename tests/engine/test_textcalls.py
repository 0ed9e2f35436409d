"""Golden tests for tool calls written as text and the streaming filter."""

from __future__ import annotations

from typing import Any

import pytest

from custom_components.http_tools_agent.engine.textcalls import (
    FilterOutput,
    TextCall,
    TextCallFilter,
    ToolNames,
)
from custom_components.http_tools_agent.engine.textcalls.coercion import coerce_value
from tests.markup import assert_no_markup

from .textcall_cases import (
    CASE_TOOLS,
    CASES,
    ECHO_THINKING,
    EXPECTED,
    NOSTREAM,
    TOOLS,
    TRANSCRIPTS,
)
from .textcall_run import filter_reply, filter_stream


def as_pairs(calls: list[TextCall]) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.arguments) for c in calls]


# --- real transcripts ---------------------------------------------------------


def test_every_capture_is_read_and_expected() -> None:
    """The captures come from the fixtures; each has its expected outcome."""
    assert set(TRANSCRIPTS) == set(EXPECTED)
    assert len(TRANSCRIPTS) == 13
    assert sorted(NOSTREAM) == [
        "llama-cpp-python__weather_nostream",
        "llama-server__weather_nostream",
    ]
    assert sorted(TOOLS) == ["get_weather", "send_webhook"]


@pytest.mark.parametrize("name", sorted(TRANSCRIPTS))
def test_transcript_replayed_with_real_chunking(name: str) -> None:
    """Each capture, fed delta by delta as the server sent it."""
    deltas = TRANSCRIPTS[name]
    calls, text, problems = EXPECTED[name]
    out, _ = filter_stream(deltas, TOOLS)
    assert as_pairs(out.calls) == calls
    if name == "llama-server__required_stream":  # long invented answer
        assert out.text.startswith(text)
        assert "{" not in out.text
    else:
        assert out.text == text
    assert len(out.problems) == problems
    assert all(p.startswith("Error: could not parse tool call: ") for p in out.problems)
    assert out.thinking == ECHO_THINKING.get(name, "")
    assert_no_markup(out.text)
    # whole message at once gives the same
    whole = filter_reply("".join(deltas), TOOLS)
    assert whole == out


@pytest.mark.parametrize("name", sorted(NOSTREAM))
def test_transcript_not_streamed(name: str) -> None:
    out = filter_reply(NOSTREAM[name], TOOLS)
    assert as_pairs(out.calls) == [("get_weather", {"city": "Rome"})]
    assert out.text == ""
    assert out.problems == []


def test_transcript_cut_off_calls_become_problems() -> None:
    out, _ = filter_stream(TRANSCRIPTS["llama-server__second_round_stream"], TOOLS)
    assert out.problems == [
        "Error: could not parse tool call: the reply ended before the JSON call "
        'was complete: {"name": "get_weather", "arguments": {"city": "'
    ]


@pytest.mark.parametrize(
    "name",
    ["llama-cpp-python__smalltalk_stream", "llama-server-smollm2__weather_stream"],
)
def test_transcript_prose_released_delta_for_delta(name: str) -> None:
    """Real prose: every feed returns exactly its own delta, at once."""
    deltas = TRANSCRIPTS[name]
    _, steps = filter_stream(deltas, TOOLS)
    assert [s.text for s in steps[:-1]] == deltas
    assert steps[-1] == FilterOutput()


def test_transcript_bare_call_holds_no_speech() -> None:
    """While a bare JSON call streams in, nothing is spoken; the call comes
    out with its last delta, not at finish."""
    deltas = TRANSCRIPTS["llama-cpp-python__weather_stream"]
    _, steps = filter_stream(deltas, TOOLS)
    assert all(s.text == "" for s in steps)
    assert [len(s.calls) for s in steps] == [0] * (len(deltas) - 1) + [1, 0]


def test_transcript_text_after_call_streams() -> None:
    """llama-server's required_stream: after the call, each delta of the
    invented answer is released as it comes."""
    deltas = TRANSCRIPTS["llama-server__required_stream"]
    _, steps = filter_stream(deltas, TOOLS)
    assert steps[16].calls
    assert [s.text for s in steps[17:-1]] == deltas[17:]


# --- hand-written golden cases --------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "calls", "text", "problems", "thinking"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_case(
    reply: str,
    calls: list[tuple[str, dict[str, Any]]],
    text: str,
    problems: int,
    thinking: str,
) -> None:
    out = filter_reply(reply, CASE_TOOLS)
    assert as_pairs(out.calls) == calls
    assert out.text == text
    assert len(out.problems) == problems, out.problems
    assert all(p.startswith("Error: could not parse tool call: ") for p in out.problems)
    assert out.thinking == thinking
    assert_no_markup(out.text)
    # and character by character
    streamed, _ = filter_stream(list(reply), CASE_TOOLS)
    assert streamed == out


def test_problem_text_names_reason_and_markup() -> None:
    out = filter_reply(
        '<tool_call>{"name": "get_weather", "arguments": {"city": </tool_call>',
        CASE_TOOLS,
    )
    assert out.problems == [
        "Error: could not parse tool call: invalid JSON (Expecting value): "
        '<tool_call>{"name": "get_weather", "arguments": {"city": </tool_call>'
    ]


def test_problem_snippet_is_short() -> None:
    reply = "<tool_call>" + "x" * 5000 + "</tool_call>"
    out = filter_reply(reply, CASE_TOOLS)
    assert len(out.problems) == 1
    assert len(out.problems[0]) < 300


# --- streaming behaviour ------------------------------------------------------


def test_plain_prose_passes_chunk_for_chunk() -> None:
    deltas = ["The", " answer", " is", " 42", ".", "\n", "Bye", " now", "!"]
    flt = TextCallFilter(CASE_TOOLS)
    for d in deltas:
        assert flt.feed(d).text == d
    assert flt.finish() == FilterOutput()


def test_leading_whitespace_is_dropped() -> None:
    flt = TextCallFilter(CASE_TOOLS)
    assert flt.feed("\n ").text == ""
    assert flt.feed(" Hi").text == "Hi"
    assert flt.feed(" there ").text == " there "


def test_lt_released_as_soon_as_not_a_tag() -> None:
    flt = TextCallFilter(CASE_TOOLS)
    assert flt.feed("a <").text == "a "
    assert flt.feed("b").text == "<b"
    assert flt.feed(" <th").text == " "
    assert flt.feed("e").text == "<the"
    assert flt.feed("<tool_call").text == ""
    assert flt.feed('>{"name": "get_weather"}').text == ""
    out = flt.feed("</tool_call> ok")
    assert out.text == " ok"
    assert as_pairs(out.calls) == [("get_weather", {})]


def test_leading_json_released_at_first_key_that_is_not_a_call_key() -> None:
    flt = TextCallFilter(CASE_TOOLS)
    assert flt.feed('{"te').text == ""
    assert flt.feed('mp":').text == '{"temp":'
    assert flt.feed(" 20}").text == " 20}"


def test_leading_json_released_when_name_is_not_a_tool() -> None:
    flt = TextCallFilter(CASE_TOOLS)
    assert flt.feed('{"name": "Bo').text == ""
    assert flt.feed('b", "age": 3}').text == '{"name": "Bob", "age": 3}'


@pytest.mark.parametrize(
    ("reply", "spoken"),
    [
        # llama-server streams a call's first tokens as text, then the call.
        ('{"name": "', ""),
        ('Let me check.\n{"name": "', "Let me check.\n"),
        ('```json\n{"name": "', ""),
        ("[{", ""),
    ],
)
def test_json_still_open_when_the_reply_ends_is_not_spoken(
    reply: str, spoken: str
) -> None:
    """A line-start value that started like a call and never closed is no
    speech (it is kept as thinking)."""
    out = filter_reply(reply, CASE_TOOLS)
    assert out.text == spoken
    assert (out.calls, out.problems) == ([], [])
    assert out.thinking == reply.removeprefix(spoken)


def test_a_call_cut_off_by_the_end_of_the_reply_is_a_problem() -> None:
    """Once its name is an offered tool, a cut-off call is told to the model."""
    out = filter_reply('Let me check.\n{"name": "get_weather", "argu', CASE_TOOLS)
    assert out.text == "Let me check.\n"
    assert out.problems == [
        "Error: could not parse tool call: the reply ended before the JSON call "
        'was complete: {"name": "get_weather", "argu'
    ]


def test_fence_released_when_not_json() -> None:
    flt = TextCallFilter(CASE_TOOLS)
    assert flt.feed("``").text == ""
    assert flt.feed("`py").text == "```py"


def test_think_streams_to_thinking() -> None:
    flt = TextCallFilter(CASE_TOOLS)
    assert flt.feed("<think>Let me ").thinking == "Let me "
    out = flt.feed("see</thi")
    assert (out.thinking, out.text) == ("see", "")
    out = flt.feed("nk>Sunny.")
    assert (out.thinking, out.text) == ("", "Sunny.")


def test_filter_is_reusable_after_finish() -> None:
    flt = TextCallFilter(CASE_TOOLS)
    assert flt.feed("<think>x</thi").thinking == "x"
    assert flt.finish().thinking == "</thi"
    out = flt.feed('{"name": "get_weather", "arguments": {}}')
    assert as_pairs(out.calls) == [("get_weather", {})]
    assert flt.finish() == FilterOutput()


def test_empty_feeds() -> None:
    flt = TextCallFilter(CASE_TOOLS)
    assert flt.feed("") == FilterOutput()
    assert flt.finish() == FilterOutput()
    assert filter_reply("", CASE_TOOLS) == FilterOutput()


def test_no_tools_offered() -> None:
    """Bare JSON is never a call without tools; tagged calls still are."""
    out = filter_reply('{"name": "get_weather", "arguments": {}}', {})
    assert (out.text, out.calls) == ('{"name": "get_weather", "arguments": {}}', [])
    out = filter_reply(
        '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>', {}
    )
    assert as_pairs(out.calls) == [("get_weather", {})]


def test_long_block_split_in_many_deltas() -> None:
    message = "word " * 2000
    reply = (
        '<tool_call>{"name": "send_webhook", "arguments": {"message": "'
        + message
        + '"}}</tool_call>'
    )
    deltas = [reply[i : i + 3] for i in range(0, len(reply), 3)]
    out, _ = filter_stream(deltas, CASE_TOOLS)
    assert as_pairs(out.calls) == [("http_tools__send_webhook", {"message": message})]
    assert out.text == ""


# --- names and values ---------------------------------------------------------


@pytest.mark.parametrize(
    ("offered", "written", "resolved"),
    [
        (["get_weather"], "get_weather", "get_weather"),
        (["get_weather"], " get_weather ", "get_weather"),
        (["get_weather"], "Get_Weather", "get_weather"),
        (["Get_Weather", "get_weather"], "GET_WEATHER", None),
        (["Get_Weather", "get_weather"], "get_weather", "get_weather"),
        (["http_tools__get_weather"], "get_weather", "http_tools__get_weather"),
        (["a__b__get"], "b__get", "a__b__get"),
        (["a__get", "b__get"], "get", None),
        (["a__get", "get"], "get", "get"),
        (["weather"], "get_weather", None),
        (["xget_weather"], "get_weather", None),
        ([], "x", None),
        # Small models swap the verb (Qwen2.5-0.5B: "remove_item").
        (["delete_item"], "remove_item", "delete_item"),
        (["http_tools__delete_item"], "removeItem", "http_tools__delete_item"),
        (["add_item", "list_items"], "create_item", "add_item"),
        (["get_weather"], "fetch_weather", "get_weather"),
        (["delete_item"], "remove_items", None),
        (["delete_item", "remove_item"], "erase_item", None),
        (["delete_item"], "remove", None),
        (["send_webhook"], "delete_webhook", None),
        # Spelled another way (Qwen2.5-0.5B with Assist's CamelCase beside).
        (
            ["http-tools__get_weather"],
            "http-tools__GetWeather",
            "http-tools__get_weather",
        ),
        (["get_weather"], "GetWeather", "get_weather"),
        (["get_weather"], "get-weather", "get_weather"),
        (["get_weather", "getweather"], "GetWeather", "getweather"),
        (["get_weather", "Get_Weather"], "GetWeather", None),
    ],
)
def test_name_resolution(
    offered: list[str], written: str, resolved: str | None
) -> None:
    tools = ToolNames({name: {} for name in offered})
    assert tools.resolve(written) == resolved


@pytest.mark.parametrize(
    ("raw", "schema", "value"),
    [
        ("\nRome\n", {"type": "string"}, "Rome"),
        ("\n 5 \n", {"type": "string"}, " 5 "),
        ("\n5\n", {"type": "integer"}, 5),
        ("5.0", {"type": "integer"}, 5),
        ("five", {"type": "integer"}, "five"),
        ("2.5", {"type": "number"}, 2.5),
        ("3", {"type": "number"}, 3),
        ("True", {"type": "boolean"}, True),
        ("false", {"type": "boolean"}, False),
        ("null", {"type": ["integer", "null"]}, None),
        ("7", {"type": ["integer", "null"]}, 7),
        ('{"a": 1}', {"type": "object"}, {"a": 1}),
        ("{'a': True}", {"type": "object"}, {"a": True}),
        ("[1, 2]", {"type": "array"}, [1, 2]),
        ("[1, 2", {"type": "array"}, "[1, 2"),
        ("3", {"anyOf": [{"type": "integer"}, {"type": "string"}]}, 3),
        ("on", {"enum": ["on", "off"]}, "on"),
        ("5", None, 5),
        ("true", None, True),
        ("[1]", None, [1]),
        ('"quoted"', None, '"quoted"'),
        ("plain text", None, "plain text"),
        ("\nline 1\nline 2\n", None, "line 1\nline 2"),
    ],
)
def test_coerce_value(raw: str, schema: dict[str, Any] | None, value: Any) -> None:
    got = coerce_value(raw, schema)
    assert got == value
    assert type(got) is type(value)


@pytest.mark.parametrize(
    "reply",
    [
        '{"arguments": ' + "[" * 50_000 + "]" * 50_000 + "}",
        '{"name": "get_weather", "arguments": ' + "[" * 50_000 + "]" * 50_000 + "}",
        "<tool_call>" + "[" * 50_000 + "]" * 50_000 + "</tool_call>",
        '<tool_call>{"name": "get_weather", "arguments": "'
        + "[" * 50_000
        + '"}</tool_call>',
        "<function=get_weather>" + "{" * 50_000 + "</function>",
        "<function=set_light><parameter=extra>"
        + "[" * 5000
        + "]" * 5000
        + "</parameter><parameter=level>"
        + "9" * 6000
        + "</parameter><parameter=undeclared>"
        + "9" * 6000
        + "</parameter></function>",
        "<function=get_weather><parameter=days>"
        + "9" * 6000
        + "</parameter></function>",
    ],
    ids=["bare", "bare_committed", "hermes", "hermes_args", "function", "xml", "int"],
)
def test_hostile_input_does_not_raise(reply: str) -> None:
    out = filter_reply(reply, CASE_TOOLS)
    assert_no_markup(out.text)


@pytest.mark.parametrize(
    "reply",
    [
        '{"id": "4", "name": "bread", "qty": 1}',
        '{"response": "Rome: sunny, 16°C"}',
        '```json\n{"status": "ok"}\n```',
        # Qwen2.5-0.5B restating a list result (once spoken from its second
        # element on).
        '[{"id": "1", "name": "apples", "qty": 3}, {"id": "2", "name": "milk"}]',
        # ... or without its opening bracket (spoken as ', {"id": "2", …}]').
        '{"id": "1", "name": "apples", "qty": 3}, {"id": "2", "name": "milk"}]',
        '{"id": "1", "name": "apples"},\n{"id": "2", "name": "milk"}',
    ],
)
def test_json_answering_tool_results_is_an_echo(reply: str) -> None:
    """After tool results, a reply that only restates them as JSON is no speech."""
    out = filter_reply(reply, TOOLS, after_tool_results=True)
    assert (out.text, out.calls, out.problems) == ("", [], [])
    assert "{" in out.thinking

    # The same JSON as a first reply is an ordinary answer.
    first = filter_reply(reply, TOOLS)
    assert first.text == reply.strip()


def test_prose_after_tool_results_is_spoken() -> None:
    """Only JSON is held back after tool results: prose streams as usual."""
    flt = TextCallFilter(TOOLS, after_tool_results=True)
    assert flt.feed("Bread is on the list.").text == "Bread is on the list."
    assert flt.feed(' {"x": 1}').text == ' {"x": 1}'  # mid-line JSON is text


def test_words_after_an_echoed_list_are_spoken() -> None:
    """The separators of an echoed list are no speech; the words after are."""
    out = filter_reply(
        '{"id": "1", "name": "apples"}, {"id": "2", "name": "milk"}] '
        "You have apples and milk.",
        TOOLS,
        after_tool_results=True,
    )
    assert out.text == "You have apples and milk."
