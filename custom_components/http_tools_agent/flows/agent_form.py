"""The agent (subentry) form: its fields, and its values to and from storage.

Settings for small local models sit in a collapsed `advanced` section of
the form; they are stored flat in the subentry's data, like the others.
"""

from __future__ import annotations

from typing import Any

from homeassistant.const import CONF_LLM_HASS_API, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import SectionConfig, section
from homeassistant.helpers import llm, translation
from homeassistant.helpers.selector import (
    BooleanSelector,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    ObjectSelector,
    SelectOptionDict,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TemplateSelector,
    TextSelector,
    TextSelectorConfig,
)
import probatio

from ..agent_options import extra_body_problem
from ..const import (
    CHAIN_CALLS_CHOICES,
    CONF_ADVANCED,
    CONF_AGENT_TOOLS,
    CONF_CHAIN_CALLS,
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
    CONF_WARM_UP,
    DEFAULT_CHAIN_CALLS,
    DEFAULT_EXAMPLES,
    DEFAULT_MAX_CALLS_PER_TURN,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODEL,
    DEFAULT_PROFILE,
    DEFAULT_STREAM,
    DEFAULT_TEMPERATURE,
    DEFAULT_THINKING,
    DEFAULT_TOOL_CHOICE,
    DEFAULT_WARM_UP,
    DOMAIN,
    EXAMPLES_CHOICES,
    PROFILE_CHOICES,
    THINKING_CHOICES,
    TOOL_CHOICES,
    WARM_UP_CHOICES,
)
from ..server.profiles import ProfileChoice
from ..tools.agent_tools import chosen_tools
from ..turn.history import DEFAULT_HISTORY_TURNS, HISTORY_CHOICES, HISTORY_PROFILE

# The agent settings shown in the form's collapsed "advanced" section.
ADVANCED_FIELDS = (
    CONF_THINKING,
    CONF_MAX_CALLS_PER_TURN,
    CONF_CHAIN_CALLS,
    CONF_HISTORY,
    CONF_HISTORY_TURNS,
    CONF_EXAMPLES,
    CONF_CUSTOM_EXAMPLES,
    CONF_EXTRA_BODY,
    CONF_WARM_UP,
)


def default_agent_data(api_id: str, models: list[str]) -> dict[str, Any]:
    """Return the settings of a new agent: this entry's tools, auto tool choice."""
    return {
        CONF_MODEL: models[0] if models else DEFAULT_MODEL,
        CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
        CONF_LLM_HASS_API: [api_id],
        CONF_TEMPERATURE: DEFAULT_TEMPERATURE,
        CONF_MAX_TOKENS: DEFAULT_MAX_TOKENS,
        CONF_TOOL_CHOICE: DEFAULT_TOOL_CHOICE,
        CONF_STREAM: DEFAULT_STREAM,
        CONF_PROFILE: DEFAULT_PROFILE,
        CONF_THINKING: DEFAULT_THINKING,
        CONF_MAX_CALLS_PER_TURN: DEFAULT_MAX_CALLS_PER_TURN,
        CONF_CHAIN_CALLS: DEFAULT_CHAIN_CALLS,
        CONF_EXAMPLES: DEFAULT_EXAMPLES,
        CONF_WARM_UP: DEFAULT_WARM_UP,
    }


def agent_schema(
    hass: HomeAssistant,
    models: list[str],
    current: dict[str, Any],
    tool_names: list[str] | None = None,
) -> probatio.Schema:
    """Return the form of an agent's settings.

    `tool_names`: the server's configured tools the agent may choose from;
    a chosen name that is gone stays listed, marked missing, until deselected.
    """
    apis = [
        SelectOptionDict(label=api.name, value=api.id)
        for api in llm.async_get_apis(hass)
    ]
    model_options = list(
        dict.fromkeys([*models, current.get(CONF_MODEL) or DEFAULT_MODEL])
    )
    return probatio.Schema(
        {
            probatio.Required(CONF_MODEL): SelectSelector(
                SelectSelectorConfig(
                    options=model_options,
                    mode=SelectSelectorMode.DROPDOWN,
                    custom_value=True,
                    sort=True,
                )
            ),
            probatio.Optional(CONF_PROMPT): TemplateSelector(),
            probatio.Optional(CONF_LLM_HASS_API): SelectSelector(
                SelectSelectorConfig(options=apis, multiple=True)
            ),
            probatio.Required(CONF_TEMPERATURE): NumberSelector(
                NumberSelectorConfig(min=0, max=2, step=0.05)
            ),
            probatio.Required(CONF_MAX_TOKENS): NumberSelector(
                NumberSelectorConfig(
                    min=16, max=32768, step=1, mode=NumberSelectorMode.BOX
                )
            ),
            probatio.Required(CONF_TOOL_CHOICE): _dropdown(
                TOOL_CHOICES, CONF_TOOL_CHOICE
            ),
            probatio.Required(CONF_STREAM): BooleanSelector(),
            probatio.Required(CONF_PROFILE, default=DEFAULT_PROFILE): _dropdown(
                PROFILE_CHOICES, CONF_PROFILE
            ),
            probatio.Optional(CONF_AGENT_TOOLS): SelectSelector(
                SelectSelectorConfig(
                    options=_tool_options(tool_names or [], chosen_tools(current)),
                    multiple=True,
                )
            ),
            probatio.Optional(CONF_ADVANCED): section(
                _advanced_schema(), SectionConfig(collapsed=True)
            ),
        }
    )


