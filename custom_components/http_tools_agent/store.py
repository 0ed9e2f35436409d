"""The active tool set of an entry: configured tools and the runtime override.

Configured tools come from the options (`tools`) and the tools file
(`tools_file`); `set_tools` replaces them in memory until `reset_tools`, a
reload or a restart. Every turn takes one immutable `ToolSet` snapshot, so a
replacement never changes the tools of a turn that is already running.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .const import (
    SOURCE_FILE,
    SOURCE_NONE,
    SOURCE_OPTIONS,
    SOURCE_REQUEST,
    TOOLS_ENABLED_AUTO,
    TOOLS_ENABLED_ON,
)
from .engine.definitions import ToolDefinition


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

    def as_response(self) -> dict[str, Any]:
        """Return the `{ok, count, source, tools}` body of the service and view."""
        return {
            "ok": True,
            "count": len(self.tools),
            "source": self.source,
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


class ToolStore:
    """Holds the configured tool set and the in-memory override."""

    def __init__(self, configured: ConfiguredTools, enabled_mode: str) -> None:
        """Initialize with what the entry configures."""
        self.configured = configured
        self._configured_set = configured.tool_set()
        self._override: ToolSet | None = None
        self.enabled_mode = enabled_mode

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
        return self._override

    def reset(self) -> ToolSet:
        """Drop the override and return to the configured tools."""
        self._override = None
        return self._configured_set
