"""The entry's HTTP tools as a Home Assistant LLM API, usable by any agent.

`HttpTool.async_run` is the one way a tool runs: the agents' calls (through
`async_call`) and the `run_tool` action (`async_run_tool`) both go through
it, with the same checks, secrets, host policy, limits, record and event.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
import functools
import json
from typing import TYPE_CHECKING, Any, override

from homeassistant.components.conversation import chat_log as ha_chat_log
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from homeassistant.util import dt as dt_util
import probatio

from ..const import DOMAIN, EVENT_TOOL_CALL, LOGGER
from ..engine.arguments import check_arguments, compile_validator
from ..engine.definitions import ToolDefinition
from ..engine.executor import ToolRunResult, run_tool
from ..redact import REDACTED
from .call_result import CallOutcome, CallResult
from .sign_in import token_source

if TYPE_CHECKING:
    from ..runtime import HttpToolsConfigEntry, HttpToolsRuntime

API_NAME = "HTTP Tools"
API_PROMPT = (
    "Call a tool whenever the request needs data or an action it provides; "
    "answer from the tool's result."
)


@dataclass(frozen=True, slots=True)
class AgentScope:
    """Which of our agents runs the current turn, and the tools it offers."""

    entity_id: str
    entry_id: str
    # The entry's tools this agent offers; empty: all of them.
    tool_names: frozenset[str] = frozenset()
    # Its model reads images: an image answer is kept for the next request.
    pictures: bool = False


# Set by our agents for a turn, inherited by the tool tasks the chat log starts.
current_agent: ContextVar[AgentScope | None] = ContextVar(
    "http_tools_agent_current_agent", default=None
)


def api_id_for(api_key: str) -> str:
    """Return the LLM API id for an entry's stable key (its unique id).

    The config flow knows the unique id before the entry exists, so the first
    agent it creates can already select this entry's tools.
    """
    return f"{DOMAIN}-{api_key}"


def _probatio_schema(parameters: dict[str, Any]) -> probatio.Schema:
    """Convert a tool's JSON Schema so agents that read `Tool.parameters` work
    (once per schema: the tools are built again for every turn)."""
    return _converted(json.dumps(parameters, sort_keys=True))


@functools.lru_cache(maxsize=512)
def _converted(parameters: str) -> probatio.Schema:
    try:
        return probatio.from_json_schema(json.loads(parameters))
    except Exception:
        LOGGER.debug("Parameters not expressible for other agents: %s", parameters)
        return probatio.Schema({}, extra=probatio.ALLOW_EXTRA)


def tool_annotations(definition: ToolDefinition) -> llm.ToolAnnotations:
    """Describe what the tool does to its server: its own `read_only`,
    `destructive` and `idempotent` (each defaulting from its verbs). What
    Home Assistant shows, and what the turn's honesty rules, unasked changes
    and read-outs go by (`turn/messages.py` reads `read_only` from here). A
    tool whose calls wait for the user's yes is destructive and not
    read-only, so an MCP host asks too; every HTTP tool reaches a service
    outside Home Assistant (open world)."""
    confirm = definition.needs_confirmation
    return llm.ToolAnnotations(
        read_only=definition.read_only and not confirm,
        destructive=confirm or definition.destructive,
        idempotent=definition.idempotent,
        open_world=True,
    )


def needs_confirmation_error(name: str) -> str:
    """What another agent's model reads for a tool that waits for a yes."""
    return (
        f"Error: not run: '{name}' needs the user's confirmation, which only "
        "an HTTP Tools Agent conversation agent asks for. Tell the user to "
        "ask that agent to do it."
    )


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
        self.annotations = tool_annotations(definition)
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
        """Run the HTTP request; failures are text the model can read.

        Our agents hold a call that waits for the user's yes before it gets
        here (`turn/calls.py`) and call it after the yes; another agent
        (any other conversation agent, an MCP client through `mcp_server`)
        cannot ask this integration's question, so such a call is refused.
        """
        scope = current_agent.get()
        if self.definition.needs_confirmation and scope is None:
            return CallResult.not_run(
                needs_confirmation_error(self.name), CallOutcome.REFUSED
            )
        pictures = scope is not None and scope.pictures
        return CallResult.of_run(
            await self.async_run(hass, tool_input, llm_context, pictures=pictures)
        )

    async def async_run(
        self,
        hass: HomeAssistant,
        tool_input: llm.ToolInput,
        llm_context: llm.LLMContext,
        *,
        pictures: bool = False,
    ) -> ToolRunResult:
        """Run the tool: the one path of the agents and the run_tool action.

        Checks of a call belong here, so both get them: the arguments are
        checked against the tool's schema (and converted where nothing is
        lost) before any request. `pictures`: an image answer is kept whole
        for a model that reads images (`turn/request.py`).
        """
        runtime = self._runtime
        settings = runtime.settings
        definition = self.definition
        checked = check_arguments(
            definition.name,
            definition.parameters,
            compile_validator(definition.parameters),
            tool_input.tool_args,
        )
        if checked.error is not None:
            result = _not_sent(definition.name, checked.error, "invalid arguments")
        else:
            result = await run_tool(
                # Home Assistant's session; without certificate checks for a
                # tool that asks so (a LAN device's self-signed certificate).
                async_get_clientsession(hass, verify_ssl=definition.verify_ssl),
                definition,
                checked.arguments,
                timeout=settings.tool_timeout,
                max_chars=settings.tool_result_max_chars,
                secrets=runtime.tools.secrets,
                hosts=settings.hosts,
                # A shape's times are said in the house's time zone unless
                # the tool names its own.
                time_zone=hass.config.time_zone,
                # Logins kept across calls, dropped with the tools.
                sessions=runtime.tools.sessions,
                pictures=pictures,
                # The sign-ins' tokens, refreshed when due (`sign_in.py`).
                tokens=token_source(hass),
            )
        runtime.record_run(result)
        # The arguments as sent (converted), so automations see what ran.
        _fire_tool_event(hass, definition, checked.arguments, llm_context, result)
        return result


