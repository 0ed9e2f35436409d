"""HTTP Tools Agent: a conversation agent with declarative HTTP tools."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, cast

from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import config_validation as cv, issue_registry as ir, llm
from homeassistant.helpers.typing import ConfigType

from .const import (
    CHAIN_CALLS_PROFILE,
    CONF_BASE_URL,
    CONF_CHAIN_CALLS,
    CONF_HISTORY,
    CONF_PROFILE,
    CONF_TOOLS_ENABLED,
    DEFAULT_PROFILE,
    DOMAIN,
    HISTORY_PROFILE,
    LOGGER,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
    TOOLS_ENABLED_AUTO,
)
from .engine.sessions import SessionStore
from .flows.agent_form import async_task_title, default_task_data, first_agent_model
from .redact import display_url
from .rest_view import HttpToolsView
from .runtime import HttpToolsConfigEntry, HttpToolsRuntime, ToolSettings
from .sentences import ToolSentences
from .server.availability import ServerAvailability
from .server.client import ServerCheckError, async_connect, async_model_entries
from .server.errors import raise_setup_error
from .server.info import (
    agent_models,
    async_probe_server,
    async_report_tool_support,
    tool_support_issue_id,
)
from .server.turns import ServerTurns
from .services import async_setup_services
from .tools.agent_tools import async_delete_agent_issues, async_report_missing_tools
from .tools.entry_tools import (
    EntryTools,
    async_load_configured_tools,
    secrets_of,
    tools_file_issue_id,
)
from .tools.llm_api import HttpToolsAPI, api_id_for
from .tools.openapi_refresh import async_check_daily, async_delete_issues
from .tools.sign_in import SignInEntry, async_setup_sign_in, is_sign_in

PLATFORMS = (Platform.AI_TASK, Platform.CONVERSATION)
CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Set up the services and the HTTP view (once, for all entries)."""
    async_setup_services(hass)
    hass.http.register_view(HttpToolsView())
    return True


async def async_setup_entry(hass: HomeAssistant, entry: HttpToolsConfigEntry) -> bool:
    """Set up an entry: check its server, then tools, LLM API and agents.

    A server that cannot be reached (local servers often start after Home
    Assistant) leaves the entry retrying, with the reason on its card, until
    it answers; a refused key starts re-authentication. A sign-in loads
    its token instead (`tools/sign_in.py`).
    """
    if is_sign_in(entry):
        # The domain's entries share one type; a sign-in's runtime is its own.
        return await async_setup_sign_in(hass, cast("SignInEntry", entry))
    try:
        client = await async_connect(hass, entry.data)
        models = await async_model_entries(client)
    except ServerCheckError as err:
        raise_setup_error(err.reason, display_url(entry.data[CONF_BASE_URL]))
    used_models = agent_models(s.data for s in entry.subentries.values())
    server_info = await async_probe_server(hass, entry.data, models, used_models)

    configured = await async_load_configured_tools(hass, entry.entry_id, entry.options)
    availability = ServerAvailability(hass, client, entry.title)
    entry.async_on_unload(availability.async_stop)
    entry.runtime_data = HttpToolsRuntime(
        client=client,
        tools=EntryTools(
            configured,
            entry.options.get(CONF_TOOLS_ENABLED, TOOLS_ENABLED_AUTO),
            secrets_of(entry.options),
            on_drop=lambda store: _log_out_later(hass, store),
        ),
        settings=ToolSettings.from_options(entry.options),
        availability=availability,
        server_info=server_info,
        models=_model_ids(models),
        turns=ServerTurns(server_info.kind),
    )
    async_report_tool_support(
        hass,
        entry.entry_id,
        display_url(entry.data[CONF_BASE_URL]),
        server_info,
        used_models,
    )
    entry.async_on_unload(
        availability.async_add_listener(lambda: _server_back(hass, entry))
    )
    async_report_missing_tools(hass, entry)
    async_check_daily(hass, entry)
    entry.async_on_unload(
        llm.async_register_api(hass, HttpToolsAPI.for_entry(hass, entry))
    )
    # The tools' own sentences, answered before any model; again whenever
    # the tools are replaced (`sentences.py`).
    tools = entry.runtime_data.tools
    sentences = ToolSentences(hass, entry)
    entry.async_on_unload(sentences.async_stop)
    tools.on_change = lambda: sentences.async_update(tools.offered())
    sentences.async_update(tools.offered())
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    entry.async_on_unload(entry.add_update_listener(_async_update_listener))
    return True


