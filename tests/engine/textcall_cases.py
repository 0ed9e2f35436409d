"""Golden data for the text-call filter tests.

The replies of real servers are read from ``tests/fixtures/transcripts/*.json``
(llama.cpp's ``llama-server`` and ``llama-cpp-python`` with
Qwen2.5-Coder-0.5B-Instruct, and SmolLM2-135M, captured 2026-11-30):
``TRANSCRIPTS`` holds the ``delta.content`` pieces of each streamed body, in
order, ``NOSTREAM`` the ``message.content`` of the others, and ``TOOLS`` the
tools the captures offered. What each reply must give is written by hand
below.
"""

from __future__ import annotations

from collections.abc import Iterator
import json
from pathlib import Path
import re
from typing import Any

from tests.markup import FAMILY_MARKERS

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
_FAMILIES = json.loads(
    (FIXTURES.parent / "families" / "families.json").read_text(encoding="utf-8")
)
_LINE_END = re.compile(r"\r\n|\r|\n")


def sse_data(body: str) -> Iterator[str]:
    """The ``data`` of each server-sent event in ``body``, up to ``[DONE]``.

    The rules the openai SDK follows: lines end at CR, LF or CRLF; an event
    ends at a blank line (an unterminated last line never ends one); its
    ``data:`` lines (one space after the colon dropped) are joined by
    newlines; other fields and ``:`` comments are ignored.
    """
    data: list[str] = []
    for line in _LINE_END.split(body)[:-1]:
        if line:
            field, _, value = line.partition(":")
            if field == "data":
                data.append(value.removeprefix(" "))
            continue
        if not data:
            continue
        event, data = "\n".join(data), []
        if event.startswith("[DONE]"):
            return
        yield event


def _content_deltas(body: str) -> list[str]:
    deltas: list[str] = []
    for event in sse_data(body):
        choices = json.loads(event).get("choices") or [{}]
        content = (choices[0].get("delta") or {}).get("content")
        if content is not None:
            deltas.append(content)
    return deltas


def _read_captures() -> tuple[
    dict[str, list[str]], dict[str, str], dict[str, dict[str, Any]]
]:
    streamed: dict[str, list[str]] = {}
    whole: dict[str, str] = {}
    tools: dict[str, dict[str, Any]] = {}
    for path in sorted(FIXTURES.glob("*.json")):
        capture = json.loads(path.read_text(encoding="utf-8"))
        request = capture["request"]
        offered = {
            t["function"]["name"]: t["function"]["parameters"] for t in request["tools"]
        }
        if tools and offered != tools:
            raise ValueError(f"{path.name}: the captures must offer the same tools")
        tools = offered
        if request.get("stream"):
            streamed[path.stem] = _content_deltas(capture["body"])
        else:
            message = json.loads(capture["body"])["choices"][0]["message"]
            whole[path.stem] = message["content"]
    return streamed, whole, tools


TRANSCRIPTS, NOSTREAM, TOOLS = _read_captures()

# What each capture must give: calls (name, arguments), spoken text, number of
# problems. A call cut off by max_tokens (finish_reason "length") is a problem.
_PALERMO = ("get_weather", {"city": "Palermo"})
_ROME = ("get_weather", {"city": "Rome"})
_WEBHOOK_MSG = (
    "The weather in Palermo is sunny and the temperature is 25°C. "
    "The weather in Turin is rainy and the temperature is 18°C."
)
_REPEAT_TEXT = (
    ". The current weather in Rome is sunny with a temperature of 22 degrees Celsius."
)

type Expected = tuple[list[tuple[str, dict[str, Any]]], str, int]

# What goes to `thinking` instead of speech, by capture.
ECHO_THINKING = {
    "llama-cpp-python__second_round_stream": '{"response": "Rome: ☀️ +14°C"}',
}

