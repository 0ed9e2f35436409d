"""Per-agent tools: which of the entry's HTTP tools each agent offers.

An agent (conversation subentry) stores the names it chose under
`http_tools`; none means all. A chosen name that the configured tools (options
and file) no longer have is never dropped silently: it stays in the agent's
settings, is logged, shown in diagnostics and raised as a repair issue naming
the agent and the names, until the tool is back or the agent's choice
changes. Renaming a tool in the tool editor carries the agents' choices over.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from homeassistant.config_entries import ConfigSubentry
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir

from ..const import (
    CONF_AGENT_TOOLS,
    DOMAIN,
    LOGGER,
    SUBENTRY_AI_TASK,
    SUBENTRY_CONVERSATION,
)

if TYPE_CHECKING:
    from ..runtime import HttpToolsConfigEntry


def chosen_tools(data: Mapping[str, Any]) -> list[str]:
    """The tool names an agent's settings choose (empty: all tools)."""
    names = data.get(CONF_AGENT_TOOLS)
    if not isinstance(names, list):
        return []
    return [name for name in names if isinstance(name, str)]


def agents(entry: HttpToolsConfigEntry) -> list[ConfigSubentry]:
    """The entry's agents and AI tasks (each chooses its tools)."""
    return [
        subentry
        for subentry in entry.subentries.values()
        if subentry.subentry_type in (SUBENTRY_CONVERSATION, SUBENTRY_AI_TASK)
    ]


def missing_tools(subentry: ConfigSubentry, available: Iterable[str]) -> list[str]:
    """The names the agent chose that `available` does not hold."""
    known = set(available)
    return [name for name in chosen_tools(subentry.data) if name not in known]


def issue_id(entry_id: str, subentry_id: str) -> str:
    """The repair issue of one agent's missing tools."""
    return f"agent_tools_{entry_id}_{subentry_id}"


@callback
def async_report_missing_tools(
    hass: HomeAssistant, entry: HttpToolsConfigEntry
) -> None:
    """Raise (or clear) one repair issue per agent whose chosen tools are gone.

    Checked against the configured tools: a runtime override is temporary.
    """
    configured = entry.runtime_data.tools.configured.tool_set().by_name
    current: set[str] = set()
    for subentry in agents(entry):
        missing = missing_tools(subentry, configured)
        if not missing:
            continue
        issue = issue_id(entry.entry_id, subentry.subentry_id)
        current.add(issue)
        names = ", ".join(missing)
        LOGGER.warning(
            "Agent %s offers tools that no longer exist: %s", subentry.title, names
        )
        ir.async_create_issue(
            hass,
            DOMAIN,
            issue,
            is_fixable=False,
            severity=ir.IssueSeverity.WARNING,
            translation_key="agent_tools_missing",
            translation_placeholders={
                "agent": subentry.title,
                "server": entry.title,
                "tools": names,
            },
        )
    async_delete_agent_issues(hass, entry.entry_id, keep=current)


@callback
def async_delete_agent_issues(
    hass: HomeAssistant, entry_id: str, keep: Iterable[str] = ()
) -> None:
    """Delete the entry's agent issues (but those in `keep`)."""
    prefix = issue_id(entry_id, "")
    kept = set(keep)
    for domain, issue in list(ir.async_get(hass).issues):
        if domain == DOMAIN and issue.startswith(prefix) and issue not in kept:
            ir.async_delete_issue(hass, DOMAIN, issue)


def renamed_choice(names: list[str], old: str, new: str) -> list[str]:
    """An agent's choice after the tool `old` was renamed to `new`."""
    result: list[str] = []
    for name in names:
        replaced = new if name == old else name
        if replaced not in result:
            result.append(replaced)
    return result
