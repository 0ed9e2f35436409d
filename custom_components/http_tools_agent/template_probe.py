"""Whether a server's chat template takes a user message after a tool result.

The closing request asks the model to answer from the tool results. As a
user message of its own, Qwen2.5-0.5B answers in its own words three times
as often as with the same words at the end of the tool result (bench/
RESULTS.md, P4); but Mistral's templates refuse a user message there, and a
template that refuses fails the whole turn. So the agent uses a message of
its own only where the server shows its template (llama.cpp's `/props`) and
the template renders a probe conversation ending that way; everywhere else
the words stay in the tool result.

Rendered in Jinja's sandbox as llama.cpp hands messages to templates (call
arguments as objects); any error means no.
"""

from __future__ import annotations

import json
from typing import Any

from jinja2 import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

_RESULT = "probe-result-17"
_QUESTION = "probe-answer-now"
_PROBE: list[dict[str, Any]] = [
    {"role": "system", "content": "probe-system"},
    {"role": "user", "content": "probe-question"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {
                "id": "probe0001",
                "type": "function",
                "function": {"name": "probe_tool", "arguments": {"city": "x"}},
            }
        ],
    },
    {"role": "tool", "tool_call_id": "probe0001", "content": _RESULT},
    {"role": "user", "content": _QUESTION},
]
_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "probe_tool",
            "description": "probe",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]


def _raise(message: str) -> None:
    raise TemplateError(message)


def _tojson(
    value: Any,
    indent: int | None = None,
    ensure_ascii: bool = False,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    # As Hugging Face's and llama.cpp's renderers: no HTML escaping.
    return json.dumps(
        value,
        ensure_ascii=ensure_ascii,
        indent=indent,
        separators=separators,
        sort_keys=sort_keys,
    )


def takes_user_after_tool(template: str) -> bool:
    """Whether `template` renders a user message right after a tool result,
    in that order, and ends ready for the answer."""
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
    )
    env.globals["raise_exception"] = _raise
    env.globals["strftime_now"] = lambda fmt: "2026-01-01"
    env.filters["tojson"] = _tojson
    try:
        text = env.from_string(template).render(
            messages=_PROBE,
            tools=_TOOLS,
            add_generation_prompt=True,
            bos_token="",
            eos_token="",
        )
    except Exception:
        return False
    result = text.find(_RESULT)
    return 0 <= result < text.find(_QUESTION)