EXPECTED: dict[str, Expected] = {
    "llama-cpp-python__required_parallel_stream": ([_PALERMO], "", 0),
    "llama-cpp-python__required_stream": ([_ROME], "", 0),
    # The model repeats the call (arguments as a JSON string) and echoes the
    # tool result as JSON on the next line: an echo, held and never spoken
    # (it goes to thinking; see ECHO_THINKING).
    "llama-cpp-python__second_round_stream": ([_ROME], "", 0),
    "llama-cpp-python__smalltalk_stream": (
        [],
        "Hello! I'm doing well, thank you for asking. How about you?",
        0,
    ),
    "llama-cpp-python__two_cities_stream": ([_PALERMO], "", 0),
    "llama-cpp-python__weather_stream": ([_ROME], "", 0),
    "llama-server-smollm2__weather_stream": (
        [],
        "The weather in Rome is quite pleasant, with a mix of sunny days and "
        "cooler evenings. The city is known for its vibrant atmosphere, with "
        "plenty of outdoor activities and attractions. The Italian Alps are a "
        "popular destination, offering breathtaking views of the Mediterranean. "
        "Rome is also a popular destination for outdoor activities, with many "
        "attractions and events taking place throughout the year.",
        0,
    ),
    "llama-server__required_parallel_stream": (
        [
            _PALERMO,
            ("get_weather", {"city": "Turin"}),
            ("send_webhook", {"message": _WEBHOOK_MSG}),
        ],
        "",
        1,
    ),
    # Text after a bare call is speech (here the model invents the result).
    "llama-server__required_stream": ([_ROME], _REPEAT_TEXT, 0),  # text: prefix
    "llama-server__second_round_stream": ([_ROME] * 8, "", 1),
    "llama-server__smalltalk_stream": (
        [],
        "Hello! I'm doing well, thank you for asking. How about you?",
        0,
    ),
    "llama-server__two_cities_stream": ([_PALERMO], "", 0),
    "llama-server__weather_stream": ([_ROME], "", 0),
}

# Hand-written cases: (id, reply, calls, spoken text, problems, thinking).
# Tools: CASE_TOOLS.
CASE_TOOLS: dict[str, dict[str, Any]] = {
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
    "set_light": {
        "type": "object",
        "properties": {
            "on": {"type": "boolean"},
            "level": {"type": "number"},
            "room": {"type": "string"},
            "rgb": {"type": "array"},
            "extra": {"type": "object"},
            "code": {"type": "string"},
        },
    },
    "http_tools__send_webhook": {
        "type": "object",
        "properties": {"message": {"type": "string"}},
    },
}

type Case = tuple[str, str, list[tuple[str, dict[str, Any]]], str, int, str]

_QWEN_ROME = (
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n"
    "</function>\n</tool_call>"
)
_HERMES_ROME = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>'
)

