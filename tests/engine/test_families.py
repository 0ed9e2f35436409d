"""Each model family's calls are read, in any chunking, and never spoken."""

from __future__ import annotations

import random
from typing import Any

import pytest

from custom_components.http_tools_agent.server.thinking import OpenThinking
from tests.families import ANSWERS, CALLS, LEAKS, pieces

from .textcall_run import filter_stream

TOOLS = {
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
    "add_item": {
        "type": "object",
        "properties": {"name": {"type": "string"}, "qty": {"type": "integer"}},
        "required": ["name"],
    },
}
ROME = [("get_weather", {"city": "Rome"})]


def _think_open(case: dict[str, Any]) -> bool:
    """What the agent decides for the case's model on a server that does not
    take reasoning apart (llama-cpp-python)."""
    return OpenThinking().holds("llama-cpp-python", case["model"])


def _chunkings(text: str) -> list[list[str]]:
    rng = random.Random(text)
    cuts = [sorted(rng.sample(range(1, len(text)), k=min(len(text) - 1, 12)))]
    random_pieces = [
        [text[a:b] for a, b in zip([0, *c], [*c, len(text)], strict=True)] for c in cuts
    ]
    return [[text], list(text), pieces(text), *random_pieces]


@pytest.mark.parametrize("case", CALLS, ids=[c["id"] for c in CALLS])
def test_a_family_call_runs_once_and_is_never_spoken(case: dict[str, Any]) -> None:
    for deltas in _chunkings(case["reply"]):
        out, _ = filter_stream(deltas, TOOLS, think_open=_think_open(case))
        assert [(c.name, c.arguments) for c in out.calls] == ROME, deltas
        assert out.problems == []
        assert out.text.strip() == "", (case["id"], out.text)


@pytest.mark.parametrize("case", ANSWERS, ids=[c["id"] for c in ANSWERS])
def test_a_family_answer_is_spoken_without_its_thinking(case: dict[str, Any]) -> None:
    for deltas in _chunkings(case["reply"]):
        out, _ = filter_stream(deltas, TOOLS, think_open=_think_open(case))
        assert out.calls == []
        assert out.text.strip() == case["spoken"], deltas
        for leak in LEAKS:
            assert leak not in out.text


@pytest.mark.parametrize(
    ("reply", "calls"),
    [
        (
            '[TOOL_CALLS]get_weather[ARGS]{"city": "Rome"}'
            '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}',
            ["Rome", "Paris"],
        ),
        ('[get_weather(city="Rome"), get_weather(city="Paris")]', ["Rome", "Paris"]),
        (
            '<|tool_call_start|>[get_weather(city="Rome"), get_weather(city="Paris")]'
            "<|tool_call_end|>",
            ["Rome", "Paris"],
        ),
        (
            '<|tool_call>call:get_weather{city:<|"|>Rome<|"|>}<tool_call|>'
            '<|tool_call>call:get_weather{city:<|"|>Paris<|"|>}<tool_call|>',
            ["Rome", "Paris"],
        ),
        (
            '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Rome"}}; '
            '{"name": "get_weather", "parameters": {"city": "Paris"}}',
            ["Rome", "Paris"],
        ),
        ('get_weather{"city": "Rome"}get_weather{"city": "Paris"}', ["Rome", "Paris"]),
        ("call:get_weather{city:Rome}call:get_weather{city:Paris}", ["Rome", "Paris"]),
        (
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value>"
            "</tool_call><tool_call>get_weather<arg_key>city</arg_key>"
            "<arg_value>Paris</arg_value></tool_call>",
            ["Rome", "Paris"],
        ),
    ],
    ids=[
        "mistral",
        "pythonic",
        "lfm2",
        "gemma4",
        "python-tag",
        "stripped",
        "gemma4-stripped",
        "glm4.7",
    ],
)
def test_two_calls_of_a_family(reply: str, calls: list[str]) -> None:
    for deltas in _chunkings(reply):
        out, _ = filter_stream(deltas, TOOLS)
        assert [c.arguments["city"] for c in out.calls] == calls
        assert out.text.strip() == ""


