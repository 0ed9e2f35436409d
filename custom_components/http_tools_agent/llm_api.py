"""The entry's HTTP tools as a Home Assistant LLM API, usable by any agent."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
import time
from typing import TYPE_CHECKING, Any, override

from homeassistant.components.conversation import (
    chat_log as ha_chat_log,
    trace as conversation_trace,
)
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
from homeassistant.helpers.aiohttp_client import async_get_clientsession
import probatio

from .const import DOMAIN, EVENT_TOOL_CALL, LOGGER
from .engine.definitions import ToolDefinition
from .engine.executor import ToolRunResult, run_tool

if TYPE_CHECKING:
    from . import HttpToolsConfigEntry
    from .runtime import HttpToolsRuntime

REDACTED = "**REDACTED**"
API_NAME = "HTTP Tools"
RESULT_KEY = "result"
ASYNC_PROCESS = conversation_trace.ConversationTraceEventType.ASYNC_PROCESS

# The agent entity running the current turn: set by our agents, inherited by
# the tool tasks the chat log starts.
current_agent_id: ContextVar[str | None] = ContextVar(
    "http_tools_agent_current_agent_id", default=None
)


def api_id_for(api_key: str) -> str:
    """Return the LLM API id for an entry's stable key (its unique id).

    The config flow knows the unique id before the entry exists, so the first
    agent it creates can already select this entry's tools.
    """
    return f"{DOMAIN}-{api_key}"


def _probatio_schema(parameters: dict[str, Any]) -> probatio.Schema:
    """Convert a tool's JSON Schema so agents that read `Tool.parameters` work."""
    try:
        return probatio.from_json_schema(parameters)
    except Exception:
        LOGGER.debug("Parameters not expressible for other agents: %s", parameters)
        return probatio.Schema({}, extra=probatio.ALLOW_EXTRA)


def redact_arguments(
    definition: ToolDefinition, arguments: dict[str, Any]
) -> dict[str, Any]:
    """Hide the values that go into headers: they are usually credentials."""
    secret = definition.header_placeholders
    return {k: (REDACTED if k in secret else v) for k, v in arguments.items()}


class HttpTool(llm.Tool):
    """One declarative HTTP tool."""

    def __init__(self, definition: ToolDefinition, runtime: HttpToolsRuntime) -> None:
        """Wrap a definition for one turn."""
        self.name = definition.name
        self.description = definition.description or None
        self.parameters = _probatio_schema(definition.parameters)
        self.integration = DOMAIN
        self.definition = definition
        # Captured for the turn: a reload during the turn must not change
        # (or remove) what this call uses.
        self._runtime = runtime

    @override
    async def async_call(
        self,
        hass: HomeAssistant,
        tool_input: llm.ToolInput,
        llm_context: llm.LLMContext,
    ) -> llm.ToolResult:
        """Run the HTTP request; failures are text the model can read."""
        runtime = self._runtime
        settings = runtime.settings
        started = time.monotonic()
        result = await run_tool(
            async_get_clientsession(hass),
            self.definition,
            tool_input.tool_args,
            timeout=settings.tool_timeout,
            max_chars=settings.tool_result_max_chars,
        )
        runtime.record_run(result)
        _fire_tool_event(
            hass, self.definition, tool_input, llm_context, result, started
        )
        return llm.ToolResult(data={RESULT_KEY: result.text}, error=not result.ok)


def _turn_agent_id(chat_log: ha_chat_log.ChatLog | None) -> str | None:
    """Return the agent whose turn runs the tool.

    Our agents say so through `current_agent_id`. For other agents: tools start while the model's answer still streams, before the chat log
    stores that answer (with its agent id), so the first round of a turn has
    no answer to read yet. The turn's conversation trace (opened by
    `conversation.async_converse`, which Assist pipelines use) names the agent;
    the last stored answer is the fallback.
    """
    if agent_id := current_agent_id.get():
        return agent_id
    # Another agent uses our tools. Its trace is private to the conversation
    # integration: read defensively.
    current = getattr(conversation_trace, "_current_trace", None)
    trace = current.get() if current is not None else None
    for event in getattr(trace, "_events", None) or ():
        data = getattr(event, "data", None) or {}
        if getattr(event, "event_type", None) == ASYNC_PROCESS and isinstance(
            agent_id := data.get("agent_id"), str
        ):
            return agent_id
    if chat_log is not None:
        for content in reversed(chat_log.content):
            if content.role == "assistant":
                return content.agent_id
    return None


def _fire_tool_event(
    hass: HomeAssistant,
    definition: ToolDefinition,
    tool_input: llm.ToolInput,
    llm_context: llm.LLMContext,
    result: ToolRunResult,
    started: float,
) -> None:
    """Tell automations and the logbook that a tool ran."""
    chat_log = ha_chat_log.current_chat_log.get()
    agent_id = _turn_agent_id(chat_log)
    hass.bus.async_fire(
        EVENT_TOOL_CALL,
        {
            "tool": definition.name,
            "arguments": redact_arguments(definition, tool_input.tool_args),
            "method": result.method,
            "status": result.status,
            "ok": result.ok,
            "duration": round(result.duration or (time.monotonic() - started), 3),
            "truncated": result.truncated,
            "conversation_id": chat_log.conversation_id if chat_log else None,
            "agent_id": agent_id,
            "device_id": llm_context.device_id,
        },
        context=llm_context.context,
    )


@dataclass(slots=True, kw_only=True)
class HttpToolsAPI(llm.API):
    """LLM API whose tools are the entry's active HTTP tools."""

    entry: HttpToolsConfigEntry

    @override
    async def async_get_api_instance(
        self, llm_context: llm.LLMContext
    ) -> llm.APIInstance:
        """Snapshot the active tools for one turn."""
        runtime = self.entry.runtime_data
        store = runtime.store
        tools: list[llm.Tool] = []
        if store.enabled:
            tools = [HttpTool(d, runtime) for d in store.active.tools]
        return llm.APIInstance(
            api=self,
            api_prompt=(
                "Call a tool whenever the request needs data or an action it "
                "provides; answer from the tool's result."
                if tools
                else ""
            ),
            llm_context=llm_context,
            tools=tools,
        )