def _advanced_schema() -> probatio.Schema:
    """Settings for small local models (collapsed in the form)."""
    return probatio.Schema(
        {
            probatio.Required(CONF_THINKING, default=DEFAULT_THINKING): _dropdown(
                THINKING_CHOICES, CONF_THINKING
            ),
            probatio.Required(
                CONF_MAX_CALLS_PER_TURN, default=DEFAULT_MAX_CALLS_PER_TURN
            ): NumberSelector(
                NumberSelectorConfig(min=1, max=64, step=1, mode=NumberSelectorMode.BOX)
            ),
            probatio.Required(CONF_CHAIN_CALLS, default=DEFAULT_CHAIN_CALLS): _dropdown(
                CHAIN_CALLS_CHOICES, CONF_CHAIN_CALLS
            ),
            probatio.Required(CONF_HISTORY, default=HISTORY_PROFILE): _dropdown(
                HISTORY_CHOICES, CONF_HISTORY
            ),
            probatio.Required(
                CONF_HISTORY_TURNS, default=DEFAULT_HISTORY_TURNS
            ): NumberSelector(
                NumberSelectorConfig(min=0, max=50, step=1, mode=NumberSelectorMode.BOX)
            ),
            probatio.Required(CONF_EXAMPLES, default=DEFAULT_EXAMPLES): _dropdown(
                EXAMPLES_CHOICES, CONF_EXAMPLES
            ),
            probatio.Optional(CONF_CUSTOM_EXAMPLES): TextSelector(
                TextSelectorConfig(multiline=True)
            ),
            probatio.Optional(CONF_EXTRA_BODY): ObjectSelector(),
            probatio.Required(CONF_WARM_UP, default=DEFAULT_WARM_UP): _dropdown(
                WARM_UP_CHOICES, CONF_WARM_UP
            ),
        }
    )


def agent_form_values(data: dict[str, Any]) -> dict[str, Any]:
    """Stored agent settings as the form shows them (the section nested)."""
    values = {k: v for k, v in data.items() if k not in ADVANCED_FIELDS}
    values[CONF_ADVANCED] = {k: data[k] for k in ADVANCED_FIELDS if k in data}
    return values


def agent_data_from_form(
    user_input: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """The agent settings to store from the form (the section flattened),
    with the form errors and their placeholders."""
    advanced = dict(user_input.get(CONF_ADVANCED) or {})
    data = {k: v for k, v in user_input.items() if k != CONF_ADVANCED}
    data.update(
        {
            CONF_MAX_TOKENS: int(user_input[CONF_MAX_TOKENS]),
            CONF_TEMPERATURE: float(user_input[CONF_TEMPERATURE]),
            CONF_LLM_HASS_API: user_input.get(CONF_LLM_HASS_API) or [],
            CONF_AGENT_TOOLS: user_input.get(CONF_AGENT_TOOLS) or [],
            CONF_THINKING: advanced.get(CONF_THINKING, DEFAULT_THINKING),
            CONF_MAX_CALLS_PER_TURN: int(
                advanced.get(CONF_MAX_CALLS_PER_TURN, DEFAULT_MAX_CALLS_PER_TURN)
            ),
            CONF_PROFILE: user_input.get(CONF_PROFILE, DEFAULT_PROFILE),
            CONF_CHAIN_CALLS: advanced.get(CONF_CHAIN_CALLS, DEFAULT_CHAIN_CALLS),
            CONF_EXAMPLES: advanced.get(CONF_EXAMPLES, DEFAULT_EXAMPLES),
            CONF_HISTORY: advanced.get(CONF_HISTORY, HISTORY_PROFILE),
            CONF_HISTORY_TURNS: int(
                advanced.get(CONF_HISTORY_TURNS, DEFAULT_HISTORY_TURNS)
            ),
            CONF_WARM_UP: advanced.get(CONF_WARM_UP, DEFAULT_WARM_UP),
        }
    )
    if custom := str(advanced.get(CONF_CUSTOM_EXAMPLES) or "").strip():
        data[CONF_CUSTOM_EXAMPLES] = custom
    extra = advanced.get(CONF_EXTRA_BODY)
    if problem := extra_body_problem(extra):
        key, placeholders = problem
        return data, {"base": key}, placeholders
    if extra:
        data[CONF_EXTRA_BODY] = dict(extra)
    return data, {}, {}


def _tool_options(names: list[str], chosen: list[str]) -> list[SelectOptionDict]:
    options = [SelectOptionDict(label=name, value=name) for name in names]
    options += [
        SelectOptionDict(label=f"{name} (missing)", value=name)
        for name in chosen
        if name not in names
    ]
    return options


def _dropdown(options: tuple[str, ...], key: str) -> SelectSelector:
    """A dropdown of translated choices."""
    return SelectSelector(
        SelectSelectorConfig(
            options=list(options),
            mode=SelectSelectorMode.DROPDOWN,
            translation_key=key,
        )
    )


async def async_profile_decision(hass: HomeAssistant, choice: ProfileChoice) -> str:
    """What `auto` decided for a model, and why, in Home Assistant's language."""
    key = f"{choice.profile.value}_{choice.evidence.value}"
    for language in dict.fromkeys((hass.config.language, "en")):
        strings = await translation.async_get_translations(
            hass, language, "selector", [DOMAIN]
        )
        if text := strings.get(
            f"component.{DOMAIN}.selector.profile_decision.options.{key}"
        ):
            return text.replace("{size}", choice.size)
    return choice.describe()