@pytest.mark.parametrize(
    ("reply", "args"),
    [
        # Python literals, JSON's words, positional values for the required.
        ("[add_item(name='milk', qty=2)]", {"name": "milk", "qty": 2}),
        ('[add_item("milk")]', {"name": "milk"}),
        ('[add_item(name="milk", qty=null)]', {"name": "milk", "qty": None}),
        # Gemma 4: numbers bare, strings marked; typed by the schema when the
        # markers were dropped.
        (
            '<|tool_call>call:add_item{name:<|"|>milk<|"|>,qty:2}<tool_call|>',
            {"name": "milk", "qty": 2},
        ),
        ("call:add_item{name:oat milk,qty:2}", {"name": "oat milk", "qty": 2}),
        # GLM: values typed by the schema.
        (
            "<tool_call>add_item<arg_key>name</arg_key><arg_value>milk</arg_value>"
            "<arg_key>qty</arg_key><arg_value>2</arg_value></tool_call>",
            {"name": "milk", "qty": 2},
        ),
    ],
)
def test_arguments_of_each_syntax(reply: str, args: dict[str, Any]) -> None:
    out, _ = filter_stream(pieces(reply), TOOLS)
    assert [(c.name, c.arguments) for c in out.calls] == [("add_item", args)]


@pytest.mark.parametrize(
    "reply",
    [
        "[add_item(name=input())]",
        "[add_item(name=__import__('os').system('x'))]",
        "[add_item(**{'name': 'x'})]",
    ],
)
def test_python_calls_are_never_evaluated(reply: str) -> None:
    """Only literals: a call or a name as a value is no call (a problem for
    the model), and nothing is run."""
    out, _ = filter_stream([reply], TOOLS)
    assert out.calls == []
    assert out.text.strip() == reply or out.problems


@pytest.mark.parametrize(
    "reply",
    [
        "[1] Rome is sunny today.",
        "See [the forecast](https://example.com) for Rome.",
        "[Note] It may rain.",
        "Use get_weather{city} to ask me.",
        "I can call get_weather(city) for any city.",
        "get_weather is the tool I use for the weather.",
        "functools is a Python module.",
        "The thought counts.",
        "Call me later: call:me{} is no tool.",
        "print(add(1, 2))",
        "[TOOLS] are not calls.",
        "x = [get_time(city='Rome')]",
    ],
)
def test_ordinary_words_stay_words(reply: str) -> None:
    """Brackets in prose, a line of code, a tool's name in a sentence: words."""
    for deltas in _chunkings(reply):
        out, _ = filter_stream(deltas, TOOLS)
        assert out.calls == []
        assert out.text == reply, deltas


def test_a_call_after_words_whose_markers_were_dropped_is_words() -> None:
    """Markers dropped: a call only when the reply is nothing but calls."""
    reply = 'get_weather{"city": "Rome"} is what I would call.'
    out, _ = filter_stream(pieces(reply), TOOLS)
    assert out.calls == []
    assert out.text == reply


def test_thinking_held_until_the_reply_says_what_it_was() -> None:
    """A template that opens `<think>`: the words before a lone `</think>`
    are thinking; with no `</think>` at all, they were the answer."""
    out, steps = filter_stream(
        ["I think", " so.", "</think>", "Hi!"], TOOLS, think_open=True
    )
    assert out.text == "Hi!"
    assert out.thinking == "I think so."
    assert [s.text for s in steps[:2]] == ["", ""]  # held, not spoken
    out, _ = filter_stream(["Hello", " there."], TOOLS, think_open=True)
    assert out.text == "Hello there."
    assert out.thinking == ""


def test_a_lone_end_of_thinking_after_words_is_reported() -> None:
    """The agent learns from it that the model's prompt opens thinking."""
    out, _ = filter_stream(["The user greets me.", "</think>", "Hi!"], TOOLS)
    assert out.unopened_think
    out, _ = filter_stream(["</think>", "Hi!"], TOOLS)
    assert not out.unopened_think


