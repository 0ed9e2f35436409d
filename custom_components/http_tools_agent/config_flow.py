"""Config flow (server, or a sign-in to a service), reconfigure, reauth, and
subentries: conversation agents and AI tasks (the same settings).

A sign-in is Home Assistant's OAuth2 flow (``AbstractOAuth2FlowHandler``):
the user names it and gives the service's authorize and token URLs and
scopes, picks an application credential, signs in at the service and comes
back through ``/auth/external/callback``; the entry keeps the token
(`tools/sign_in.py`). Only a config flow can be resumed by that callback,
so a sign-in is an entry of its own, not a subentry of a server.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import logging
from typing import Any, override

from homeassistant.components.ai_task.const import DEFAULT_SYSTEM_PROMPT
from homeassistant.config_entries import (
    SOURCE_REAUTH,
    SOURCE_RECONFIGURE,
    ConfigEntry,
    ConfigEntryState,
    ConfigFlowResult,
    ConfigSubentryFlow,
    OptionsFlow,
    SubentryFlowResult,
)
from homeassistant.const import CONF_API_KEY
from homeassistant.core import callback
from homeassistant.exceptions import ImplementationUnavailableError
from homeassistant.helpers import llm
from homeassistant.helpers.config_entry_oauth2_flow import (
    AbstractOAuth2FlowHandler,
    async_get_implementations,
)
from homeassistant.helpers.selector import (
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
from homeassistant.util.ulid import ulid_now
import probatio

from .const import (
    CONF_AUTHORIZE_URL,
    CONF_BASE_URL,
    CONF_MODEL,
    CONF_SCOPES,
    CONF_SIGN_IN,
    CONF_TOKEN_URL,
    DEFAULT_BASE_URL,
    DEFAULT_CONVERSATION_NAME,
    DEFAULT_MODEL,
    DOMAIN,
    FORM_MODEL_LIST_TIMEOUT,
    LOGGER,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
)
from .engine.templates import PLACEHOLDER_NAME_RE
from .flows.agent_form import (
    agent_data_from_form,
    agent_form_values,
    agent_schema,
    async_profile_decision,
    async_task_title,
    default_agent_data,
    default_task_data,
    first_agent_model,
)
from .flows.options import HttpToolsOptionsFlow
from .redact import display_url
from .server.client import (
    ServerCheckError,
    async_check_server,
    async_check_server_entries,
    async_list_models,
)
from .server.info import ServerInfo, async_probe_server, entry_title
from .server.profiles import Profile, choose_profile
from .tools.llm_api import api_id_for
from .tools.sign_in import Credential, ServiceOAuth2, is_sign_in


def _server_schema(defaults: dict[str, Any]) -> probatio.Schema:
    return probatio.Schema(
        {
            probatio.Required(
                CONF_BASE_URL, default=defaults.get(CONF_BASE_URL, DEFAULT_BASE_URL)
            ): TextSelector(TextSelectorConfig(type=TextSelectorType.URL)),
            probatio.Optional(CONF_API_KEY): TextSelector(
                TextSelectorConfig(type=TextSelectorType.PASSWORD)
            ),
        }
    )


def _clean_server_input(user_input: dict[str, Any]) -> dict[str, Any]:
    data = {CONF_BASE_URL: str(user_input[CONF_BASE_URL]).strip().rstrip("/")}
    if api_key := str(user_input.get(CONF_API_KEY) or "").strip():
        data[CONF_API_KEY] = api_key
    return data


@dataclass(frozen=True, slots=True)
class _CheckedServer:
    """A server that answered the form's check."""

    data: dict[str, Any]  # what the entry stores
    models: list[str]  # what it lists
    model: str  # the one the entry's title names
    info: ServerInfo
    title: str


