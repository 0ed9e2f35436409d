"""The tool loop over Home Assistant's ChatLog.

A turn asks the model up to `max_tool_iterations` times; the chat log runs
the calls of each reply and the next request carries their results. Three
policies keep a small model's turn from ending in silence: a streamed reply
that comes back empty is asked again without streaming; tools that ran but
got no answer lead to one closing request for it; and when even that stays
silent, the agent says what happened (or reads the tool's result).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, override

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.entity import Entity
from openai.types.chat import (
    ChatCompletionFunctionToolParam,
    ChatCompletionToolMessageParam,
)
from openai.types.chat.completion_create_params import CompletionCreateParamsBase

from .const import (
    CONF_AGENT_TOOLS,
    CONF_MAX_TOKENS,
    CONF_MODEL,
    CONF_STREAM,
    CONF_TEMPERATURE,
    CONF_TOOL_CHOICE,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODEL,
    DEFAULT_STREAM,
    DEFAULT_TEMPERATURE,
    DOMAIN,
    LOGGER,
)
from .delta_stream import CompletionStream, Delta
from .engine.speakable import speakable
from .llm_api import RESULT_KEY, AgentScope
from .openai_format import ToolSchemas, chat_messages, chat_tools
from .runtime import HttpToolsConfigEntry
from .speech import async_spoken_message
from .stable_prompt import MessageNotes

type ToolChoice = Literal["auto", "required", "none"]

_TOOL_CHOICES: dict[str, ToolChoice] = {
    "auto": "auto",
    "required": "required",
    "none": "none",
}

# Added to the last tool result of the closing request of a turn that ran
# tools (not stored in the chat log).
CLOSING_NUDGE = (
    "Answer the user's question now in plain text using the tool results "
    "above. Do not call tools."
)


@dataclass(frozen=True, slots=True)
class AgentOptions:
    """What an agent (subentry) asks the server for."""

    model: str
    temperature: float
    max_tokens: int
    tool_choice: ToolChoice
    stream: bool

    @classmethod
    def from_subentry(cls, data: Mapping[str, Any]) -> AgentOptions:
        """Read the settings, falling back to the defaults."""
        return cls(
            model=str(data.get(CONF_MODEL, DEFAULT_MODEL)),
            temperature=float(data.get(CONF_TEMPERATURE, DEFAULT_TEMPERATURE)),
            max_tokens=int(data.get(CONF_MAX_TOKENS, DEFAULT_MAX_TOKENS)),
            tool_choice=_TOOL_CHOICES.get(data.get(CONF_TOOL_CHOICE, ""), "auto"),
            stream=bool(data.get(CONF_STREAM, DEFAULT_STREAM)),
        )


@dataclass(slots=True)
class _Turn:
    """What the rounds of one turn share."""

    options: AgentOptions
    chat_log: conversation.ChatLog
    notes: MessageNotes
    tools: list[ChatCompletionFunctionToolParam] = field(default_factory=list)
    schemas: ToolSchemas = field(default_factory=dict)
    seen_calls: set[str] = field(default_factory=set)

    def reply(self, *, closing: bool) -> CompletionStream:
        """A new reply to read; on the closing request its calls never run."""
        return CompletionStream(
            self.schemas,
            self.seen_calls,
            run_calls=bool(self.tools) and not closing,
            after_tool_results=bool(self.seen_calls),
        )

    def params(self, *, closing: bool) -> CompletionCreateParamsBase:
        """The request of one round."""
        messages = chat_messages(self.chat_log.content, self.notes.note)
        last = messages[-1]
        if closing and self.seen_calls and last["role"] == "tool":
            # Servers without a tool parser ignore `tool_choice: none`; small
            # models then repeat the call instead of answering. Saying so
            # plainly makes them answer from the results (measured with
            # Qwen2.5-0.5B: 0/10 -> 10/10 weather answers). In the result
            # itself: Mistral's and Qwen 3.5's templates refuse a system
            # message there, and Mistral's a user message after a result.
            messages[-1] = ChatCompletionToolMessageParam(
                role="tool",
                tool_call_id=last["tool_call_id"],
                content=f"{last['content']}\n\n{CLOSING_NUDGE}",
            )
        params = CompletionCreateParamsBase(
            model=self.options.model,
            messages=messages,
            temperature=self.options.temperature,
            max_tokens=self.options.max_tokens,
            user=self.chat_log.conversation_id,
        )
        if self.tools:
            params["tools"] = self.tools
            params["tool_choice"] = "none" if closing else self.options.tool_choice
        return params


def _last_tool_result(chat_log: conversation.ChatLog) -> dict[str, str] | None:
    """The last successful HTTP tool result of this turn, as words."""
    for content in reversed(chat_log.content):
        if isinstance(content, conversation.UserContent):
            return None
        if not isinstance(content, conversation.ToolResultContent):
            continue
        text = content.result.data.get(RESULT_KEY)
        if content.result.error or not isinstance(text, str) or not text.strip():
            return None
        return {
            "tool": content.tool_name.rsplit("__", 1)[-1].replace("_", " "),
            "result": speakable(text),
        }
    return None


class HttpToolsAgentEntity(Entity):
    """Base entity: one agent (subentry) on one server (entry)."""

    _attr_has_entity_name = True
    _attr_name = None

    def __init__(self, entry: HttpToolsConfigEntry, subentry: ConfigSubentry) -> None:
        """Initialize the agent."""
        self.entry = entry
        self.subentry = subentry
        # What each user message carries besides its text (`stable_prompt`).
        self.notes = MessageNotes()
        self._attr_unique_id = subentry.subentry_id
        self._attr_device_info = dr.DeviceInfo(
            identifiers={(DOMAIN, subentry.subentry_id)},
            name=subentry.title,
            manufacturer="OpenAI-compatible server",
            model=subentry.data.get(CONF_MODEL, DEFAULT_MODEL),
            entry_type=dr.DeviceEntryType.SERVICE,
        )

    @property
    @override
    def available(self) -> bool:
        """Unavailable while the server cannot be reached (turns still run)."""
        return self.entry.runtime_data.availability.available

    @override
    async def async_added_to_hass(self) -> None:
        """Follow the server's availability."""
        await super().async_added_to_hass()
        self.async_on_remove(
            self.entry.runtime_data.availability.async_add_listener(
                self.async_write_ha_state
            )
        )

    def agent_scope(self) -> AgentScope:
        """This agent and the entry's tools it offers (for the HTTP tools API)."""
        names = self.subentry.data.get(CONF_AGENT_TOOLS) or ()
        return AgentScope(self.entity_id, self.entry.entry_id, frozenset(names))

    async def _async_handle_chat_log(
        self, chat_log: conversation.ChatLog, language: str | None = None
    ) -> None:
        """Run the tool loop until the model answers (within `current_agent`)."""
        turn = _Turn(
            AgentOptions.from_subentry(self.subentry.data), chat_log, self.notes
        )
        if chat_log.llm_api is not None:
            turn.tools, turn.schemas = chat_tools(chat_log.llm_api)
        rounds = self.entry.runtime_data.settings.max_tool_iterations
        exhausted = True
        for _ in range(rounds):
            reply = await self._async_ask(chat_log, turn)
            if reply.calls:
                # Their results (or errors) are in the chat log: the model
                # reads them next. (A reply that only repeated a call adds
                # nothing, leaving the earlier results unanswered in the log.)
                continue
            exhausted = False
            if turn.seen_calls and not reply.text.strip():
                # Tools ran, but this reply only repeated a call or echoed a
                # result: the results are in, so ask plainly for the answer.
                await self._async_ask_closing(chat_log, turn)
            break
        if exhausted:
            await self._async_ask_closing(chat_log, turn)
        await self._async_answer_if_silent(
            chat_log, language, rounds if exhausted else None
        )

    async def _async_ask(
        self,
        chat_log: conversation.ChatLog,
        turn: _Turn,
        *,
        closing: bool = False,
        stream: bool | None = None,
    ) -> CompletionStream:
        """Ask the model once; the chat log runs the calls of its reply."""
        reply = turn.reply(closing=closing)
        stream = turn.options.stream if stream is None else stream
        client = self.entry.runtime_data.client
        params = turn.params(closing=closing)
        await self._async_add(chat_log, reply.async_run(client, params, stream=stream))
        if stream and reply.empty and reply.run_calls:
            return await self._async_reask_unstreamed(chat_log, turn)
        return reply

    async def _async_reask_unstreamed(
        self, chat_log: conversation.ChatLog, turn: _Turn
    ) -> CompletionStream:
        """Ask again without streaming: some servers' tool parsers swallow a
        call on the streaming path and send an empty reply (guide, section 5).
        """
        LOGGER.debug("Streamed reply came back empty; asking again")
        return await self._async_ask(chat_log, turn, stream=False)

    async def _async_ask_closing(
        self, chat_log: conversation.ChatLog, turn: _Turn
    ) -> CompletionStream:
        """Ask for the answer from the tool results, with no calls allowed."""
        LOGGER.debug("Asking for the answer from the tool results")
        return await self._async_ask(chat_log, turn, closing=True)

    async def _async_add(
        self, chat_log: conversation.ChatLog, deltas: AsyncGenerator[Delta]
    ) -> None:
        """Stream a reply into the chat log (which runs its calls)."""
        async for _content in chat_log.async_add_delta_content_stream(
            self.entity_id, deltas
        ):
            pass

    async def _async_answer_if_silent(
        self,
        chat_log: conversation.ChatLog,
        language: str | None,
        exhausted_rounds: int | None,
    ) -> None:
        """Never leave the user with silence: say what happened."""
        last = chat_log.content[-1]
        if isinstance(last, conversation.AssistantContent) and (
            last.content and last.content.strip()
        ):
            return
        placeholders = {"rounds": str(exhausted_rounds)}
        if exhausted_rounds is not None:
            key = "rounds_exhausted"
        elif (result := _last_tool_result(chat_log)) is not None:
            # A weak model that ran a tool but could not put the result into
            # words: read the result itself.
            key = "tool_result_only"
            placeholders |= result
        else:
            key = "empty_answer"
        text = await async_spoken_message(self.hass, language, key, placeholders)
        chat_log.async_add_assistant_content_without_tools(
            conversation.AssistantContent(agent_id=self.entity_id, content=text)
        )
