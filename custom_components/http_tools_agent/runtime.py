"""The typed config entry and what a loaded entry holds (its `runtime_data`)."""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from homeassistant.config_entries import ConfigEntry
from homeassistant.util import dt as dt_util
import openai

from .const import (
    CONF_ALLOWED_HOSTS,
    CONF_MAX_TOOL_ITERATIONS,
    CONF_TOOL_RESULT_MAX_CHARS,
    CONF_TOOL_TIMEOUT,
    DEFAULT_MAX_TOOL_ITERATIONS,
    DEFAULT_TOOL_RESULT_MAX_CHARS,
    DEFAULT_TOOL_TIMEOUT,
    LOGGER,
)
from .engine.executor import ToolRunResult
from .engine.hosts import HostPolicy
from .server.availability import ServerAvailability
from .server.info import ServerInfo
from .server.turns import ServerTurns
from .tools.entry_tools import EntryTools
from .turn.hold import HeldCalls

type HttpToolsConfigEntry = ConfigEntry[HttpToolsRuntime]

# How many recent failures diagnostics keep.
MAX_RECENT_ERRORS = 10


@dataclass(frozen=True, slots=True)
class ToolSettings:
    """How tools run, from the entry's options."""

    max_tool_iterations: int = DEFAULT_MAX_TOOL_ITERATIONS
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    tool_result_max_chars: int = DEFAULT_TOOL_RESULT_MAX_CHARS
    hosts: HostPolicy = field(default_factory=HostPolicy)

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> ToolSettings:
        """Read the settings, falling back to the defaults."""
        return cls(
            max_tool_iterations=int(
                options.get(CONF_MAX_TOOL_ITERATIONS, DEFAULT_MAX_TOOL_ITERATIONS)
            ),
            tool_timeout=float(options.get(CONF_TOOL_TIMEOUT, DEFAULT_TOOL_TIMEOUT)),
            tool_result_max_chars=int(
                options.get(CONF_TOOL_RESULT_MAX_CHARS, DEFAULT_TOOL_RESULT_MAX_CHARS)
            ),
            hosts=host_policy(options.get(CONF_ALLOWED_HOSTS) or []),
        )


def host_policy(entries: list[str]) -> HostPolicy:
    """The allowed hosts; an entry storage holds but the options flow would
    refuse is skipped (and logged), the valid ones still apply."""
    try:
        return HostPolicy.parse(entries)
    except ValueError:
        valid: list[str] = []
        for entry in entries:
            try:
                HostPolicy.parse([entry])
            except ValueError as err:
                LOGGER.error("Ignoring an allowed host: %s", err)
            else:
                valid.append(entry)
        return HostPolicy.parse(valid)


@dataclass(frozen=True, slots=True)
class RecentError:
    """A failure worth showing in diagnostics (no secrets)."""

    when: datetime
    kind: str
    message: str


@dataclass(slots=True)
class HttpToolsRuntime:
    """Runtime data of one config entry."""

    client: openai.AsyncOpenAI
    tools: EntryTools
    settings: ToolSettings
    availability: ServerAvailability
    server_info: ServerInfo = field(default_factory=ServerInfo)
    # The model ids the server listed when last asked (setup, its return,
    # an agent's form).
    models: tuple[str, ...] = ()
    # The agents' turns under way on the server (`turns`).
    turns: ServerTurns = field(default_factory=ServerTurns)
    # The agents' calls waiting for the user's yes (`turn/hold.py`).
    held: HeldCalls = field(default_factory=HeldCalls)
    recent_errors: deque[RecentError] = field(
        default_factory=lambda: deque(maxlen=MAX_RECENT_ERRORS)
    )
    # How often the agents had to make up for the model (diagnostics): a
    # round with only thinking, an answer in words under `required`, calls
    # over the cap, history dropped to fit the context...
    model_quirks: Counter[str] = field(default_factory=Counter)

    def record_error(self, kind: str, message: str) -> None:
        """Remember a failure for diagnostics."""
        self.recent_errors.append(RecentError(dt_util.utcnow(), kind, message))

    def record_quirk(self, kind: str, message: str | None = None) -> None:
        """Count something the model did that the agent made up for; with a
        `message`, also keep it among the recent errors."""
        self.model_quirks[kind] += 1
        if message is not None:
            self.record_error(kind, message)

    def record_run(self, result: ToolRunResult) -> None:
        """Remember a failed tool run."""
        if not result.ok:
            # `error` is a short reason without bodies or header values.
            self.record_error(f"tool:{result.tool}", result.error or "failed")