CASES: list[Case] = [
    # Near-JSON (repair.py): a slip with one reading is mended; anything
    # else stays a problem the model reads.
    (
        "near_json_wrong_closer",
        # Qwen2.5-Coder-0.5B in the demo, for "What's on my shopping list?".
        '{"name": "get_weather", "arguments": {"city": "Rome"}]}',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "}",
    ),
    (
        "near_json_trailing_comma",
        '{"name": "get_weather", "arguments": {"city": "Rome",},}',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "",
    ),
    (
        "near_json_python_quotes",
        "{'name': 'get_weather', 'arguments': {'city': 'Rome', 'metric': True}}",
        [("get_weather", {"city": "Rome", "metric": True})],
        "",
        0,
        "",
    ),
    (
        "near_json_python_quotes_of_no_call_is_text",
        "{'city': 'Rome'} is what I would send.",
        [],
        "{'city': 'Rome'} is what I would send.",
        0,
        "",
    ),
    (
        "near_json_extra_closer",
        '{"name": "get_weather", "arguments": {"city": "Rome"}}}',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "}",
    ),
    (
        "near_json_cut_off_after_a_value",
        '{"name": "get_weather", "arguments": {"city": "Rome"',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "",
    ),
    (
        "near_json_cut_inside_a_string_stays_a_problem",
        '{"name": "get_weather", "arguments": {"city": "Ro',
        [],
        "",
        1,
        "",
    ),
    (
        "near_json_two_readings_stay_a_problem",
        # An object whose keys turn into an escaped string half way.
        '{"name": "get_weather", "arguments": {"city":"Rome","unit\\":\\"c\\"}}',
        [],
        "",
        1,
        "",
    ),
    (
        "arguments_as_a_string_an_escaped_quote_closes",
        # Qwen2.5-Coder-0.5B's most frequent slip (22 of the 30 lines of the
        # near-JSON corpus): the string's closing quote escaped.
        '{"name": "get_weather", "arguments": "{\\"city\\": \\"Rome\\"}\\"}\n'
        '{"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}\\"}\n'
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        [
            ("get_weather", {"city": "Rome"}),
            ("get_weather", {"city": "Oslo"}),
            ("get_weather", {"city": "Paris"}),
        ],
        "",
        0,
        "",
    ),
    (
        "a_string_left_open_ends_at_the_line_end",
        # On the closing request, line after line for 3,500 characters: a
        # string never closed is one broken call, not the rest of the reply.
        '{"name": "get_weather", "arguments": "{\\"city\\": \\"Ro\n'
        '{"name": "get_weather", "arguments": {"city": "Paris"}}',
        [("get_weather", {"city": "Paris"})],
        "",
        1,
        "",
    ),
    (
        "a_call_longer_than_any_call_ends_the_reply",
        # Qwen2.5-Coder-0.5B: one call's `device_class` list for 1,024 tokens,
        # a string open from its start; nothing after it is read.
        '{"name": "get_weather", "arguments": {"city": "Rome\\", \\"units\\": ['
        + '\\"identify\\", \\"restart\\", ' * 80
        + '"]}}\nIt is sunny.',
        [],
        "",
        1,
        "",
    ),
    (
        "call_shaped_broken_json_of_no_tool_is_no_speech",
        # Qwen2.5-Coder-0.5B in the demo, for "What time is it?".
        '{"name": "GetTheTime", "arguments": {"name": "area": "Living room"}}',
        [],
        "",
        1,
        "",
    ),
    # A model that writes its template's result tags echoes a result: never
    # speech, the tags alone neither.
    (
        "tool_response_block_is_not_speech",
        '<tool_response>\n{"result": "Rome: sunny"}\n</tool_response>\nIt is sunny.',
        [],
        "It is sunny.",
        0,
        '\n{"result": "Rome: sunny"}\n',
    ),
    (
        "closing_tool_response_alone_is_dropped",
        "Rome is sunny.</tool_response>",
        [],
        "Rome is sunny.",
        0,
        "",
    ),
    # Echoes of a tool result after a call are not speech; the same JSON
    # without a call before it is an ordinary answer.
    (
        "echo_after_bare_call",
        '{"name": "get_weather", "arguments": {"city": "Rome"}}\n{"response": "sunny"}',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        '{"response": "sunny"}',
    ),
    (
        "echo_after_tagged_call",
        _QWEN_ROME + '\n{"temp": 14, "sky": "clear"}\nIt is clear.',
        [("get_weather", {"city": "Rome"})],
        "It is clear.",
        0,
        '{"temp": 14, "sky": "clear"}',
    ),
    (
        "json_answer_without_call",
        '{"response": "sunny"}',
        [],
        '{"response": "sunny"}',
        0,
        "",
    ),
    (
        "broken_echo_is_text",
        '{"name": "get_weather", "arguments": {"city": "Rome"}}\n{"response": sunny}',
        [("get_weather", {"city": "Rome"})],
        '{"response": sunny}',
        0,
        "",
    ),
    # Qwen2.5-0.5B, given a result with the plain loop, answered "}" lines:
    # closing braces at a line's start are the end of some JSON, never
    # speech; a brace inside a sentence is text.
    (
        "closing_braces_alone",
        "}\n}\n}\n",
        [],
        "",
        0,
        "}}}",
    ),
    (
        "closing_brace_after_words",
        "Rome is sunny.\n}}",
        [],
        "Rome is sunny.\n",
        0,
        "}}",
    ),
    (
        "brace_inside_a_sentence",
        "Use {city} or } as you like.",
        [],
        "Use {city} or } as you like.",
        0,
        "",
    ),
    # Qwen2.5-0.5B asked about two cities writes the calls on one line,
    # comma-separated: both run, no markup is spoken; words after stay.
    (
        "bare_calls_comma_separated",
        '{"name": "get_weather", "arguments": {"city": "Vienna"}}, '
        '{"name": "get_weather", "arguments": {"city": "Lisbon"}}',
        [("get_weather", {"city": "Vienna"}), ("get_weather", {"city": "Lisbon"})],
        "",
        0,
        ",",
    ),
    # Seen on the closing request: calls written one after the other inside
    # one object, an invented name. Never spoken: one problem.
    (
        "calls_inside_one_object",
        '{"name": "show_list", "arguments": {"id": "1"}, '
        '{"name": "show_list", "arguments": {"id": "2"}}}',
        [],
        "",
        1,
        "",
    ),
    (
        "bare_call_then_words",
        '{"name": "get_weather", "arguments": {"city": "Rome"}}\nOne moment.',
        [("get_weather", {"city": "Rome"})],
        "One moment.",
        0,
        "",
    ),
    # Qwen3-Coder XML
    ("qwen_xml", _QWEN_ROME, [("get_weather", {"city": "Rome"})], "", 0, ""),
    (
        "qwen_xml_typed",
        "<tool_call>\n<function=set_light>\n<parameter=on>\ntrue\n</parameter>\n"
        "<parameter=level>\n0.5\n</parameter>\n<parameter=room>\n42\n</parameter>\n"
        "<parameter=rgb>\n[255, 0, 10]\n</parameter>\n"
        '<parameter=extra>\n{"fade": 2}\n</parameter>\n'
        "<parameter=code>\n007\n</parameter>\n<parameter=undeclared>\n5\n</parameter>\n"
        "</function>\n</tool_call>",
        [
            (
                "set_light",
                {
                    "on": True,
                    "level": 0.5,
                    "room": "42",
                    "rgb": [255, 0, 10],
                    "extra": {"fade": 2},
                    "code": "007",
                    "undeclared": 5,
                },
            )
        ],
        "",
        0,
        "",
    ),
    (
        "qwen_xml_integer",
        "<function=get_weather>\n<parameter=city>\nNew York\n</parameter>\n"
        "<parameter=days>\n5\n</parameter>\n</function>",
        [("get_weather", {"city": "New York", "days": 5})],
        "",
        0,
        "",
    ),
    (
        "qwen_xml_two_functions",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nPalermo\n</parameter>\n"
        "</function>\n<function=get_weather>\n<parameter=city>\nTurin\n</parameter>\n"
        "</function>\n</tool_call>",
        [("get_weather", {"city": "Palermo"}), ("get_weather", {"city": "Turin"})],
        "",
        0,
        "",
    ),
    (
        "qwen_xml_no_wrapper_text_around",
        "Checking.\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n"
        "</function>\nOne moment.",
        [("get_weather", {"city": "Rome"})],
        "Checking.\n\nOne moment.",
        0,
        "",
    ),
    (
        "qwen_xml_missing_close_tags",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n",
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "",
    ),
    (
        "qwen_xml_cut_inside_parameter",
        "<tool_call>\n<function=get_weather>\n<parameter=city>\nRo",
        [],
        "",
        1,
        "",
    ),
    (
        "qwen_xml_broken_function",
        "<function=get_weather <parameter=city>Rome</function>",
        [],
        "",
        1,
        "",
    ),
    (
        "qwen_xml_namespaced_name",
        "<function=send_webhook><parameter=message>hi</parameter></function>",
        [("http_tools__send_webhook", {"message": "hi"})],
        "",
        0,
        "",
    ),
    (
        "qwen_xml_unknown_tool",
        "<tool_call><function=open_door><parameter=id>3</parameter></function></tool_call>",
        [("open_door", {"id": 3})],
        "",
        0,
        "",
    ),
    (
        "llama_function_json_body",
        '<function=get_weather>{"city": "Rome"}</function>',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "",
    ),
    # Hermes JSON
    ("hermes", _HERMES_ROME, [("get_weather", {"city": "Rome"})], "", 0, ""),
    (
        "hermes_inline_parameters_string_args",
        'Sure.<tool_call>{"name": "GET_WEATHER", "parameters": "{\\"city\\": \\"Oslo\\"}"}</tool_call>',
        [("get_weather", {"city": "Oslo"})],
        "Sure.",
        0,
        "",
    ),
    (
        "hermes_list",
        '<tool_call>[{"name": "get_weather", "arguments": {"city": "A"}}, '
        '{"name": "get_weather", "arguments": {"city": "B"}}]</tool_call>',
        [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})],
        "",
        0,
        "",
    ),
    (
        "hermes_two_blocks_text_between",
        f"First. {_HERMES_ROME} Then. {_HERMES_ROME} End.",
        [("get_weather", {"city": "Rome"})] * 2,
        "First.  Then.  End.",
        0,
        "",
    ),
    (
        "hermes_openai_shape",
        '<tool_call>{"type": "function", "function": {"name": "get_weather", '
        '"arguments": "{\\"city\\": \\"Rome\\"}"}}</tool_call>',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "",
    ),
    (
        "hermes_unknown_tool",
        '<tool_call>{"name": "open_door", "arguments": {}}</tool_call>',
        [("open_door", {})],
        "",
        0,
        "",
    ),
    (
        "hermes_missing_close",
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "",
    ),
    (
        "hermes_missing_close_then_text",
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}\nChecking now.',
        [("get_weather", {"city": "Rome"})],
        "Checking now.",
        0,
        "",
    ),
    (
        "hermes_broken_json",
        '<tool_call>{"name": "get_weather", "arguments": {"city": </tool_call>',
        [],
        "",
        1,
        "",
    ),
    (
        "hermes_broken_then_text",
        'Oops <tool_call>{"name": get_weather}</tool_call> sorry.',
        [],
        "Oops  sorry.",
        1,
        "",
    ),
    ("empty_tool_call", "<tool_call></tool_call>Hi", [], "Hi", 1, ""),
    (
        "hermes_bad_arguments_string",
        '<tool_call>{"name": "get_weather", "arguments": "city=Rome"}</tool_call>',
        [],
        "",
        1,
        "",
    ),
    # bare JSON (what llama.cpp servers send)
    (
        "bare_json",
        '  {"name": "get_weather", "arguments": {"city": "Rome"}}\n',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "",
    ),
    (
        "bare_json_lines",
        '{"name": "get_weather", "arguments": {"city": "A"}}\n'
        '{"name": "get_weather", "arguments": {"city": "B"}}',
        [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})],
        "",
        0,
        "",
    ),
    (
        "bare_json_list",
        '[{"name": "get_weather", "arguments": {"city": "A"}}, '
        '{"name": "send_webhook", "arguments": {"message": "m"}}]',
        [
            ("get_weather", {"city": "A"}),
            ("http_tools__send_webhook", {"message": "m"}),
        ],
        "",
        0,
        "",
    ),
    (
        "bare_json_after_text_line",
        'Let me check.\n{"name": "get_weather", "arguments": {"city": "Rome"}}',
        [("get_weather", {"city": "Rome"})],
        "Let me check.\n",
        0,
        "",
    ),
    (
        "bare_json_flat_arguments",
        '{"name": "get_weather", "city": "Rome"}',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "",
    ),
    (
        "fence_json",
        '```json\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n```\n',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "",
    ),
    (
        "fence_bare_two_calls_and_text",
        'Here:\n```\n{"name": "get_weather", "arguments": {"city": "A"}}\n'
        '{"name": "get_weather", "arguments": {"city": "B"}}\n```\nDone.',
        [("get_weather", {"city": "A"}), ("get_weather", {"city": "B"})],
        "Here:\n\nDone.",
        0,
        "",
    ),
    (
        "bare_json_cut_off",
        '{"name": "get_weather", "arguments": {"city": "Ro',
        [],
        "",
        1,
        "",
    ),
    (
        "bare_json_committed_invalid",
        '{"name": "get_weather", "arguments": {"city": Rome}}',
        [],
        "",
        1,
        "",
    ),
    # ordinary JSON and '<' stay text
    (
        "ordinary_json",
        '{"temp": 20, "unit": "C"}',
        [],
        '{"temp": 20, "unit": "C"}',
        0,
        "",
    ),
    (
        # Exactly name + arguments: a call attempt with an invented name (the
        # agent answers `Error: unknown tool 'Bob'`), never spoken.
        "call_shaped_json_unknown_name",
        '{"name": "Bob", "arguments": {"age": 3}}',
        [("Bob", {"age": 3})],
        "",
        0,
        "",
    ),
    (
        "ordinary_json_name_not_a_tool",
        '{"name": "Bob", "age": 3}',
        [],
        '{"name": "Bob", "age": 3}',
        0,
        "",
    ),
    (
        "cut_off_call_missing_only_closers",
        '{"name": "get_weather", "arguments": {"city": "Rome", "days": 2}',
        [("get_weather", {"city": "Rome", "days": 2})],
        "",
        0,
        "",
    ),
    (
        "cut_off_call_inside_a_value_is_a_problem",
        '{"name": "get_weather", "arguments": {"city": "Ro',
        [],
        "",
        1,
        "",
    ),
    (
        "ordinary_json_fence",
        '```json\n{"temp": 20}\n```',
        [],
        '```json\n{"temp": 20}\n```',
        0,
        "",
    ),
    (
        "python_fence",
        "```python\nprint('hi')\n```",
        [],
        "```python\nprint('hi')\n```",
        0,
        "",
    ),
    (
        "mid_sentence_json_call_is_text",
        'I would call {"name": "get_weather", "arguments": {"city": "Rome"}} now.',
        [],
        'I would call {"name": "get_weather", "arguments": {"city": "Rome"}} now.',
        0,
        "",
    ),
    (
        "json_list_of_numbers",
        "[1, 2, 3] are numbers.",
        [],
        "[1, 2, 3] are numbers.",
        0,
        "",
    ),
    ("braces_prose", "{placeholder} text", [], "{placeholder} text", 0, ""),
    ("less_than", "3 < 5 and 5 > 3", [], "3 < 5 and 5 > 3", 0, ""),
    ("html_b", "<b>bold</b> and <br/>", [], "<b>bold</b> and <br/>", 0, ""),
    (
        "almost_tag",
        "<tool_box> <thinking> <func>",
        [],
        "<tool_box> <thinking> <func>",
        0,
        "",
    ),
    ("trailing_lt", "a <", [], "a <", 0, ""),
    ("trailing_partial_tag", "Sure <tool_ca", [], "Sure ", 0, ""),
    # thinking
    (
        "think_then_answer",
        "<think>\nThe user wants weather.\n</think>\n\nIt is sunny.",
        [],
        "It is sunny.",
        0,
        "\nThe user wants weather.\n",
    ),
    (
        "think_then_call",
        f"<think>need a tool</think>\n{_QWEN_ROME}",
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "need a tool",
    ),
    (
        "call_inside_think_not_run",
        f"<think>maybe {_HERMES_ROME}</think>No call.",
        [],
        "No call.",
        0,
        f"maybe {_HERMES_ROME}",
    ),
    (
        "unclosed_think",
        "<think>still thinking <tool_call>",
        [],
        "",
        0,
        "still thinking <tool_call>",
    ),
    (
        "think_straddling_call",
        '<tool_call><think>hm</think>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "hm",
    ),
    (
        "think_straddling_close",
        "<think>a <tool_call> b</think> c </tool_call> d",
        [],
        "c  d",
        0,
        "a <tool_call> b",
    ),
    ("orphan_close_think", "Answer.</think> More.", [], "Answer. More.", 0, ""),
    (
        "json_after_think",
        '<think>x</think>\n{"name": "get_weather", "arguments": {"city": "Rome"}}',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "x",
    ),
    # removed markup never glues tag halves together
    (
        "junction",
        "<<think>x</think>parameter= and </<tool_call></tool_call>think>",
        [],
        "< parameter= and </ think>",
        1,
        "x",
    ),
    (
        "tool_call_tag_with_attribute",
        '<tool_call id="1">{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>',
        [("get_weather", {"city": "Rome"})],
        "",
        0,
        "",
    ),
    (
        "tool_call_tag_broken",
        "a <tool_call<tool_call></tool_call> b",
        [],
        "a  b",
        2,
        "",
    ),
    # orphan closers and parameters
    ("orphan_closers", "a</tool_call>b</function>c</parameter>d", [], "abcd", 0, ""),
    ("orphan_parameter", "x <parameter=city>Rome</parameter> y", [], "x  y", 1, ""),
]

