"""HTTP Tools Agent: a conversation agent with declarative HTTP tools."""

from __future__ import annotations

from typing import Any, cast

from homeassistant.config_entries import ConfigEntry
from homeassistant.const import CONF_API_KEY, Platform
from homeassistant.core import HomeAssistant
from homeassistant.helpers import config_validation as cv, issue_registry as ir, llm
from homeassistant.helpers.httpx_client import get_async_client
from homeassistant.helpers.typing import ConfigType
import openai

from .const import (
    CONF_BASE_URL,
    CONF_TOOLS_ENABLED,
    DOMAIN,
    PLACEHOLDER_API_KEY,
    TOOLS_ENABLED_AUTO,
)
from .http import HttpToolsView
from .llm_api import API_NAME, HttpToolsAPI, api_id_for
from .runtime import HttpToolsRuntime, ToolSettings
from .services import async_setup_services
from .store import ToolStore
from .tools_config import async_load_configured_tools, tools_file_issue_id

PLATFORMS = (Platform.CONVERSATION,)
CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)

# A local model on a CPU can take a while; a voice user should not wait for
# ten minutes (the SDK default) before hearing an error.
LLM_REQUEST_TIMEOUT = 120.0

type HttpToolsConfigEntry = ConfigEntry[HttpToolsRuntime]


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Set up the services and the HTTP view (once, for all entries)."""
    async_setup_services(hass)
    hass.http.register_view(HttpToolsView())
    return True


async def async_create_client(
    hass: HomeAssistant, data: dict[str, Any]
) -> openai.AsyncOpenAI:
    """Create the OpenAI SDK client for an entry's server."""
    client = openai.AsyncOpenAI(
        api_key=data.get(CONF_API_KEY) or PLACEHOLDER_API_KEY,
        base_url=data[CONF_BASE_URL],
        timeout=LLM_REQUEST_TIMEOUT,
        # One retry covers a dropped keep-alive connection; more would keep a
        # voice user waiting on a server that is down.
        max_retries=1,
        http_client=cast(Any, get_async_client(hass)),
    )
    # Reads platform details from disk once; keep that off the event loop.
    await hass.async_add_executor_job(client.platform_headers)
    return client


async def async_setup_entry(hass: HomeAssistant, entry: HttpToolsConfigEntry) -> bool:
    """Set up an entry: client, tools, LLM API and agents.

    The LLM server need not be up: local servers often start after Home
    Assistant, and each turn reports a server that cannot be reached.
    """
    client = await async_create_client(hass, dict(entry.data))
    configured = await async_load_configured_tools(
        hass, entry.entry_id, dict(entry.options)
    )
    store = ToolStore(
        configured, entry.options.get(CONF_TOOLS_ENABLED, TOOLS_ENABLED_AUTO)
    )
    entry.runtime_data = HttpToolsRuntime(
        client=client,
        store=store,
        settings=ToolSettings.from_options(dict(entry.options)),
    )
    entry.async_on_unload(
        llm.async_register_api(
            hass,
            HttpToolsAPI(
                hass=hass,
                id=api_id_for(entry.unique_id or entry.entry_id),
                name=API_NAME,
                entry=entry,
            ),
        )
    )
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    entry.async_on_unload(entry.add_update_listener(_async_update_listener))
    return True


async def async_unload_entry(hass: HomeAssistant, entry: HttpToolsConfigEntry) -> bool:
    """Unload an entry."""
    return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)


async def async_remove_entry(hass: HomeAssistant, entry: HttpToolsConfigEntry) -> None:
    """Drop the entry's repair issue with it."""
    ir.async_delete_issue(hass, DOMAIN, tools_file_issue_id(entry.entry_id))


async def _async_update_listener(
    hass: HomeAssistant, entry: HttpToolsConfigEntry
) -> None:
    """Apply changed options or subentries without a restart."""
    await hass.config_entries.async_reload(entry.entry_id)