def test_a_call_inside_closed_thinking_does_not_run() -> None:
    reply = (
        "<think>I could write <tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call> but no.'
        "</think>It is sunny."
    )
    for deltas in _chunkings(reply):
        out, _ = filter_stream(deltas, TOOLS)
        assert out.calls == []
        assert out.text == "It is sunny."
        assert "<tool_call>" in out.thinking


@pytest.mark.parametrize(
    "reply",
    [
        '<|tool_call>call:get_weather{city:<|"|>Rome}<tool_call|>',  # string open
        "<|tool_call>call:get_weather{city}<tool_call|>",  # no key:value
        '<|tool_call>call:get_weather{city:<|"|>Rome<|"|> days:2}<tool_call|>',
        "<|tool_call>call:get_weather{list:[1, 2}<tool_call|>",
        "<|tool_call>call:get weather{}<tool_call|>",  # a name with a space
        "<|tool_call>call:get_weather<tool_call|>",  # no braces
        "<|tool_call><tool_call|>",  # empty
        '<|tool_call>call:get_weather{city:"Rome}<tool_call|>',
        "<start_function_call>call:get_weather{city:<escape>Rome",  # cut off
        '[TOOL_CALLS]get_weather[ARGS]{"city": Rome}',
        '[TOOL_CALLS]get_weather[ARGS]["Rome"]',
        "[TOOL_CALLS]{get_weather}",
        "<|tool_call|>[get_weather(city=input())]",
        "<|tool_call|>[get_weather('Rome', 'Paris')]",
        "<|tool_call|>[get_weather(**{'city': 'Rome'})]",
        "<|tool_call|>[1 +]",
        '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Rome"}} x',
        "<TOOLCALL>   </TOOLCALL>",
        "<TOOLCALL>[]</TOOLCALL>",
        "<TOOLCALL>[{bad json}]</TOOLCALL>",
        "<tool_call>get_weather<arg_key>city</arg_key></tool_call>",
        "<tool_call>get weather<arg_key>city</arg_key><arg_value>Rome</arg_value></tool_call>",
        "<|channel|>commentary to=functions.get_weather<|message|>{city: Rome}<|call|>",
        '<|channel|>commentary to=functions.get_weather<|message|>["Rome"]<|call|>',
        '<|channel|>commentary to=functions.get_weather<|message|>{"city"',
        '<tool_call>{{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>',
    ],
)
def test_broken_markup_of_a_family_is_a_problem_never_words(reply: str) -> None:
    """The model is told its call could not be read; nothing of it is heard."""
    for deltas in _chunkings(reply):
        out, _ = filter_stream(deltas, TOOLS)
        assert out.calls == []
        assert out.problems, deltas
        assert all(
            p.startswith("Error: could not parse tool call: ") for p in out.problems
        )
        for leak in ("<|", "|>", "[TOOL_CALLS]", "<TOOLCALL>", "<arg_key>", "call:"):
            assert leak not in out.text


@pytest.mark.parametrize(
    ("reply", "args"),
    [
        (
            '<|tool_call>call:add_item{name:<|"|>milk<|"|>,opts:{fresh:true,tags:'
            '[<|"|>a<|"|>,2,null]},qty:-1.5e1}<tool_call|>',
            {
                "name": "milk",
                "opts": {"fresh": True, "tags": ["a", 2, None]},
                "qty": -15.0,
            },
        ),
        ("<|tool_call>call:add_item{}<tool_call|>", {}),
        (
            '<|tool_call>call:add_item{name:"oat, milk"}<tool_call|>',
            {"name": "oat, milk"},
        ),
        ("[add_item(name='milk', tags={'a', 'b'}, extra={'k': [1, (2, 3)]})]", None),
        ('<|python_tag|>brave_search.call(query="Rome")', None),
    ],
)
def test_nested_values_of_each_syntax(reply: str, args: dict[str, Any] | None) -> None:
    out, _ = filter_stream(pieces(reply), TOOLS)
    assert len(out.calls) == 1
    if args is not None:
        assert out.calls[0].arguments == args
    assert out.text.strip() == ""
