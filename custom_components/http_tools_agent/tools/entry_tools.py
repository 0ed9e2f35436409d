"""The entry's tools: options, tools file and the runtime override.

Configured tools come from the options (`tools`) and the tools file
(`tools_file`, one validator shared by setup and the options flow; a file
that cannot be used, also for a `{secret:name}` the options do not define,
is a repair issue). `set_tools` replaces them in memory until `reset_tools`,
a reload or a restart. Every turn takes one immutable `ToolSet` snapshot, so
a replacement never changes a turn already running. The secrets (`secrets`
option) stay here, apart from every definition and every report, and so do
the tools' kept logins (`sessions`): replaced with the tools, the old ones
handed to `on_drop` to be logged out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from ..const import (
    CONF_SECRETS,
    CONF_TOOLS,
    CONF_TOOLS_FILE,
    DOMAIN,
    LOGGER,
    SOURCE_FILE,
    SOURCE_NONE,
    SOURCE_OPTIONS,
    SOURCE_REQUEST,
    TOOLS_ENABLED_AUTO,
    TOOLS_ENABLED_ON,
)
from ..engine.definitions import (
    ToolDefinition,
    ToolDefinitionError,
    check_secrets,
    parse_tools,
    parse_tools_json,
)
from ..engine.sessions import SessionStore


@dataclass(frozen=True, slots=True)
class ToolSet:
    """An immutable set of tool definitions and where they came from."""

    tools: tuple[ToolDefinition, ...] = ()
    source: str = SOURCE_NONE
    by_name: Mapping[str, ToolDefinition] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Index the tools by name."""
        object.__setattr__(self, "by_name", {t.name: t for t in self.tools})

    @classmethod
    def of(cls, tools: Iterable[ToolDefinition], source: str) -> ToolSet:
        """Build a set; an empty one always reports source `none`."""
        items = tuple(tools)
        return cls(items, source if items else SOURCE_NONE)

    def as_response(self, *, enabled: bool) -> dict[str, Any]:
        """Return the `{ok, count, source, enabled, tools}` body of the
        services and the view; `enabled`: whether tools are offered at all."""
        return {
            "ok": True,
            "count": len(self.tools),
            "source": self.source,
            "enabled": enabled,
            "tools": [tool.as_dict() for tool in self.tools],
        }


@dataclass(frozen=True, slots=True)
class ConfiguredTools:
    """Tools from the entry's options and file, with any problem reading them."""

    options_tools: tuple[ToolDefinition, ...] = ()
    file_tools: tuple[ToolDefinition, ...] = ()
    file_error: str | None = None

    def tool_set(self) -> ToolSet:
        """Merge file and options tools; an options tool wins a name clash."""
        names = {tool.name for tool in self.options_tools}
        merged = [t for t in self.file_tools if t.name not in names]
        merged.extend(self.options_tools)
        if self.options_tools:
            return ToolSet.of(merged, SOURCE_OPTIONS)
        return ToolSet.of(merged, SOURCE_FILE)


def secrets_of(options: Mapping[str, Any]) -> dict[str, str]:
    """The entry's secrets (name -> value) from its options."""
    stored = options.get(CONF_SECRETS)
    if not isinstance(stored, Mapping):
        return {}
    return {str(k): v for k, v in stored.items() if isinstance(v, str) and v}


