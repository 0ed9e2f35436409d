"""The agent (subentry) form: its fields, and its values to and from storage.

Settings for small local models sit in a collapsed `advanced` section of
the form; they are stored flat in the subentry's data, like the others.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components.ai_task.const import DEFAULT_SYSTEM_PROMPT
from homeassistant.config_entries import ConfigEntry
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
from ..agent_settings import (
    ADVANCED_KEYS,
    AGENT_SETTINGS,
    Kind,
    Section,
    Setting,
    setting_defaults,
)
from ..const import (
    CONF_ADVANCED,
    CONF_AGENT_TOOLS,
    CONF_CONFIRM_INTENTS,
    CONF_CUSTOM_EXAMPLES,
    CONF_EXTRA_BODY,
    CONF_MODEL,
    DEFAULT_AI_TASK_NAME,
    DEFAULT_MODEL,
    DOMAIN,
    SUBENTRY_CONVERSATION,
)
from ..server.profiles import ProfileChoice
from ..tools.agent_tools import chosen_tools


def default_agent_data(
    api_id: str, models: list[str], prompt: str = llm.DEFAULT_INSTRUCTIONS_PROMPT
) -> dict[str, Any]:
    """Return the settings of a new agent: this entry's tools, the defaults,
    `prompt` (an AI task's is core's task prompt)."""
    return {
        CONF_MODEL: models[0] if models else DEFAULT_MODEL,
        CONF_PROMPT: prompt,
        CONF_LLM_HASS_API: [api_id],
        **setting_defaults(),
    }


def default_task_data(api_id: str, models: list[str]) -> dict[str, Any]:
    """The settings of a new AI task: an agent's, with core's task prompt."""
    return default_agent_data(api_id, models, DEFAULT_SYSTEM_PROMPT)


def first_agent_model(entry: ConfigEntry) -> str:
    """The model of the entry's first agent (what its title names)."""
    for subentry in entry.get_subentries_of_type(SUBENTRY_CONVERSATION):
        return str(subentry.data.get(CONF_MODEL) or DEFAULT_MODEL)
    return DEFAULT_MODEL


async def async_task_title(hass: HomeAssistant) -> str:
    """The first AI task's title, in Home Assistant's language."""
    return await _async_string(hass, "common", "ai_task_name") or DEFAULT_AI_TASK_NAME


def agent_schema(
    hass: HomeAssistant,
    models: list[str],
    current: dict[str, Any],
    tool_names: list[str] | None = None,
    *,
    task: bool = False,
) -> probatio.Schema:
    """Return the form of an agent's settings (`task`: an AI task's, which
    has nobody to ask before Assist unlocks or opens).

    `tool_names`: the server's configured tools the agent may choose from;
    a chosen name that is gone stays listed, marked missing, until deselected.
    """
    main = {
        marker: selector
        for marker, selector in _fields(Section.MAIN).items()
        if not (task and marker.schema == CONF_CONFIRM_INTENTS)
    }
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
            **main,
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
    return probatio.Schema(_fields(Section.ADVANCED))


def _fields(where: Section) -> dict[Any, Any]:
    """The form's fields for the table's settings shown in `where`."""
    fields: dict[Any, Any] = {}
    for setting in AGENT_SETTINGS:
        if setting.section is not where:
            continue
        marker = (
            probatio.Optional(setting.key)
            if setting.optional
            else probatio.Required(setting.key, default=setting.default)
        )
        fields[marker] = _selector(setting)
    return fields


def _selector(setting: Setting) -> Any:
    """The field a setting is edited with."""
    match setting.kind:
        case Kind.CHOICE:
            return _dropdown(setting.choices, setting.key)
        case Kind.BOOLEAN:
            return BooleanSelector()
        case Kind.INTEGER | Kind.NUMBER:
            config = NumberSelectorConfig(
                step=setting.step,
                mode=NumberSelectorMode.BOX
                if setting.box
                else NumberSelectorMode.SLIDER,
            )
            if setting.minimum is not None:
                config["min"] = setting.minimum
            if setting.maximum is not None:
                config["max"] = setting.maximum
            return NumberSelector(config)
        case Kind.TEXT:
            return TextSelector(TextSelectorConfig(multiline=True))
        case Kind.OBJECT:
            return ObjectSelector()
    raise AssertionError(setting.kind)  # pragma: no cover - every kind above


def agent_form_values(data: dict[str, Any]) -> dict[str, Any]:
    """Stored agent settings as the form shows them (the section nested)."""
    values = {k: v for k, v in data.items() if k not in ADVANCED_KEYS}
    values[CONF_ADVANCED] = {k: data[k] for k in ADVANCED_KEYS if k in data}
    return values


def agent_data_from_form(
    user_input: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """The agent settings to store from the form (the section flattened),
    with the form errors and their placeholders."""
    advanced = dict(user_input.get(CONF_ADVANCED) or {})
    data = {k: v for k, v in user_input.items() if k != CONF_ADVANCED}
    data[CONF_LLM_HASS_API] = user_input.get(CONF_LLM_HASS_API) or []
    data[CONF_AGENT_TOOLS] = user_input.get(CONF_AGENT_TOOLS) or []
    for setting in AGENT_SETTINGS:
        if setting.optional:
            continue
        given = advanced if setting.section is Section.ADVANCED else user_input
        # The form sends numbers as floats; the table says what is stored.
        data[setting.key] = setting.read(given)
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
    text = await _async_string(
        hass,
        "selector",
        f"profile_decision.options.{choice.profile.value}_{choice.evidence.value}",
    )
    return text.replace("{size}", choice.size) if text else choice.describe()


async def _async_string(hass: HomeAssistant, category: str, path: str) -> str | None:
    """One of this integration's strings in Home Assistant's language, else
    in English; None when neither has it."""
    for language in dict.fromkeys((hass.config.language, "en")):
        strings = await translation.async_get_translations(
            hass, language, category, [DOMAIN]
        )
        if text := strings.get(f"component.{DOMAIN}.{category}.{path}"):
            return text
    return None
