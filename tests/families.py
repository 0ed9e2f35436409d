"""The replies of each model family (`tests/fixtures/families/families.json`).

One raw reply per family to "What's the weather in Rome?" with a
`get_weather` tool, as the model writes it when the server does not parse
its calls, and a few answers that carry thinking. No Home Assistant import:
the engine tests use it too.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

_DATA = json.loads(
    (Path(__file__).parent / "fixtures" / "families" / "families.json").read_text(
        encoding="utf-8"
    )
)
CALLS: list[dict[str, Any]] = _DATA["calls"]
ANSWERS: list[dict[str, Any]] = _DATA["answers"]

# What a family's reply leaves when it leaks: every marker the families
# write, and the thinking of the fixtures.
LEAKS = (
    "<|",
    "|>",
    "<tool_call",
    "tool_call|>",
    "</tool_call>",
    "<function",
    "<parameter",
    "<think",
    "</think>",
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "[THINK]",
    "[/THINK]",
    "functools",
    "<TOOLCALL>",
    "</TOOLCALL>",
    "<start_function_call>",
    "<end_function_call>",
    "<escape>",
    "<arg_key>",
    "<arg_value>",
    "call:",
    "get_weather",
    "</s>",
    "thought",
    "The user",
    "Okay, the user",
    "Need to get",
    "```",
)


def pieces(text: str, size: int = 3) -> list[str]:
    """`text` in small pieces, as a server streams it."""
    return [text[i : i + size] for i in range(0, len(text), size)]