def _sign_in_schema(defaults: Mapping[str, Any]) -> probatio.Schema:
    url = TextSelector(TextSelectorConfig(type=TextSelectorType.URL))
    return probatio.Schema(
        {
            probatio.Required(
                CONF_SIGN_IN, default=defaults.get(CONF_SIGN_IN, "")
            ): str,
            probatio.Required(
                CONF_AUTHORIZE_URL, default=defaults.get(CONF_AUTHORIZE_URL, "")
            ): url,
            probatio.Required(
                CONF_TOKEN_URL, default=defaults.get(CONF_TOKEN_URL, "")
            ): url,
            probatio.Optional(
                CONF_SCOPES, default=" ".join(defaults.get(CONF_SCOPES) or [])
            ): str,
        }
    )


def _sign_in_data(
    user_input: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, str]]:
    """The sign-in's service from its form, and the form's errors."""
    errors: dict[str, str] = {}
    name = str(user_input[CONF_SIGN_IN]).strip()
    if PLACEHOLDER_NAME_RE.fullmatch(name) is None:
        errors[CONF_SIGN_IN] = "invalid_sign_in_name"
    data: dict[str, Any] = {CONF_SIGN_IN: name}
    for key in (CONF_AUTHORIZE_URL, CONF_TOKEN_URL):
        url = str(user_input[key]).strip()
        if not url.lower().startswith(("https://", "http://")):
            errors[key] = "invalid_oauth_url"
        data[key] = url
    data[CONF_SCOPES] = str(user_input.get(CONF_SCOPES) or "").split()
    return data, errors


