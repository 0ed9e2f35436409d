"""Options flow: the tool editor, the secrets, the settings and the JSON editor.

The menu lists the tools by name and offers: add, edit or delete a tool (one
form per tool: `flows/tool_form.py` its fields, `flows/tool_from_form.py`
its values back as a checked definition), try a tool's request with typed
arguments before or after saving it (`flows/try_it.py`), add one from a
curl command (`flows/curl.py`: the editor opens with its draft), import
tools from an OpenAPI document (`flows/openapi.py`) and refresh them from
its URL (`flows/openapi_refresh.py`), the secrets (a password field; values are
never shown back), the settings with the whole-array JSON editor (import and
export) and a shortcut that fills that editor with `tools.example.json`.
Every form checks everything before saving; an invalid form saves nothing.
Saved options reload the entry (its update listener), so they apply at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from homeassistant.config_entries import ConfigEntryState, ConfigFlowResult
from homeassistant.helpers.selector import (
    SelectSelector,
    SelectSelectorConfig,
)
import probatio

from ..const import (
    CONF_AGENT_TOOLS,
    CONF_ALLOWED_HOSTS,
    CONF_MAX_TOOL_ITERATIONS,
    CONF_OPENAPI_SOURCES,
    CONF_SECRETS,
    CONF_TOOL_RESULT_MAX_CHARS,
    CONF_TOOL_TIMEOUT,
    CONF_TOOLS,
    CONF_TOOLS_ENABLED,
    CONF_TOOLS_FILE,
    DEFAULT_MAX_TOOL_ITERATIONS,
    DEFAULT_TOOL_RESULT_MAX_CHARS,
    DEFAULT_TOOL_TIMEOUT,
    TOOLS_ENABLED_AUTO,
)
from ..engine.curl.command import CurlError
from ..engine.curl.draft import CurlDraft
from ..engine.definitions import ToolDefinitionError, check_secrets, parse_tools
from ..engine.hosts import HostPolicy
from ..tools.agent_tools import agents, chosen_tools, renamed_choice
from ..tools.entry_tools import (
    ToolsFileError,
    async_read_tools_file,
    secrets_of,
    tools_of,
)
from ..tools.openapi_refresh import renamed_in
from .curl import (
    F_COMMAND,
    STEP_CURL,
    STEP_CURL_TOOL,
    curl_schema,
    draft_placeholders,
    read_draft,
)
from .lists import NONE_SHOWN, pick_mode
from .openapi import STEP_OPENAPI
from .openapi_refresh import STEP_OPENAPI_REFRESH, OpenApiRefreshSteps
from .settings_form import (
    read_example,
    secret_users,
    secrets_schema,
    settings_schema,
    text_to_tools,
    tools_to_text,
    validate_secrets_form,
)
from .tool_form import F_NAME, form_values, tool_schema
from .tool_from_form import ToolFormError, form_definition, form_errors
from .try_it import F_TRY_IT, TryItSteps, with_try_box

STEP_ADD_TOOL = "add_tool"
STEP_EDIT_TOOL = "edit_tool"
STEP_CHANGE_TOOL = "change_tool"
STEP_DELETE_TOOL = "delete_tool"
STEP_SECRETS = "secrets"
STEP_SETTINGS = "settings"
STEP_LOAD_EXAMPLE = "load_example"
FIELD_TOOL = "tool"
FIELD_DELETE = "tools_to_delete"


class HttpToolsOptionsFlow(OpenApiRefreshSteps, TryItSteps):
    """Edit the tools, their secrets and settings; import from OpenAPI."""

    def __init__(self) -> None:
        """Start with the stored tools."""
        self._tools_text: str | None = None
        self._editing: int | None = None
        self._draft: CurlDraft | None = None
        self._openapi_chosen = []

    # -- helpers ----------------------------------------------------------

    def _stored_tools(self) -> list[dict[str, Any]]:
        return tools_of(self.config_entry.options)

    def _secrets(self) -> dict[str, str]:
        return secrets_of(self.config_entry.options)

    def _file_tool_names(self) -> list[str]:
        entry = self.config_entry
        if entry.state is not ConfigEntryState.LOADED:
            return []
        return [t.name for t in entry.runtime_data.tools.configured.file_tools]

    def _save(self, **changes: Any) -> ConfigFlowResult:
        return self.async_create_entry(data={**self.config_entry.options, **changes})

    def _menu_placeholders(self) -> dict[str, str]:
        """The tools by name: the options' ones, the file's, the active ones."""
        stored = self._stored_tools()
        names = [
            str(t.get("name")) + (" (off)" if t.get("enabled") is False else "")
            for t in stored
        ]
        placeholders = {
            "tools": ", ".join(names) or NONE_SHOWN,
            "file_tools": ", ".join(self._file_tool_names()) or NONE_SHOWN,
            "active_tools": NONE_SHOWN,
            "count": "0",
            "source": "none",
            "secrets": ", ".join(sorted(self._secrets())) or NONE_SHOWN,
        }
        entry = self.config_entry
        if entry.state is ConfigEntryState.LOADED:
            active = entry.runtime_data.tools.active
            placeholders["source"] = active.source
            placeholders["count"] = str(len(active.tools))
            if active.tools:
                placeholders["active_tools"] = ", ".join(t.name for t in active.tools)
        return placeholders

    # -- the menu ---------------------------------------------------------

    async def async_step_init(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The tools by name, and what can be done with them."""
        options = [STEP_ADD_TOOL, STEP_CURL]
        if self._stored_tools():
            options += [STEP_EDIT_TOOL, STEP_DELETE_TOOL]
        options += self.try_menu()
        options.append(STEP_OPENAPI)
        if self.config_entry.options.get(CONF_OPENAPI_SOURCES):
            options.append(STEP_OPENAPI_REFRESH)
        options += [STEP_SECRETS, STEP_SETTINGS, STEP_LOAD_EXAMPLE]
        return self.async_show_menu(
            step_id="init",
            menu_options=options,
            description_placeholders=self._menu_placeholders(),
        )

    # -- one tool ---------------------------------------------------------

    async def async_step_add_tool(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """A new tool."""
        self._editing = None
        return await self._async_tool_form(STEP_ADD_TOOL, user_input)

    async def async_step_curl(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """A curl command, read into a draft for the editor."""
        errors: dict[str, str] = {}
        placeholders = {"curl_error": ""}
        if user_input is not None:
            try:
                self._draft = read_draft(
                    user_input,
                    taken=[str(t.get(F_NAME)) for t in self._stored_tools()],
                    secrets=self._secrets(),
                )
            except CurlError as err:
                errors[F_COMMAND] = err.problem.value
                placeholders["curl_error"] = err.detail
            else:
                self._editing = None
                return await self.async_step_curl_tool()
        return self.async_show_form(
            step_id=STEP_CURL,
            data_schema=self.add_suggested_values_to_schema(
                curl_schema(), user_input or {}
            ),
            errors=errors,
            description_placeholders=placeholders,
        )

    async def async_step_curl_tool(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The editor with the curl command's draft."""
        return await self._async_tool_form(STEP_CURL_TOOL, user_input)

    async def async_step_edit_tool(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Pick the tool to edit."""
        names = [str(t.get("name")) for t in self._stored_tools()]
        if user_input is not None and user_input.get(FIELD_TOOL) in names:
            self._editing = names.index(user_input[FIELD_TOOL])
            return await self.async_step_change_tool()
        schema = probatio.Schema(
            {
                probatio.Required(FIELD_TOOL): SelectSelector(
                    SelectSelectorConfig(options=names, mode=pick_mode(names))
                )
            }
        )
        return self.async_show_form(step_id=STEP_EDIT_TOOL, data_schema=schema)

    async def async_step_change_tool(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Edit the picked tool."""
        return await self._async_tool_form(STEP_CHANGE_TOOL, user_input)

    async def _async_tool_form(
        self,
        step_id: str,
        user_input: dict[str, Any] | None,
        *,
        shown: Mapping[str, Any] | None = None,
    ) -> ConfigFlowResult:
        """The form of one tool; `shown`: the values it opens with (default:
        the tool's)."""
        stored = self._stored_tools()
        index = self._editing
        draft = self._draft if step_id == STEP_CURL_TOOL else None
        current = stored[index] if index is not None else None
        if draft is not None:
            current = draft.definition
        # The draft's secrets are saved with the tool (those it still uses).
        secrets = self._secrets()
        pending = draft.secrets if draft is not None else {}
        errors: dict[str, str] = {}
        placeholders = {"tool": str((current or {}).get("name") or "")}
        placeholders |= draft_placeholders(draft)
        if user_input is not None:
            others = [str(t.get("name")) for i, t in enumerate(stored) if i != index]
            try:
                definition = form_definition(
                    user_input, other_names=others, secrets=[*secrets, *pending]
                )
            except ToolFormError as err:
                errors, texts = form_errors(err.problems)
                placeholders |= texts
            else:
                if user_input.get(F_TRY_IT):
                    return await self.async_try_form(step_id, user_input, definition)
                new = definition.as_dict()
                if index is None:
                    stored.append(new)
                    used = {
                        name: value
                        for name, value in pending.items()
                        if name in definition.secret_names
                    }
                    if used:
                        return self._save(
                            **{CONF_TOOLS: stored, CONF_SECRETS: secrets | used}
                        )
                    return self._save(**{CONF_TOOLS: stored})
                old = str(stored[index].get(F_NAME))
                stored[index] = new
                return self._save_renamed(stored, old, definition.name)
        else:
            placeholders |= form_errors(())[1]
        return self.async_show_form(
            step_id=step_id,
            data_schema=self.add_suggested_values_to_schema(
                with_try_box(tool_schema()),
                user_input if user_input is not None else shown or form_values(current),
            ),
            errors=errors,
            description_placeholders=placeholders,
        )

    def _save_renamed(
        self, tools: list[dict[str, Any]], old: str, new: str
    ) -> ConfigFlowResult:
        """Save the tools; agents that chose a renamed tool keep it under its
        new name.

        Options and agents change in one go, with no await between them: each
        change reloads the entry, and a reload must never see one without the
        other. Finishing the flow then finds the options unchanged.
        """
        entry = self.config_entry
        options = {**entry.options, CONF_TOOLS: tools}
        if old != new and entry.options.get(CONF_OPENAPI_SOURCES):
            # A tool imported from a URL stays followed under its new name.
            options[CONF_OPENAPI_SOURCES] = renamed_in(entry.options, old, new)
        self.hass.config_entries.async_update_entry(entry, options=options)
        for subentry in agents(entry) if old != new else []:
            names = chosen_tools(subentry.data)
            if old in names:
                self.hass.config_entries.async_update_subentry(
                    entry,
                    subentry,
                    data={
                        **subentry.data,
                        CONF_AGENT_TOOLS: renamed_choice(names, old, new),
                    },
                )
        return self.async_create_entry(data=options)

    async def async_step_delete_tool(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Delete tools; agents that chose them are told in Repairs."""
        stored = self._stored_tools()
        names = [str(t.get(F_NAME)) for t in stored]
        errors: dict[str, str] = {}
        if user_input is not None:
            if chosen := user_input.get(FIELD_DELETE):
                kept = [t for t in stored if t.get(F_NAME) not in set(chosen)]
                return self._save(**{CONF_TOOLS: kept})
            errors[FIELD_DELETE] = "no_tool_selected"
        schema = probatio.Schema(
            {
                # Optional: the frontend would tick the first tool of a
                # required list.
                probatio.Optional(FIELD_DELETE): SelectSelector(
                    SelectSelectorConfig(
                        options=names, multiple=True, mode=pick_mode(names)
                    )
                )
            }
        )
        return self.async_show_form(
            step_id=STEP_DELETE_TOOL, data_schema=schema, errors=errors
        )

    # -- secrets ----------------------------------------------------------

    async def async_step_secrets(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Add, replace or remove secrets; values are never shown back."""
        secrets = self._secrets()
        errors: dict[str, str] = {}
        placeholders = {
            "secrets": ", ".join(sorted(secrets)) or NONE_SHOWN,
            "secrets_error": "",
        }
        if user_input is not None:
            users = await self._async_secret_users()
            result = validate_secrets_form(user_input, secrets, users)
            if isinstance(result, dict):
                return self._save(**{CONF_SECRETS: result})
            errors, placeholders["secrets_error"] = result
        suggested = {k: v for k, v in (user_input or {}).items() if "value" not in k}
        return self.async_show_form(
            step_id=STEP_SECRETS,
            data_schema=self.add_suggested_values_to_schema(
                secrets_schema(sorted(secrets)), suggested
            ),
            errors=errors,
            description_placeholders=placeholders,
        )

    async def _async_secret_users(self) -> dict[str, list[str]]:
        """Secret name -> the tools (options and file) that reference it."""
        try:
            definitions = parse_tools(self._stored_tools())
        except ToolDefinitionError:
            definitions = []
        entry = self.config_entry
        if entry.state is ConfigEntryState.LOADED:
            definitions += entry.runtime_data.tools.configured.file_tools
        return secret_users(definitions)

    # -- settings and the JSON editor -------------------------------------

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
        placeholders = self._menu_placeholders() | {
            "tools_error": "",
            "file_error": "",
            "hosts_error": "",
        }
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
            CONF_ALLOWED_HOSTS: options.get(CONF_ALLOWED_HOSTS) or [],
        }

    async def _async_validate(
        self,
        user_input: dict[str, Any],
        errors: dict[str, str],
        placeholders: dict[str, str],
    ) -> dict[str, Any] | None:
        """Return the options to save, or None with `errors` filled in."""
        secrets = self._secrets()
        tools: list[Any] = []
        try:
            tools = text_to_tools(str(user_input.get(CONF_TOOLS) or ""))
            check_secrets(parse_tools(tools), secrets)
        except ToolDefinitionError as err:
            errors[CONF_TOOLS] = "invalid_tools"
            placeholders["tools_error"] = str(err)

        tools_file = str(user_input.get(CONF_TOOLS_FILE) or "").strip()
        if tools_file:
            try:
                await async_read_tools_file(self.hass, tools_file, secrets)
            except ToolsFileError as err:
                errors[CONF_TOOLS_FILE] = err.reason
                placeholders["file_error"] = err.detail
        hosts = [str(h).strip() for h in user_input.get(CONF_ALLOWED_HOSTS) or [] if h]
        try:
            HostPolicy.parse(hosts)
        except ValueError as err:
            errors[CONF_ALLOWED_HOSTS] = "invalid_allowed_hosts"
            placeholders["hosts_error"] = str(err)
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
            CONF_ALLOWED_HOSTS: hosts,
        }
