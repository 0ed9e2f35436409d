"""Diagnostics: configuration, active tools, the server's kind and
capabilities, each agent's profile and why, what the agents made up for, and
recent errors, without secrets. A sign-in's: its service and when its
token expires, never the token.

Redacted: the API key, the secrets (listed by name only), every header value
of every tool (headers carry credentials), passwords in URLs and the values of
query parameters whose name looks like a credential (`key`, `token`,
`secret`...), in the tools and in the OpenAPI document URLs they were
imported from (with the tools as imported). Active tools are listed by name only. Each agent shows the tools
it chose and those of them that no longer exist.
"""

from __future__ import annotations

from typing import Any

from homeassistant.components.diagnostics import async_redact_data
from homeassistant.config_entries import ConfigEntry, ConfigEntryState
from homeassistant.const import CONF_API_KEY
from homeassistant.core import HomeAssistant

from .agent_options import AgentOptions
from .const import (
    CONF_ALLOWED_HOSTS,
    CONF_BASE_URL,
    CONF_OPENAPI_SOURCES,
    CONF_SECRETS,
    CONF_TOOLS,
    CONF_TOOLS_FILE,
)
from .redact import redact_tools, redact_url
from .runtime import HttpToolsConfigEntry
from .server.profiles import choose_profile
from .tools.agent_tools import chosen_tools, missing_tools
from .tools.entry_tools import secrets_of
from .tools.sign_in import is_sign_in

# What a sign-in's token may show: no token of any kind.
_TOKEN_SHOWN = ("expires_at", "expires_in", "scope", "token_type")

TO_REDACT = {CONF_API_KEY}


async def async_get_config_entry_diagnostics(
    hass: HomeAssistant, entry: HttpToolsConfigEntry
) -> dict[str, Any]:
    """Return the entry's diagnostics."""
    if is_sign_in(entry):
        return _sign_in_diagnostics(entry)
    data = async_redact_data(dict(entry.data), TO_REDACT)
    if isinstance(base_url := data.get(CONF_BASE_URL), str):
        data[CONF_BASE_URL] = redact_url(base_url)
    options = dict(entry.options)
    if CONF_TOOLS in options:
        options[CONF_TOOLS] = redact_tools(options[CONF_TOOLS])
    if isinstance(sources := options.get(CONF_OPENAPI_SOURCES), list):
        options[CONF_OPENAPI_SOURCES] = [_redact_source(s) for s in sources]
    if CONF_SECRETS in options:
        # Names only: a value never leaves the entry.
        options[CONF_SECRETS] = sorted(secrets_of(options))
    result: dict[str, Any] = {
        "data": data,
        "options": options,
        "agents": [
            {
                "subentry_id": subentry.subentry_id,
                "type": subentry.subentry_type,
                "title": subentry.title,
                "data": async_redact_data(dict(subentry.data), TO_REDACT),
            }
            for subentry in entry.subentries.values()
        ],
        "state": entry.state.value,
    }
    if entry.state is not ConfigEntryState.LOADED:
        return result
    runtime = entry.runtime_data
    tools = runtime.tools
    active = tools.active
    configured = tools.configured
    for agent, subentry in zip(
        result["agents"], entry.subentries.values(), strict=True
    ):
        agent["tools"] = {
            "chosen": chosen_tools(subentry.data) or "all",
            "missing_from_configured": missing_tools(
                subentry, configured.tool_set().by_name
            ),
            "missing_from_active": missing_tools(subentry, active.by_name),
        }
        options_ = AgentOptions.from_subentry(subentry.data)
        choice = choose_profile(
            options_.profile,
            options_.model,
            runtime.server_info,
            entry.data[CONF_BASE_URL],
        )
        agent["profile"] = {
            "setting": options_.profile,
            "runs_as": choice.profile.value,
            "reason": choice.describe(),
        }
    result["tools"] = {
        "active": [tool.name for tool in active.tools],
        "disabled": [tool.name for tool in active.tools if not tool.enabled],
        "secrets_used": sorted(
            {name for tool in active.tools for name in tool.secret_names}
        ),
        "source": active.source,
        "enabled": tools.enabled,
        "enabled_mode": tools.enabled_mode,
        "options_tools": [tool.name for tool in configured.options_tools],
        "file_tools": [tool.name for tool in configured.file_tools],
        "tools_file": options.get(CONF_TOOLS_FILE) or None,
        "tools_file_error": configured.file_error,
    }
    settings = runtime.settings
    result["settings"] = {
        "max_tool_iterations": settings.max_tool_iterations,
        "tool_timeout": settings.tool_timeout,
        "tool_result_max_chars": settings.tool_result_max_chars,
        "allowed_hosts": options.get(CONF_ALLOWED_HOSTS) or "any",
    }
    # What the server says it is and can do, and what the agents made up for.
    result["server"] = runtime.server_info.as_dict()
    result["model_quirks"] = dict(runtime.model_quirks)
    result["recent_errors"] = [
        {"when": error.when.isoformat(), "kind": error.kind, "message": error.message}
        for error in runtime.recent_errors
    ]
    return result


def _sign_in_diagnostics(entry: ConfigEntry[Any]) -> dict[str, Any]:
    """A sign-in: its service and credential, and its token's expiry only."""
    data = {key: value for key, value in entry.data.items() if key != "token"}
    token = entry.data.get("token") or {}
    data["token"] = {key: token[key] for key in _TOKEN_SHOWN if key in token}
    return {"data": data, "state": entry.state.value}


def _redact_source(source: Any) -> Any:
    """A remembered document URL and the tools as imported, secrets hidden."""
    if not isinstance(source, dict):
        return source
    item = dict(source)
    if isinstance(url := item.get("url"), str):
        item["url"] = redact_url(url)
    if isinstance(server := item.get("server_url"), str):
        item["server_url"] = redact_url(server)
    if isinstance(tools := item.get("tools"), list):
        item["tools"] = [
            {**t, "imported": redact_tools([t.get("imported")])[0]}
            if isinstance(t, dict)
            else t
            for t in tools
        ]
    return item