async def async_migrate_entry(hass: HomeAssistant, entry: HttpToolsConfigEntry) -> bool:
    """Bring a stored entry up to date.

    1.2: agents get a `profile` (`auto`); `chain_calls` (a switch, off by
    default) becomes part of it: an agent that had it on keeps it on, one
    that had it off (the old default) follows its profile.
    1.3: an entry without an AI task gets the one a new entry starts with,
    on its first agent's model, as core's LLM integrations added theirs:
    every entry then has one unless the user removes it, and that removal
    stays (this runs once). One the user added is kept, no second added.
    1.4: the `brief` history is gone (measured worse than the small
    profile's own, bench/RESULTS.md P4m): an agent that had it follows its
    profile.
    """
    if entry.version > 1:
        return False  # stored by a newer version of the integration
    if entry.minor_version < 2:
        for subentry in entry.subentries.values():
            if subentry.subentry_type != SUBENTRY_CONVERSATION:
                continue
            data = dict(subentry.data)
            chain = data.get(CONF_CHAIN_CALLS)
            data[CONF_CHAIN_CALLS] = "on" if chain is True else CHAIN_CALLS_PROFILE
            data.setdefault(CONF_PROFILE, DEFAULT_PROFILE)
            hass.config_entries.async_update_subentry(entry, subentry, data=data)
        hass.config_entries.async_update_entry(entry, minor_version=2)
        LOGGER.debug("Migrated %s to version 1.2 (agent profiles)", entry.title)
    if entry.minor_version < 3:
        if not entry.get_subentries_of_type(SUBENTRY_AI_TASK):
            api_id = api_id_for(entry.unique_id or entry.entry_id)
            task = ConfigSubentry(
                data=MappingProxyType(
                    default_task_data(api_id, [first_agent_model(entry)])
                ),
                subentry_type=SUBENTRY_AI_TASK,
                title=await async_task_title(hass),
                unique_id=None,
            )
            hass.config_entries.async_add_subentry(entry, task)
        hass.config_entries.async_update_entry(entry, minor_version=3)
        LOGGER.debug("Migrated %s to version 1.3 (an AI task)", entry.title)
    if entry.minor_version < 4:
        for subentry in entry.subentries.values():
            if subentry.data.get(CONF_HISTORY) == "brief":
                hass.config_entries.async_update_subentry(
                    entry,
                    subentry,
                    data={**subentry.data, CONF_HISTORY: HISTORY_PROFILE},
                )
        hass.config_entries.async_update_entry(entry, minor_version=4)
        LOGGER.debug("Migrated %s to version 1.4 (no brief history)", entry.title)
    return True


async def async_unload_entry(hass: HomeAssistant, entry: HttpToolsConfigEntry) -> bool:
    """Unload an entry; the tools' kept logins are logged out."""
    if is_sign_in(entry):
        return True
    unloaded = await hass.config_entries.async_unload_platforms(entry, PLATFORMS)
    if unloaded:
        await entry.runtime_data.tools.sessions.async_close()
    return unloaded


def _log_out_later(hass: HomeAssistant, store: SessionStore) -> None:
    """Log out the logins of tools that were replaced, without holding up
    the service call that replaced them."""
    hass.async_create_background_task(
        store.async_close(), "http_tools_agent log out replaced tools"
    )


async def async_remove_entry(hass: HomeAssistant, entry: HttpToolsConfigEntry) -> None:
    """Drop the entry's repair issues with it."""
    if is_sign_in(entry):
        return
    ir.async_delete_issue(hass, DOMAIN, tools_file_issue_id(entry.entry_id))
    ir.async_delete_issue(hass, DOMAIN, tool_support_issue_id(entry.entry_id))
    async_delete_agent_issues(hass, entry.entry_id)
    async_delete_issues(hass, entry.entry_id)


def _server_back(hass: HomeAssistant, entry: HttpToolsConfigEntry) -> None:
    """When the server answers again it may have been restarted with other
    settings (e.g. `--jinja`): ask it again what it can do."""
    if entry.runtime_data.availability.available:
        entry.async_create_background_task(
            hass, _async_refresh_server_info(hass, entry), "http_tools_agent probe"
        )


async def _async_refresh_server_info(
    hass: HomeAssistant, entry: HttpToolsConfigEntry
) -> None:
    runtime = entry.runtime_data
    try:
        models = await async_model_entries(runtime.client)
    except ServerCheckError:
        return
    runtime.models = _model_ids(models)
    used_models = agent_models(s.data for s in entry.subentries.values())
    runtime.server_info = await async_probe_server(
        hass, entry.data, models, used_models
    )
    async_report_tool_support(
        hass,
        entry.entry_id,
        display_url(entry.data[CONF_BASE_URL]),
        runtime.server_info,
        used_models,
    )


def _model_ids(models: list[dict[str, Any]]) -> tuple[str, ...]:
    return tuple(str(model["id"]) for model in models)


async def _async_update_listener(
    hass: HomeAssistant, entry: HttpToolsConfigEntry
) -> None:
    """Apply changed options or subentries without a restart."""
    await hass.config_entries.async_reload(entry.entry_id)
