"""Read the configured tools: the entry's options and its tools file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from .const import CONF_TOOLS, CONF_TOOLS_FILE, DOMAIN, LOGGER
from .engine.definitions import (
    ToolDefinition,
    ToolDefinitionError,
    parse_tools,
    parse_tools_json,
)
from .store import ConfiguredTools


def tools_file_issue_id(entry_id: str) -> str:
    """Return the repair issue id for an entry's tools file."""
    return f"tools_file_{entry_id}"


def resolve_tools_file(hass: HomeAssistant, value: str) -> Path:
    """Resolve a tools file path against the configuration directory."""
    return Path(hass.config.path(value.strip()))


def read_tools_file(path: Path) -> list[ToolDefinition]:
    """Read and validate a tools file (runs in the executor).

    Raises ToolDefinitionError or OSError.
    """
    return parse_tools_json(path.read_bytes())


async def async_load_configured_tools(
    hass: HomeAssistant, entry_id: str, options: dict[str, Any]
) -> ConfiguredTools:
    """Load the options' tools and the tools file; report a bad file in Repairs.

    A missing or invalid file never stops the options' tools from working.
    """
    options_tools: list[ToolDefinition] = []
    try:
        options_tools = parse_tools(options.get(CONF_TOOLS) or [])
    except ToolDefinitionError as err:
        # The options flow refuses invalid tools; this only happens when
        # storage was edited by hand.
        LOGGER.error("Ignoring invalid tools in the options: %s", err)

    file_tools: list[ToolDefinition] = []
    file_error: str | None = None
    issue_id = tools_file_issue_id(entry_id)
    if file_value := (options.get(CONF_TOOLS_FILE) or "").strip():
        path = resolve_tools_file(hass, file_value)
        try:
            file_tools = await hass.async_add_executor_job(read_tools_file, path)
        except FileNotFoundError:
            file_error = f"file not found: {path}"
        except OSError as err:
            file_error = f"cannot read {path}: {err.strerror or err}"
        except ToolDefinitionError as err:
            file_error = str(err)
        except ValueError as err:  # e.g. a NUL character in the path
            file_error = f"cannot read {file_value!r}: {err}"
    if file_error is None:
        ir.async_delete_issue(hass, DOMAIN, issue_id)
    else:
        LOGGER.error("Tools file %s not used: %s", file_value, file_error)
        ir.async_create_issue(
            hass,
            DOMAIN,
            issue_id,
            is_fixable=False,
            severity=ir.IssueSeverity.ERROR,
            translation_key="tools_file_invalid",
            translation_placeholders={"path": file_value, "error": file_error},
        )
    return ConfiguredTools(tuple(options_tools), tuple(file_tools), file_error)
