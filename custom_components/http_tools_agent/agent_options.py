"""An agent's settings (its subentry) and the request fields they add.

Besides the model and its sampling, an agent may switch the model's thinking
on or off (sent the way its server understands it), add fields of its own
to every request (`extra_body`: `top_k`, `min_p`, `cache_prompt`,
`id_slot`, …), cap the tool calls of a turn, and show the model examples.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import json
from typing import Any, Literal

from .agent_settings import SETTINGS, read_settings
from .const import (
    CONF_CHAIN_CALLS,
    CONF_CONFIRM_INTENTS,
    CONF_CONFIRM_OTHER_TOOLS,
    CONF_CUSTOM_EXAMPLES,
    CONF_EXAMPLES,
    CONF_EXTRA_BODY,
    CONF_HISTORY,
    CONF_HISTORY_TURNS,
    CONF_MAX_CALLS_PER_TURN,
    CONF_MAX_TOKENS,
    CONF_MODEL,
    CONF_PROFILE,
    CONF_STREAM,
    CONF_TEMPERATURE,
    CONF_THINKING,
    CONF_TOOL_CHOICE,
    CONF_TOOL_SEARCH,
    CONF_VISION,
    CONF_WARM_UP,
    DEFAULT_MODEL,
)
from .engine.confirm import DEFAULT_ASK_OTHERS, AskOthers
from .engine.words import word_set

type ToolChoice = Literal["auto", "required", "none"]

_TOOL_CHOICES: dict[str, ToolChoice] = {
    "auto": "auto",
    "required": "required",
    "none": "none",
}

# Request fields the agent sets itself: an extra body may not replace them
# (the tool loop depends on them, or the agent has a setting for them).
RESERVED_FIELDS = word_set("""
    model messages tools tool_choice functions function_call stream
    stream_options temperature max_tokens
""")


def extra_body_problem(value: object) -> tuple[str, dict[str, str]] | None:
    """Why `value` cannot be an agent's extra request body, or None.

    Returns a config-flow error key and its placeholders.
    """
    if value is None or value == "":
        return None
    if not isinstance(value, Mapping):
        return "extra_body_not_object", {}
    if reserved := sorted(RESERVED_FIELDS.intersection(value)):
        return "extra_body_reserved", {"fields": ", ".join(reserved)}
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as err:
        return "extra_body_not_json", {"error": str(err)}
    return None


def thinking_fields(mode: str, server_kind: str) -> dict[str, Any]:
    """The request fields that switch thinking `on` or `off` on a server.

    llama.cpp's `llama-server` and vLLM pass `chat_template_kwargs` to the
    model's chat template (Qwen 3 and others read `enable_thinking`); Ollama's
    `/v1` endpoint reads `reasoning_effort` (`none` switches thinking off).
    OpenAI's models take no such switch: nothing is sent there. `auto` sends
    nothing anywhere.
    """
    if mode not in ("on", "off") or server_kind == "openai":
        return {}
    if server_kind == "ollama":
        return {"reasoning_effort": "medium" if mode == "on" else "none"}
    return {"chat_template_kwargs": {"enable_thinking": mode == "on"}}


def request_extra(
    extra_body: Mapping[str, Any], thinking: Mapping[str, Any]
) -> dict[str, Any]:
    """The agent's extra body with the thinking fields merged into it.

    The thinking setting wins over the same key in the extra body; other
    `chat_template_kwargs` of the extra body are kept. Reserved fields are
    never sent (a stored body from before a field was reserved).
    """
    merged = {k: v for k, v in extra_body.items() if k not in RESERVED_FIELDS}
    for key, value in thinking.items():
        current = merged.get(key)
        if isinstance(value, dict) and isinstance(current, Mapping):
            merged[key] = {**current, **value}
        else:
            merged[key] = value
    return merged


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """What an agent (subentry) asks the server for."""

    model: str
    temperature: float
    max_tokens: int
    tool_choice: ToolChoice
    stream: bool
    thinking: str = SETTINGS[CONF_THINKING].default
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    max_calls_per_turn: int = SETTINGS[CONF_MAX_CALLS_PER_TURN].default
    # `auto`, `small` or `capable` (`server/profiles.py`).
    profile: str = SETTINGS[CONF_PROFILE].default
    # Whether the model may call tools again after their results came in;
    # None: as the profile says.
    chain_calls: bool | None = None
    examples: str = SETTINGS[CONF_EXAMPLES].default
    custom_examples: str = ""
    # What the model is sent of earlier turns (`turn/request.py`).
    history: str = SETTINGS[CONF_HISTORY].default
    history_turns: int = SETTINGS[CONF_HISTORY_TURNS].default
    # Whether the prompt's start is sent ahead (`server/warm_up.py`).
    warm_up: str = SETTINGS[CONF_WARM_UP].default
    # Ask before Assist unlocks, opens a garage door or gate, or touches an
    # alarm panel (`turn/sensitive.py`).
    confirm_intents: bool = False
    # Whether a tool's image goes to the model as a picture: `auto` (when
    # the server says the model reads images), `on` or `off`
    # (`server/info.py` `reads_images`).
    vision: str = SETTINGS[CONF_VISION].default
    # Which calls of other LLM APIs' tools (an MCP server's) wait for the
    # user's yes, by what the tools say they do (`engine/confirm.py`).
    confirm_other_tools: AskOthers = DEFAULT_ASK_OTHERS
    # How many HTTP tools are shown (`turn/tool_search.py`).
    tool_search: str = SETTINGS[CONF_TOOL_SEARCH].default

    @classmethod
    def from_subentry(cls, data: Mapping[str, Any]) -> AgentOptions:
        """Read the settings (`agent_settings.AGENT_SETTINGS`: the defaults
        where a value is missing or no longer valid)."""
        values = read_settings(data)
        return cls(
            model=str(data.get(CONF_MODEL) or DEFAULT_MODEL),
            temperature=values[CONF_TEMPERATURE],
            max_tokens=values[CONF_MAX_TOKENS],
            tool_choice=_TOOL_CHOICES[values[CONF_TOOL_CHOICE]],
            stream=values[CONF_STREAM],
            thinking=values[CONF_THINKING],
            extra_body=values[CONF_EXTRA_BODY],
            max_calls_per_turn=values[CONF_MAX_CALLS_PER_TURN],
            profile=values[CONF_PROFILE],
            chain_calls={"on": True, "off": False}.get(values[CONF_CHAIN_CALLS]),
            examples=values[CONF_EXAMPLES],
            custom_examples=values[CONF_CUSTOM_EXAMPLES],
            history=values[CONF_HISTORY],
            history_turns=values[CONF_HISTORY_TURNS],
            warm_up=values[CONF_WARM_UP],
            confirm_intents=values[CONF_CONFIRM_INTENTS],
            vision=values[CONF_VISION],
            confirm_other_tools=AskOthers(values[CONF_CONFIRM_OTHER_TOOLS]),
            tool_search=values[CONF_TOOL_SEARCH],
        )