def tools_of(options: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The tool definitions stored in the options, as copies."""
    return [dict(t) for t in options.get(CONF_TOOLS) or [] if isinstance(t, dict)]


class EntryTools:
    """The configured tool set, the in-memory override, the on/off mode and
    the secrets the tools reference."""

    def __init__(
        self,
        configured: ConfiguredTools,
        enabled_mode: str,
        secrets: Mapping[str, str] | None = None,
        on_drop: Callable[[SessionStore], None] | None = None,
    ) -> None:
        """Initialize with what the entry configures; `on_drop` logs out the
        sessions of tools that were replaced."""
        self.configured = configured
        self._configured_set = configured.tool_set()
        self._override: ToolSet | None = None
        self.enabled_mode = enabled_mode
        self.secrets: Mapping[str, str] = dict(secrets or {})
        # The logins the active tools keep (`engine/sessions.py`).
        self.sessions = SessionStore()
        self._on_drop = on_drop
        # Called when the active tools are replaced (their sentences follow).
        self.on_change: Callable[[], None] | None = None

    def _drop_sessions(self) -> None:
        """New tools, new logins: the old ones go to `on_drop`."""
        dropped, self.sessions = self.sessions, SessionStore()
        if self._on_drop is not None and len(dropped):
            self._on_drop(dropped)

    def check_secrets(self, definitions: Iterable[ToolDefinition]) -> None:
        """Raise ToolDefinitionError naming each tool and field whose
        `{secret:name}` is not among the entry's secrets."""
        check_secrets(definitions, self.secrets)

    def offered(self, names: Iterable[str] = ()) -> tuple[ToolDefinition, ...]:
        """The tools offered to a model: none when tools are off, else the
        enabled tools of the active set (only `names`, when given)."""
        if not self.enabled:
            return ()
        chosen = set(names)
        return tuple(
            tool
            for tool in self.active.tools
            if tool.enabled and (not chosen or tool.name in chosen)
        )

    @property
    def active(self) -> ToolSet:
        """Return the tool set that the next turn uses."""
        return self._override or self._configured_set

    @property
    def enabled(self) -> bool:
        """Return whether tools are offered to the model at all.

        `auto` is on whenever the active set has a tool, so an override that
        installs tools on an entry with none configured takes effect too.
        """
        if self.enabled_mode == TOOLS_ENABLED_ON:
            return True
        if self.enabled_mode == TOOLS_ENABLED_AUTO:
            return bool(self.active.tools)
        return False

    def set_override(self, tools: Iterable[ToolDefinition]) -> ToolSet:
        """Replace the active tools from the next turn on (memory only)."""
        self._override = ToolSet(tuple(tools), SOURCE_REQUEST)
        self._drop_sessions()
        self._changed()
        return self._override

    def reset(self) -> ToolSet:
        """Drop the override and return to the configured tools."""
        self._override = None
        self._drop_sessions()
        self._changed()
        return self._configured_set

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()


class ToolsFileError(Exception):
    """The tools file cannot be used.

    `reason` is the options flow's error key, `detail` what the form shows
    after it, `str()` the sentence for the log and the repair issue.
    """

    def __init__(self, reason: str, detail: str, message: str) -> None:
        """Keep the reason and both texts."""
        super().__init__(message)
        self.reason = reason
        self.detail = detail


def tools_file_issue_id(entry_id: str) -> str:
    """Return the repair issue id for an entry's tools file."""
    return f"tools_file_{entry_id}"


def _read_tools_file(
    path: Path, value: str, secrets: Iterable[str]
) -> list[ToolDefinition]:
    """Read and validate a tools file (runs in the executor)."""
    try:
        definitions = parse_tools_json(path.read_bytes())
        check_secrets(definitions, secrets)
    except FileNotFoundError:
        raise ToolsFileError(
            "tools_file_not_found", str(path), f"file not found: {path}"
        ) from None
    except OSError as err:
        reason = f"{path}: {err.strerror or err}"
        raise ToolsFileError(
            "tools_file_unreadable", reason, f"cannot read {reason}"
        ) from None
    except ToolDefinitionError as err:
        raise ToolsFileError("tools_file_invalid", str(err), str(err)) from None
    except ValueError as err:  # e.g. a NUL character in the path
        reason = f"{value!r}: {err}"
        raise ToolsFileError(
            "tools_file_unreadable", reason, f"cannot read {reason}"
        ) from None
    return definitions


async def async_read_tools_file(
    hass: HomeAssistant, value: str, secrets: Iterable[str] = ()
) -> list[ToolDefinition]:
    """Read the tools file `value` (relative to the config dir); each
    `{secret:name}` in it must be one of `secrets`.

    Raises ToolsFileError.
    """
    path = Path(hass.config.path(value.strip()))
    return await hass.async_add_executor_job(
        _read_tools_file, path, value, frozenset(secrets)
    )


async def async_load_configured_tools(
    hass: HomeAssistant, entry_id: str, options: Mapping[str, Any]
) -> ConfiguredTools:
    """Load the options' tools and the tools file; report a bad file in Repairs.

    A missing or invalid file never stops the options' tools from working.
    """
    options_tools: list[ToolDefinition] = []
    secrets = secrets_of(options)
    try:
        options_tools = parse_tools(options.get(CONF_TOOLS) or [])
    except ToolDefinitionError as err:
        # The options flow refuses invalid tools; this only happens when
        # storage was edited by hand.
        LOGGER.error("Ignoring invalid tools in the options: %s", err)
    try:
        check_secrets(options_tools, secrets)
    except ToolDefinitionError as err:
        # Same: a tool using it answers that the secret is not defined.
        LOGGER.error("Tools in the options miss secrets: %s", err)

    file_tools: list[ToolDefinition] = []
    file_error: str | None = None
    issue_id = tools_file_issue_id(entry_id)
    if file_value := (options.get(CONF_TOOLS_FILE) or "").strip():
        try:
            file_tools = await async_read_tools_file(hass, file_value, secrets)
        except ToolsFileError as err:
            file_error = str(err)
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