# Fragments the property tests mix with prose.
FRAGMENTS: list[str] = [
    _QWEN_ROME,
    _HERMES_ROME,
    '{"name": "get_weather", "arguments": {"city": "Rome"}}',
    '```json\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n```',
    '{"temp": 20}',
    "<think>thinking about it</think>",
    "<think>",
    "</think>",
    "<tool_response>",
    "</tool_response>",
    '<tool_response>\n{"result": "Rome: sunny"}\n</tool_response>',
    # Near-JSON as Qwen2.5-Coder-0.5B writes it (repair.py).
    '{"name": "get_weather", "arguments": {"city": "Rome"}]}',
    '{"name": "get_weather", "arguments": {"city": "Rome",}}',
    '{"name": "get_weather", "arguments": {"city": "Rome"}}}',
    "<tool_call>",
    "</tool_call>",
    "<function=get_weather>",
    "<parameter=city>",
    "</parameter>",
    "</function>",
    '<tool_call>{"name": "get_weather", "arguments": {"city": </tool_call>',
    # The 2026 families (`tests/fixtures/families/families.json`) and their
    # markers alone.
    *(case["reply"] for case in _FAMILIES["calls"]),
    *(case["reply"] for case in _FAMILIES["answers"]),
    *FAMILY_MARKERS,
    '<|"|>',
    "<|channel|>analysis<|message|>",
    "<|start|>assistant",
    "functools[",
    "functools",
    "thought\n",
    "call:get_weather{",
    "get_weather{",
    "get_weather(",
    "[get_weather(",
    'city="Rome")',
    ")]",
    "<arg_key>city</arg_key>",
    "<arg_value>Rome</arg_value>",
    "<escape>",
    "<b>",
    " 3 < 5 ",
    "```",
    "```json\n",
    "\n",
    "\n\n",
    "[",
    "{",
    "}",
    '"',
    "\\",
    "`",
    "<",
    " ",
]
