"""The tool loop over Home Assistant's ChatLog.

One turn: up to `max_tool_iterations` rounds of completion -> tool calls ->
results; a round streams text to the pipeline already filtered of call
markup and thinking. A streamed round that comes back empty is asked once
more without streaming (servers whose tool parser swallows the call on the
SSE path). When the rounds run out, one closing request without tool calls
asks for the answer, so the user always hears something.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.entity import Entity
import openai

from .const import (
    CONF_MAX_TOKENS,
    CONF_MODEL,
    CONF_STREAM,
    CONF_TEMPERATURE,
    CONF_TOOL_CHOICE,
    DEFAULT_MAX_TOKENS,
    DEFAULT_MODEL,
    DEFAULT_STREAM,
    DEFAULT_TEMPERATURE,
    DEFAULT_TOOL_CHOICE,
    DOMAIN,
    LOGGER,
)
from .deltas import Delta, RoundTransformer
from .engine.speakable import speakable
from .errors import MalformedResponse, llm_error_handler
from .llm_api import RESULT_KEY, current_agent_id
from .messages import openai_tools, to_openai_message, to_openai_messages
from .speech import async_spoken_message

if TYPE_CHECKING:
    from . import HttpToolsConfigEntry


# The SDK stops reading at `[DONE]` and leaves its inner SSE generators to
# the garbage collector, which closes them in a chain of short tasks. Letting
# the chain run here keeps a finished turn from leaving tasks behind.
_SETTLE_STEPS = 8

# Sent (not stored in the chat log) with the closing request of a turn that
# ran tools.
CLOSING_NUDGE = (
    "Answer the user's question now in plain text using the tool results "
    "above. Do not call tools."
)


async def _async_settle_stream() -> None:
    for _ in range(_SETTLE_STEPS):
        await asyncio.sleep(0)


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
        self._attr_unique_id = subentry.subentry_id
        self._attr_device_info = dr.DeviceInfo(
            identifiers={(DOMAIN, subentry.subentry_id)},
            name=subentry.title,
            manufacturer="OpenAI-compatible server",
            model=subentry.data.get(CONF_MODEL, DEFAULT_MODEL),
            entry_type=dr.DeviceEntryType.SERVICE,
        )

    async def _async_handle_chat_log(
        self, chat_log: conversation.ChatLog, language: str | None = None
    ) -> None:
        """Run the tool loop until the model answers."""
        token = current_agent_id.set(self.entity_id)
        try:
            await self._async_run_rounds(chat_log, language)
        finally:
            current_agent_id.reset(token)

    async def _async_run_rounds(
        self, chat_log: conversation.ChatLog, language: str | None
    ) -> None:
        runtime = self.entry.runtime_data
        options = self.subentry.data
        stream = bool(options.get(CONF_STREAM, DEFAULT_STREAM))
        tools: list[dict[str, Any]] = []
        schemas: dict[str, dict[str, Any]] = {}
        if chat_log.llm_api is not None:
            tools, schemas = openai_tools(chat_log.llm_api)
        tool_choice = options.get(CONF_TOOL_CHOICE, DEFAULT_TOOL_CHOICE)
        request: dict[str, Any] = {
            "model": options.get(CONF_MODEL, DEFAULT_MODEL),
            "temperature": float(options.get(CONF_TEMPERATURE, DEFAULT_TEMPERATURE)),
            "max_tokens": int(options.get(CONF_MAX_TOKENS, DEFAULT_MAX_TOKENS)),
            "user": chat_log.conversation_id,
        }
        messages = to_openai_messages(chat_log)
        seen_calls: set[str] = set()
        max_rounds = runtime.settings.max_tool_iterations

        round_number = 0
        for round_number in range(max_rounds + 1):
            closing = round_number == max_rounds
            if tools:
                request["tools"] = tools
                request["tool_choice"] = "none" if closing else tool_choice
            transformer = RoundTransformer(
                schemas,
                seen_calls,
                run_calls=bool(tools) and not closing,
                after_tool_results=bool(seen_calls),
            )
            sent = messages
            if closing and seen_calls:
                # Servers without a tool parser ignore `tool_choice: none`;
                # small models then repeat the call instead of answering.
                # Saying so plainly makes them answer from the results
                # (measured with Qwen2.5-0.5B: 0/10 -> 10/10 weather answers).
                sent = [*messages, {"role": "system", "content": CLOSING_NUDGE}]
            async for content in chat_log.async_add_delta_content_stream(
                self.entity_id,
                self._async_round(
                    runtime.client, {**request, "messages": sent}, stream, transformer
                ),
            ):
                if (message := to_openai_message(content)) is not None:
                    messages.append(message)
            if transformer.calls:
                # Results (or errors) are in the log: the model reads them next.
                continue
            if seen_calls and not transformer.text.strip() and not closing:
                # Tools ran, but this reply only repeated a call or echoed a
                # result: the results are in, so ask plainly for the answer.
                LOGGER.debug("No answer after the tool results; asking for it")
                max_rounds = round_number + 1
                continue
            break

        last = chat_log.content[-1]
        if isinstance(last, conversation.AssistantContent) and (
            last.content and last.content.strip()
        ):
            return
        # Never leave the user with silence: say what happened.
        placeholders = {"rounds": str(runtime.settings.max_tool_iterations)}
        if round_number >= runtime.settings.max_tool_iterations:
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

    async def _async_round(
        self,
        client: openai.AsyncOpenAI,
        request: dict[str, Any],
        stream: bool,
        transformer: RoundTransformer,
    ) -> AsyncGenerator[Delta]:
        """Ask the model once and yield what it says as chat log deltas."""
        create = cast(Callable[..., Awaitable[Any]], client.chat.completions.create)
        yield {"role": "assistant"}
        with llm_error_handler():
            if stream:
                # `async with` closes the stream even when the turn is cut
                # short, so no response is left open.
                async with await create(**request, stream=True) as response:
                    async for chunk in response:
                        for delta in transformer.chunk(chunk):
                            yield delta
                await _async_settle_stream()
                for delta in transformer.finish():
                    yield delta
                if transformer.empty and transformer.run_calls:
                    LOGGER.debug("Streamed round came back empty; asking again")
                    transformer.restart_text()
                    stream = False
            if not stream:
                completion = await create(**request, stream=False)
                if not hasattr(completion, "choices"):
                    # An HTML page or other text where JSON was expected.
                    raise MalformedResponse
                choice = completion.choices[0] if completion.choices else None
                if choice is not None:
                    for delta in transformer.message(
                        choice.message, choice.finish_reason
                    ):
                        yield delta
                for delta in transformer.finish():
                    yield delta
        for delta in transformer.closing_deltas():
            yield delta
