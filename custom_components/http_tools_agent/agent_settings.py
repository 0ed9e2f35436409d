"""The agent's settings in one table: key, default, choices, form section.

`AgentOptions.from_subentry` reads a subentry through it and the agent form
(`flows/agent_form.py`) builds its fields, defaults and sections from it, so
a setting's default and choices are written once. The model, the prompt,
the LLM APIs and the HTTP tools are settings too, but their fields depend on
the server and on Home Assistant (a model list, the APIs, the server's
tools): the form builds those itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .const import (
    CHAIN_CALLS_CHOICES,
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
    CONF_PROFILE,
    CONF_STREAM,
    CONF_TEMPERATURE,
    CONF_THINKING,
    CONF_TOOL_CHOICE,
    CONF_TOOL_SEARCH,
    CONF_VISION,
    CONF_WARM_UP,
    DEFAULT_CHAIN_CALLS,
    DEFAULT_EXAMPLES,
    DEFAULT_HISTORY_TURNS,
    DEFAULT_MAX_CALLS_PER_TURN,
    DEFAULT_MAX_TOKENS,
    DEFAULT_PROFILE,
    DEFAULT_STREAM,
    DEFAULT_TEMPERATURE,
    DEFAULT_THINKING,
    DEFAULT_TOOL_CHOICE,
    DEFAULT_TOOL_SEARCH,
    DEFAULT_VISION,
    DEFAULT_WARM_UP,
    EXAMPLES_CHOICES,
    HISTORY_CHOICES,
    HISTORY_PROFILE,
    PROFILE_CHOICES,
    THINKING_CHOICES,
    TOOL_CHOICES,
    TOOL_SEARCH_CHOICES,
    VISION_CHOICES,
    WARM_UP_CHOICES,
)
from .engine.confirm import DEFAULT_ASK_OTHERS, AskOthers


class Section(StrEnum):
    """Where the form shows a setting."""

    MAIN = "main"
    # The collapsed section of settings for small local models.
    ADVANCED = "advanced"


class Kind(StrEnum):
    """What a setting holds, and so which field the form shows."""

    CHOICE = "choice"
    BOOLEAN = "boolean"
    INTEGER = "integer"
    NUMBER = "number"
    TEXT = "text"
    OBJECT = "object"


@dataclass(frozen=True, slots=True)
class Setting:
    """One agent setting."""

    key: str
    kind: Kind
    default: Any
    section: Section = Section.MAIN
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    step: float = 1
    # A number typed in a box rather than set with a slider.
    box: bool = True
    # Optional settings may be left empty in the form (nothing is stored).
    optional: bool = False

    def read(self, data: Mapping[str, Any]) -> Any:
        """The stored value, or the default where it is missing or no longer
        valid (a choice an older version stored, a number out of range)."""
        value = data.get(self.key, self.default)
        try:
            match self.kind:
                case Kind.CHOICE:
                    return value if value in self.choices else self.default
                case Kind.BOOLEAN:
                    return bool(value)
                case Kind.INTEGER:
                    return self._clamp(int(value))
                case Kind.NUMBER:
                    return self._clamp(float(value))
                case Kind.TEXT:
                    return str(value or "")
                case Kind.OBJECT:
                    return dict(value) if isinstance(value, Mapping) else {}
        except TypeError, ValueError:
            return self.default
        raise AssertionError(self.kind)  # pragma: no cover - every kind above

    def _clamp[N: (int, float)](self, value: N) -> N:
        if self.minimum is not None and value < self.minimum:
            return type(value)(self.minimum)
        if self.maximum is not None and value > self.maximum:
            return type(value)(self.maximum)
        return value


_ADVANCED = Section.ADVANCED

AGENT_SETTINGS: tuple[Setting, ...] = (
    Setting(
        CONF_TEMPERATURE,
        Kind.NUMBER,
        DEFAULT_TEMPERATURE,
        minimum=0,
        maximum=2,
        step=0.05,
        box=False,
    ),
    Setting(
        CONF_MAX_TOKENS, Kind.INTEGER, DEFAULT_MAX_TOKENS, minimum=16, maximum=32768
    ),
    Setting(CONF_TOOL_CHOICE, Kind.CHOICE, DEFAULT_TOOL_CHOICE, choices=TOOL_CHOICES),
    Setting(CONF_STREAM, Kind.BOOLEAN, DEFAULT_STREAM),
    Setting(CONF_PROFILE, Kind.CHOICE, DEFAULT_PROFILE, choices=PROFILE_CHOICES),
    Setting(CONF_CONFIRM_INTENTS, Kind.BOOLEAN, False),
    Setting(CONF_VISION, Kind.CHOICE, DEFAULT_VISION, choices=VISION_CHOICES),
    Setting(
        CONF_CONFIRM_OTHER_TOOLS,
        Kind.CHOICE,
        DEFAULT_ASK_OTHERS.value,
        choices=tuple(mode.value for mode in AskOthers),
    ),
    Setting(CONF_THINKING, Kind.CHOICE, DEFAULT_THINKING, _ADVANCED, THINKING_CHOICES),
    Setting(
        CONF_MAX_CALLS_PER_TURN,
        Kind.INTEGER,
        DEFAULT_MAX_CALLS_PER_TURN,
        _ADVANCED,
        minimum=1,
        maximum=64,
    ),
    Setting(
        CONF_CHAIN_CALLS,
        Kind.CHOICE,
        DEFAULT_CHAIN_CALLS,
        _ADVANCED,
        CHAIN_CALLS_CHOICES,
    ),
    Setting(CONF_HISTORY, Kind.CHOICE, HISTORY_PROFILE, _ADVANCED, HISTORY_CHOICES),
    Setting(
        CONF_HISTORY_TURNS,
        Kind.INTEGER,
        DEFAULT_HISTORY_TURNS,
        _ADVANCED,
        minimum=0,
        maximum=50,
    ),
    Setting(CONF_EXAMPLES, Kind.CHOICE, DEFAULT_EXAMPLES, _ADVANCED, EXAMPLES_CHOICES),
    Setting(CONF_CUSTOM_EXAMPLES, Kind.TEXT, "", _ADVANCED, optional=True),
    Setting(CONF_EXTRA_BODY, Kind.OBJECT, {}, _ADVANCED, optional=True),
    Setting(CONF_WARM_UP, Kind.CHOICE, DEFAULT_WARM_UP, _ADVANCED, WARM_UP_CHOICES),
    Setting(
        CONF_TOOL_SEARCH,
        Kind.CHOICE,
        DEFAULT_TOOL_SEARCH,
        _ADVANCED,
        TOOL_SEARCH_CHOICES,
    ),
)

SETTINGS: Mapping[str, Setting] = {setting.key: setting for setting in AGENT_SETTINGS}

ADVANCED_KEYS: tuple[str, ...] = tuple(
    setting.key for setting in AGENT_SETTINGS if setting.section is _ADVANCED
)


def setting_defaults() -> dict[str, Any]:
    """A new agent's value of every setting that has one."""
    return {
        setting.key: setting.default
        for setting in AGENT_SETTINGS
        if not setting.optional
    }


def read_settings(data: Mapping[str, Any]) -> dict[str, Any]:
    """Every setting's value in `data`, the default where it has none."""
    return {setting.key: setting.read(data) for setting in AGENT_SETTINGS}
