"""Options flow: the entry's tools, tools file and how tools run.

The menu offers the settings form and a shortcut that fills the form's tools
editor with the bundled `tools.example.json`. The tools are edited as JSON
text (the file and service format); invalid JSON or definitions, and a tools
file that cannot be read or is invalid, show a form error and save nothing.
Saved options reload the entry (its update listener), so they apply at once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from homeassistant.config_entries import (
    ConfigEntryState,
    ConfigFlowResult,
    OptionsFlow,
)
from homeassistant.helpers.selector import (
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
)
import probatio

from .const import (
    CONF_MAX_TOOL_ITERATIONS,
    CONF_TOOL_RESULT_MAX_CHARS,
    CONF_TOOL_TIMEOUT,
    CONF_TOOLS,
    CONF_TOOLS_ENABLED,
    CONF_TOOLS_FILE,
    DEFAULT_MAX_TOOL_ITERATIONS,
    DEFAULT_TOOL_RESULT_MAX_CHARS,
    DEFAULT_TOOL_TIMEOUT,
    TOOLS_ENABLED_AUTO,
    TOOLS_ENABLED_CHOICES,
)
from .engine.definitions import ToolDefinitionError, parse_tools_json
from .tools import ToolsFileError, async_read_tools_file

EXAMPLE_FILE = Path(__file__).parent / "tools.example.json"

STEP_SETTINGS = "settings"
STEP_LOAD_EXAMPLE = "load_example"

MIN_ITERATIONS, MAX_ITERATIONS = 1, 10
MIN_TIMEOUT, MAX_TIMEOUT = 1, 300
MIN_RESULT_CHARS, MAX_RESULT_CHARS = 100, 100_000


def tools_to_text(tools: Any) -> str:
    """Show stored tools in the editor (empty when there are none)."""
    if not tools:
        return ""
    return json.dumps(tools, indent=2, ensure_ascii=False)


def text_to_tools(text: str) -> list[Any]:
    """Validate the editor's JSON; return it decoded, as the user wrote it.

    Empty text means no tools in the options. Raises ToolDefinitionError.
    """
    text = text.removeprefix("\ufeff")
    if not text.strip():
        return []
    parse_tools_json(text)
    decoded: list[Any] = json.loads(text)
    return decoded


def read_example() -> str:
    """Return the bundled example tools (runs in the executor)."""
    return EXAMPLE_FILE.read_text(encoding="utf-8")


def settings_schema() -> probatio.Schema:
    """Return the settings form."""
    return probatio.Schema(
        {
            probatio.Optional(CONF_TOOLS): TextSelector(
                TextSelectorConfig(multiline=True)
            ),
            probatio.Optional(CONF_TOOLS_FILE): TextSelector(),
            probatio.Required(
                CONF_TOOLS_ENABLED, default=TOOLS_ENABLED_AUTO
            ): SelectSelector(
                SelectSelectorConfig(
                    options=list(TOOLS_ENABLED_CHOICES),
                    mode=SelectSelectorMode.DROPDOWN,
                    translation_key=CONF_TOOLS_ENABLED,
                )
            ),
            probatio.Required(
                CONF_MAX_TOOL_ITERATIONS, default=DEFAULT_MAX_TOOL_ITERATIONS
            ): NumberSelector(
                NumberSelectorConfig(
                    min=MIN_ITERATIONS,
                    max=MAX_ITERATIONS,
                    step=1,
                    mode=NumberSelectorMode.BOX,
                )
            ),
            probatio.Required(
                CONF_TOOL_TIMEOUT, default=DEFAULT_TOOL_TIMEOUT
            ): NumberSelector(
                NumberSelectorConfig(
                    min=MIN_TIMEOUT,
                    max=MAX_TIMEOUT,
                    step=1,
                    mode=NumberSelectorMode.BOX,
                    unit_of_measurement="s",
                )
            ),
            probatio.Required(
                CONF_TOOL_RESULT_MAX_CHARS, default=DEFAULT_TOOL_RESULT_MAX_CHARS
            ): NumberSelector(
                NumberSelectorConfig(
                    min=MIN_RESULT_CHARS,
                    max=MAX_RESULT_CHARS,
                    step=1,
                    mode=NumberSelectorMode.BOX,
                )
            ),
        }
    )


class HttpToolsOptionsFlow(OptionsFlow):
    """Edit the tools and their settings."""

    def __init__(self) -> None:
        """Start with the stored tools in the editor."""
        self._tools_text: str | None = None

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Offer the settings or the example tools."""
        return self.async_show_menu(
            step_id="init", menu_options=[STEP_SETTINGS, STEP_LOAD_EXAMPLE]
        )

    async def async_step_load_example(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Open the settings with the example tools in the editor."""
        self._tools_text = await self.hass.async_add_executor_job(read_example)
        return await self.async_step_settings()

    async def async_step_settings(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Edit and validate the options; nothing is saved while invalid."""
        errors: dict[str, str] = {}
        placeholders = self._placeholders()
        if user_input is not None:
            options = await self._async_validate(user_input, errors, placeholders)
            if options is not None:
                return self.async_create_entry(data=options)
            suggested = user_input
        else:
            suggested = self._current()
        return self.async_show_form(
            step_id=STEP_SETTINGS,
            data_schema=self.add_suggested_values_to_schema(
                settings_schema(), suggested
            ),
            errors=errors,
            description_placeholders=placeholders,
        )

    def _current(self) -> dict[str, Any]:
        options = self.config_entry.options
        return {
            CONF_TOOLS: self._tools_text
            if self._tools_text is not None
            else tools_to_text(options.get(CONF_TOOLS)),
            CONF_TOOLS_FILE: options.get(CONF_TOOLS_FILE, ""),
            CONF_TOOLS_ENABLED: options.get(CONF_TOOLS_ENABLED, TOOLS_ENABLED_AUTO),
            CONF_MAX_TOOL_ITERATIONS: options.get(
                CONF_MAX_TOOL_ITERATIONS, DEFAULT_MAX_TOOL_ITERATIONS
            ),
            CONF_TOOL_TIMEOUT: options.get(CONF_TOOL_TIMEOUT, DEFAULT_TOOL_TIMEOUT),
            CONF_TOOL_RESULT_MAX_CHARS: options.get(
                CONF_TOOL_RESULT_MAX_CHARS, DEFAULT_TOOL_RESULT_MAX_CHARS
            ),
        }

    def _placeholders(self) -> dict[str, str]:
        """What the description shows: the tools active right now."""
        placeholders = {
            "active_tools": "—",
            "count": "0",
            "source": "none",
            "tools_error": "",
        }
        placeholders["file_error"] = ""
        entry = self.config_entry
        if entry.state is ConfigEntryState.LOADED:
            active = entry.runtime_data.tools.active
            placeholders["source"] = active.source
            placeholders["count"] = str(len(active.tools))
            if active.tools:
                placeholders["active_tools"] = ", ".join(t.name for t in active.tools)
        return placeholders

    async def _async_validate(
        self,
        user_input: dict[str, Any],
        errors: dict[str, str],
        placeholders: dict[str, str],
    ) -> dict[str, Any] | None:
        """Return the options to save, or None with `errors` filled in."""
        tools: list[Any] = []
        try:
            tools = text_to_tools(str(user_input.get(CONF_TOOLS) or ""))
        except ToolDefinitionError as err:
            errors[CONF_TOOLS] = "invalid_tools"
            placeholders["tools_error"] = str(err)

        tools_file = str(user_input.get(CONF_TOOLS_FILE) or "").strip()
        if tools_file:
            try:
                await async_read_tools_file(self.hass, tools_file)
            except ToolsFileError as err:
                errors[CONF_TOOLS_FILE] = err.reason
                placeholders["file_error"] = err.detail
        if errors:
            return None
        return {
            **self.config_entry.options,
            CONF_TOOLS: tools,
            CONF_TOOLS_FILE: tools_file,
            CONF_TOOLS_ENABLED: user_input.get(CONF_TOOLS_ENABLED, TOOLS_ENABLED_AUTO),
            CONF_MAX_TOOL_ITERATIONS: int(user_input[CONF_MAX_TOOL_ITERATIONS]),
            CONF_TOOL_TIMEOUT: float(user_input[CONF_TOOL_TIMEOUT]),
            CONF_TOOL_RESULT_MAX_CHARS: int(user_input[CONF_TOOL_RESULT_MAX_CHARS]),
        }