class HttpToolsAgentConfigFlow(AbstractOAuth2FlowHandler, domain=DOMAIN):
    """Add an OpenAI-compatible server, or sign in to a service."""

    DOMAIN = DOMAIN
    VERSION = 1
    MINOR_VERSION = 4

    def __init__(self) -> None:
        """Start the flow."""
        super().__init__()
        # The server the user step checked, for the step that asks about it.
        self._server: _CheckedServer | None = None
        # A sign-in's name, URLs and scopes, until the service answers.
        self._service: dict[str, Any] | None = None

    @property
    @override
    def logger(self) -> logging.Logger:
        """Where the OAuth2 flow logs."""
        return LOGGER

    @override
    async def async_step_user(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the server and check it; once there is an application
        credential of this integration, first ask which kind of entry."""
        if user_input is None and await self._async_has_credentials():
            return await self.async_step_add()
        return await self.async_step_server(user_input)

    async def async_step_add(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """A server, or a sign-in to a service?"""
        return self.async_show_menu(step_id="add", menu_options=["server", "sign_in"])

    async def _async_has_credentials(self) -> bool:
        try:
            return bool(await async_get_implementations(self.hass, DOMAIN))
        except ImplementationUnavailableError:
            return False

    async def async_step_server(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The server's form (the `user` step's, whichever way it opened)."""
        errors: dict[str, str] = {}
        if user_input is not None:
            try:
                server = await self._async_check_server(user_input, None)
            except ServerCheckError as err:
                errors["base"] = err.reason
            else:
                self._server = server
                if missing := server.info.without_tools([server.model]):
                    # Say so before adding it: the agent still works with
                    # calls the model writes as text.
                    return await self.async_step_no_tool_support(
                        placeholders={
                            "server": display_url(server.data[CONF_BASE_URL]),
                            "kind": server.info.kind,
                            "models": ", ".join(missing),
                        }
                    )
                return await self._async_create_server_entry(server)
        return self.async_show_form(
            step_id="user",
            data_schema=self.add_suggested_values_to_schema(
                _server_schema(user_input or {}), user_input or {}
            ),
            errors=errors,
        )

    async def _async_check_server(
        self, user_input: dict[str, Any], model: str | None
    ) -> _CheckedServer:
        """Check the server the form names (the user step's and reconfigure's):
        not another entry's, answering, what it is; `model` is the one the
        title names (None: the server's first). Raises ServerCheckError."""
        data = _clean_server_input(user_input)
        self._async_abort_entries_match({CONF_BASE_URL: data[CONF_BASE_URL]})
        entries = await async_check_server_entries(self.hass, data)
        models = [str(m["id"]) for m in entries]
        model = model or (models[0] if models else DEFAULT_MODEL)
        info = await async_probe_server(self.hass, data, entries, [model])
        title = entry_title(info.kind, model, display_url(data[CONF_BASE_URL]))
        return _CheckedServer(data, models, model, info, title)

    async def async_step_no_tool_support(
        self,
        user_input: dict[str, Any] | None = None,
        placeholders: dict[str, str] | None = None,
    ) -> ConfigFlowResult:
        """The server says its chat template takes no tools: add it anyway?"""
        if user_input is not None and self._server is not None:
            return await self._async_create_server_entry(self._server)
        return self.async_show_form(
            step_id="no_tool_support",
            data_schema=probatio.Schema({}),
            description_placeholders=placeholders,
        )

    async def _async_create_server_entry(
        self, server: _CheckedServer
    ) -> ConfigFlowResult:
        """The entry, with a first agent and an AI task on the server's first
        model, as core's LLM integrations start one: `ai_task.generate_data`
        works at once."""
        # A stable key known before the entry exists, so the first agent and
        # the AI task can select this entry's HTTP tools API.
        await self.async_set_unique_id(ulid_now())
        api_id = api_id_for(self.unique_id or "")
        return self.async_create_entry(
            title=server.title,
            data=server.data,
            subentries=[
                {
                    "subentry_type": SUBENTRY_CONVERSATION,
                    "data": default_agent_data(api_id, server.models),
                    "title": DEFAULT_CONVERSATION_NAME,
                    "unique_id": None,
                },
                {
                    "subentry_type": SUBENTRY_AI_TASK,
                    "data": default_task_data(api_id, server.models),
                    "title": await async_task_title(self.hass),
                    "unique_id": None,
                },
            ],
        )

    async def async_step_sign_in(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Name the sign-in and give its service's URLs and scopes; then pick
        an application credential and sign in (Home Assistant's OAuth2 steps).

        Reconfigure opens it too, with the sign-in's values, to sign in again.
        """
        errors: dict[str, str] = {}
        current: Mapping[str, Any] = user_input or {}
        if self.source == SOURCE_RECONFIGURE:
            current = user_input or self._get_reconfigure_entry().data
        if user_input is not None:
            service, errors = _sign_in_data(user_input)
            if not errors and self._name_taken(service[CONF_SIGN_IN]):
                errors[CONF_SIGN_IN] = "sign_in_name_taken"
            if not errors:
                self._service = service
                return await self.async_step_pick_implementation()
        return self.async_show_form(
            step_id="sign_in",
            data_schema=_sign_in_schema(current),
            errors=errors,
        )

    def _name_taken(self, name: str) -> bool:
        """Whether another sign-in has the name (the one being signed in
        again keeps its own)."""
        own = (
            self.context.get("entry_id")
            if self.source in (SOURCE_REAUTH, SOURCE_RECONFIGURE)
            else None
        )
        return any(
            is_sign_in(entry) and entry.data[CONF_SIGN_IN] == name
            for entry in self._async_current_entries(include_ignore=False)
            if entry.entry_id != own
        )

    @override
    async def async_step_auth(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Send the user to the service: the picked credential at the
        sign-in's URLs."""
        if isinstance(self.flow_impl, Credential) and self._service is not None:
            self.flow_impl = ServiceOAuth2(self.hass, self.flow_impl, self._service)
        return await super().async_step_auth(user_input)

    @override
    async def async_oauth_create_entry(self, data: dict[str, Any]) -> ConfigFlowResult:
        """Keep the token with the sign-in's service; signing in again
        updates the sign-in's entry."""
        assert self._service is not None  # the sign_in step set it
        data = {**self._service, **data}
        if self.source == SOURCE_REAUTH:
            return self.async_update_reload_and_abort(
                self._get_reauth_entry(),
                data=data,
                title=data[CONF_SIGN_IN],
                reason="sign_in_updated",
            )
        if self.source == SOURCE_RECONFIGURE:
            return self.async_update_reload_and_abort(
                self._get_reconfigure_entry(),
                data=data,
                title=data[CONF_SIGN_IN],
                reason="sign_in_updated",
            )
        return self.async_create_entry(title=data[CONF_SIGN_IN], data=data)

    async def async_step_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Change the server address or key, or a sign-in's service."""
        entry = self._get_reconfigure_entry()
        if is_sign_in(entry):
            return await self.async_step_sign_in()
        errors: dict[str, str] = {}
        if user_input is not None:
            try:
                server = await self._async_check_server(
                    user_input, first_agent_model(entry)
                )
            except ServerCheckError as err:
                errors["base"] = err.reason
            else:
                return self._async_update_and_reload(
                    entry, data=server.data, title=server.title
                )
        current = {CONF_BASE_URL: entry.data[CONF_BASE_URL]}
        return self.async_show_form(
            step_id="reconfigure",
            data_schema=self.add_suggested_values_to_schema(
                _server_schema(current), user_input or current
            ),
            errors=errors,
        )

    async def async_step_reauth(
        self, entry_data: Mapping[str, Any]
    ) -> ConfigFlowResult:
        """The server refused the key, at setup or during a turn; or a
        sign-in's service refused to renew its token."""
        if CONF_SIGN_IN in entry_data:
            self._service = {
                key: entry_data[key]
                for key in (
                    CONF_SIGN_IN,
                    CONF_AUTHORIZE_URL,
                    CONF_TOKEN_URL,
                    CONF_SCOPES,
                )
            }
            return await self.async_step_reauth_sign_in()
        return await self.async_step_reauth_confirm()

    async def async_step_reauth_sign_in(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Say which sign-in expired; then sign in again with its credential
        (or another one, when it was removed)."""
        entry = self._get_reauth_entry()
        if user_input is not None:
            return await self.async_step_pick_implementation(
                {"implementation": entry.data["auth_implementation"]}
            )
        return self.async_show_form(
            step_id="reauth_sign_in",
            data_schema=probatio.Schema({}),
            description_placeholders={"name": entry.title},
        )

    async def async_step_reauth_confirm(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Ask for the key, check it against the server, then reload."""
        entry = self._get_reauth_entry()
        errors: dict[str, str] = {}
        if user_input is not None:
            data = {**entry.data, CONF_API_KEY: str(user_input[CONF_API_KEY]).strip()}
            try:
                await async_check_server(self.hass, data)
            except ServerCheckError as err:
                errors["base"] = err.reason
            else:
                return self._async_update_and_reload(entry, data=data)
        return self.async_show_form(
            step_id="reauth_confirm",
            data_schema=probatio.Schema(
                {
                    probatio.Required(CONF_API_KEY): TextSelector(
                        TextSelectorConfig(type=TextSelectorType.PASSWORD)
                    )
                }
            ),
            errors=errors,
            description_placeholders={"url": display_url(entry.data[CONF_BASE_URL])},
        )

    def _async_update_and_reload(
        self, entry: ConfigEntry, **changes: Any
    ) -> ConfigFlowResult:
        """Store the changes and reload the entry once.

        A loaded entry reloads through its update listener; one that did not
        load (server down, key refused) has none and is reloaded here, so a
        fixed URL or key takes effect at once.
        """
        if entry.update_listeners:
            return self.async_update_and_abort(entry, **changes)
        return self.async_update_reload_and_abort(entry, **changes)

    @staticmethod
    @callback
    @override
    def async_get_options_flow(config_entry: ConfigEntry) -> OptionsFlow:
        """Edit the tools and how they run."""
        return HttpToolsOptionsFlow()

    @classmethod
    @callback
    @override
    def async_supports_options_flow(cls, config_entry: ConfigEntry) -> bool:
        """A server has options; a sign-in has none."""
        return not is_sign_in(config_entry)

    @classmethod
    @callback
    @override
    def async_get_supported_subentry_types(
        cls, config_entry: ConfigEntry
    ) -> dict[str, type[ConfigSubentryFlow]]:
        """Agents and AI tasks are subentries of a server."""
        if is_sign_in(config_entry):
            return {}
        return {
            SUBENTRY_CONVERSATION: ConversationFlowHandler,
            SUBENTRY_AI_TASK: AITaskFlowHandler,
        }


class ConversationFlowHandler(ConfigSubentryFlow):
    """Add or change an agent."""

    # The instructions a new one starts with.
    default_prompt = llm.DEFAULT_INSTRUCTIONS_PROMPT

    async def _async_default_name(self) -> str:
        """The title of the first one, and of the next (with their model)."""
        return DEFAULT_CONVERSATION_NAME

    async def _async_models(self) -> tuple[list[str], bool]:
        """The server's models for the form, and whether the server did not
        list them now (they are then the ones it listed before).

        The form opens at once: while one of the entry's requests is under
        way the server is not asked (llama-cpp-python answers the list only
        after the generation, and cuts a streamed answer for it: the form
        waited ~20 s), and a server that does not answer within a few
        seconds is not waited for.
        """
        runtime = self._get_entry().runtime_data
        if runtime.turns.busy:
            return list(runtime.models), False
        try:
            models = await async_list_models(runtime.client, FORM_MODEL_LIST_TIMEOUT)
        except ServerCheckError as err:
            # The user may still type a model name.
            LOGGER.warning("Cannot list the server's models: %s", err.reason)
            return list(runtime.models), True
        runtime.models = tuple(models)
        return models, False

    async def async_step_user(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Add an agent."""
        return await self._async_step_agent(user_input)

    async def async_step_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> SubentryFlowResult:
        """Change an agent."""
        return await self._async_step_agent(user_input)

    async def _async_step_agent(
        self, user_input: dict[str, Any] | None
    ) -> SubentryFlowResult:
        entry = self._get_entry()
        if entry.state is not ConfigEntryState.LOADED:
            return self.async_abort(reason="entry_not_loaded")
        errors: dict[str, str] = {}
        placeholders: dict[str, str] = {}
        if user_input is not None:
            data, errors, placeholders = agent_data_from_form(user_input)
            if not errors and self.source == "user":
                first = not any(
                    s.subentry_type == self._subentry_type
                    for s in entry.subentries.values()
                )
                name = await self._async_default_name()
                return self.async_create_entry(
                    title=name if first else f"{name} ({data[CONF_MODEL]})",
                    data=data,
                )
            if not errors:
                return self.async_update_and_abort(
                    entry, self._get_reconfigure_subentry(), data=data
                )

        models, not_listed = await self._async_models()
        if not_listed:
            errors.setdefault("base", "models_not_listed")
        defaults = default_agent_data(
            api_id_for(entry.unique_id or entry.entry_id), models, self.default_prompt
        )
        if self.source == "user":
            current = defaults
        else:
            current = {**defaults, **self._get_reconfigure_subentry().data}
        tool_names = [
            tool.name for tool in entry.runtime_data.tools.configured.tool_set().tools
        ]
        # What `auto` picks for the agent's model, and why.
        model = str((user_input or current).get(CONF_MODEL) or DEFAULT_MODEL)
        auto = choose_profile(
            Profile.AUTO,
            model,
            entry.runtime_data.server_info,
            entry.data[CONF_BASE_URL],
        )
        placeholders |= {
            "model": model,
            "profile_decision": await async_profile_decision(self.hass, auto),
        }
        return self.async_show_form(
            step_id="user" if self.source == "user" else "reconfigure",
            data_schema=self.add_suggested_values_to_schema(
                agent_schema(
                    self.hass,
                    models,
                    current,
                    tool_names,
                    task=self._subentry_type == SUBENTRY_AI_TASK,
                ),
                user_input or agent_form_values(current),
            ),
            errors=errors,
            description_placeholders=placeholders,
        )


class AITaskFlowHandler(ConversationFlowHandler):
    """Add or change an AI task: an agent's settings, for `ai_task.generate_data`."""

    default_prompt = DEFAULT_SYSTEM_PROMPT

    @override
    async def _async_default_name(self) -> str:
        """The title a new entry's AI task has, in Home Assistant's language."""
        return await async_task_title(self.hass)