def _not_sent(tool: str, text: str, error: str) -> ToolRunResult:
    """A run that failed before any request: `text` is what the model reads."""
    return ToolRunResult(
        tool=tool,
        text=text,
        ok=False,
        method=None,
        status=None,
        truncated=False,
        duration=0.0,
        error=error,
    )


async def async_run_tool(
    hass: HomeAssistant,
    runtime: HttpToolsRuntime,
    name: str,
    arguments: dict[str, Any],
    llm_context: llm.LLMContext,
) -> ToolRunResult:
    """Run the active tool `name` as an agent would (the run_tool action).

    A name the entry does not have gives the text a model would read.
    """
    definition = runtime.tools.active.by_name.get(name)
    if definition is None:
        return _not_sent(name, f"Error: unknown tool '{name}'", "unknown tool")
    tool = HttpTool(definition, runtime)
    return await tool.async_run(hass, llm.ToolInput(name, arguments), llm_context)


def _turn_agent_id(chat_log: ha_chat_log.ChatLog | None) -> str | None:
    """Return the agent whose turn runs the tool.

    Our agents say so through `current_agent`; another agent's latest
    stored answer names it. Only when its tools start while its first answer
    still streams (before the chat log stores it) is it unknown; the event's
    `platform` still names the agent's integration.
    """
    if (scope := current_agent.get()) is not None:
        return scope.entity_id
    if chat_log is not None:
        for content in reversed(chat_log.content):
            if content.role == "assistant":
                return content.agent_id
    return None


def _fire_tool_event(
    hass: HomeAssistant,
    definition: ToolDefinition,
    arguments: dict[str, Any],
    llm_context: llm.LLMContext,
    result: ToolRunResult,
) -> None:
    """Tell automations and the logbook that a tool ran."""
    chat_log = ha_chat_log.current_chat_log.get()
    hass.bus.async_fire(
        EVENT_TOOL_CALL,
        {
            "tool": definition.name,
            "arguments": redact_arguments(definition, arguments),
            "method": result.method,
            "status": result.status,
            "ok": result.ok,
            "duration": round(result.duration, 3),
            "truncated": result.truncated,
            "retries": result.retries,
            "conversation_id": chat_log.conversation_id if chat_log else None,
            "agent_id": _turn_agent_id(chat_log),
            "platform": llm_context.platform,
            "device_id": llm_context.device_id,
        },
        context=llm_context.context,
    )


class DateTimeTool(llm.Tool):
    """The current date and time, on request.

    Offered with the HTTP tools, so Home Assistant leaves its clock line out
    of the system prompt (as it does for Assist's own `GetDateTime`): the
    prompt's start stays byte-identical from turn to turn and the server's
    prompt cache holds. Measured with Qwen2.5-0.5B: the time anywhere near
    the question (in it, or in a later system message) makes the model call
    tools for small talk; as a tool it does not (bench/RESULTS.md).
    """

    name: str = "GetDateTime"
    description = "Provides the current date and time."
    annotations = llm.ToolAnnotations(
        read_only=True, destructive=False, open_world=False
    )
    integration = DOMAIN

    @override
    async def async_call(
        self,
        hass: HomeAssistant,
        tool_input: llm.ToolInput,
        llm_context: llm.LLMContext,
    ) -> llm.ToolResult:
        """Today's date, the time to the minute, the weekday and time zone."""
        now = dt_util.now()
        return llm.ToolResult(
            data={
                "date": now.strftime("%Y-%m-%d"),
                "time": now.strftime("%H:%M"),
                "weekday": now.strftime("%A"),
                "timezone": now.strftime("%Z"),
            }
        )


@dataclass(slots=True, kw_only=True)
class HttpToolsAPI(llm.API):
    """LLM API whose tools are the entry's active HTTP tools."""

    entry: HttpToolsConfigEntry

    @classmethod
    def for_entry(
        cls, hass: HomeAssistant, entry: HttpToolsConfigEntry
    ) -> HttpToolsAPI:
        """Return the API of an entry (its id stays stable across reloads)."""
        return cls(
            hass=hass,
            id=api_id_for(entry.unique_id or entry.entry_id),
            name=API_NAME,
            entry=entry,
        )

    @override
    async def async_get_api_instance(
        self, llm_context: llm.LLMContext
    ) -> llm.APIInstance:
        """Snapshot the tools offered for one turn.

        One of this entry's agents offers the tools it chose; any other
        agent gets every enabled tool.
        """
        runtime = self.entry.runtime_data
        scope = current_agent.get()
        names = (
            scope.tool_names
            if scope is not None and scope.entry_id == self.entry.entry_id
            else frozenset()
        )
        tools: list[llm.Tool] = [
            HttpTool(d, runtime) for d in runtime.tools.offered(names)
        ]
        if tools:
            tools.append(DateTimeTool())
        return llm.APIInstance(
            api=self,
            api_prompt=API_PROMPT if tools else "",
            llm_context=llm_context,
            tools=tools,
        )
