"""Real Jinja chat templates of the model families our users run, rendered
the way Hugging Face's `apply_chat_template` and llama.cpp's server do.

The templates come from llama.cpp's own test set (`models/templates/` of the
llama.cpp vendored in the llama-cpp-python sdist on PyPI): fetched once into
`.models/chat_templates/` by `scripts/fetch_models.py chat-templates`.
"""

from __future__ import annotations

from datetime import datetime
import json
from pathlib import Path
import subprocess
import sys
from typing import Any

from jinja2 import TemplateError
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES_DIR = ROOT / ".models" / "chat_templates"

# Family -> template file in llama.cpp's test set.
FAMILIES = {
    "qwen2.5": "Qwen-Qwen2.5-7B-Instruct.jinja",
    "qwen3": "Qwen-Qwen3-0.6B.jinja",
    "qwen3.5": "Qwen3.5-4B.jinja",
    "llama3.1": "meta-llama-Llama-3.1-8B-Instruct.jinja",
    "llama3.2": "meta-llama-Llama-3.2-3B-Instruct.jinja",
    "llama3.3": "meta-llama-Llama-3.3-70B-Instruct.jinja",
    "mistral-nemo": "mistralai-Mistral-Nemo-Instruct-2407.jinja",
    "mistral-small-3.2": "Mistral-Small-3.2-24B-Instruct-2506.jinja",
    "ministral-3": "mistralai-Ministral-3-14B-Reasoning-2512.jinja",
    "gemma4": "google-gemma-4-31B-it.jinja",
}


def templates_dir() -> Path:
    """Where the templates are, fetching them the first time (from PyPI)."""
    if not any(TEMPLATES_DIR.glob("*.jinja")):
        subprocess.run(  # noqa: S603 (our own script, fixed arguments)
            [sys.executable, str(ROOT / "scripts/fetch_models.py"), "chat-templates"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return TEMPLATES_DIR


def _raise(message: str) -> None:
    raise TemplateError(message)


def _tojson(
    value: Any,
    indent: int | None = None,
    ensure_ascii: bool = False,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    return json.dumps(
        value,
        ensure_ascii=ensure_ascii,
        indent=indent,
        separators=separators,
        sort_keys=sort_keys,
    )


_ENV = ImmutableSandboxedEnvironment(
    trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
)
_ENV.globals["raise_exception"] = _raise
_ENV.globals["strftime_now"] = lambda fmt: datetime(2026, 11, 30, 21, 5).strftime(fmt)
_ENV.filters["tojson"] = _tojson


def _as_template_sees_it(message: dict[str, Any]) -> dict[str, Any]:
    """Call arguments as objects, as llama.cpp hands them to templates."""
    if "tool_calls" not in message:
        return message
    calls = [
        {
            **call,
            "function": {
                **call["function"],
                "arguments": json.loads(call["function"]["arguments"]),
            },
        }
        for call in message["tool_calls"]
    ]
    return {**message, "tool_calls": calls}


def render(family: str, body: dict[str, Any], *, generation: bool = True) -> str:
    """The prompt a server builds from a chat-completions request body.

    Raises `jinja2.TemplateError` when the template refuses the messages.
    """
    source = (templates_dir() / FAMILIES[family]).read_text(encoding="utf-8")
    return _ENV.from_string(source).render(
        messages=[_as_template_sees_it(m) for m in body["messages"]],
        tools=body.get("tools"),
        add_generation_prompt=generation,
        bos_token="<s>",
        eos_token="</s>",
    )
