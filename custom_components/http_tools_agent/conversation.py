"""Conversation agents: one entity per `conversation` subentry."""

from __future__ import annotations

import asyncio
from typing import Any, Literal, override

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
from homeassistant.const import CONF_LLM_HASS_API, CONF_PROMPT, MATCH_ALL
from homeassistant.core import Context, CoreState, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import intent, llm
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback
from homeassistant.util.ulid import ulid_now

from .agent_options import AgentOptions
from .const import CONF_BASE_URL, DOMAIN, SUBENTRY_CONVERSATION
from .entity import HttpToolsAgentEntity
from .runtime import HttpToolsConfigEntry
from .server.client import Request
from .server.warm_up import WARM_UP_TEXT, PromptWarmer, last_asked, warm_up_wanted
from .tools.llm_api import current_agent
from .turn.honesty import asks_back
from .turn.prompt import async_note, split_prompt_template
from .turn.say import async_spoken_error

# Turns run concurrently: each is its own request to the server.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    config_entry: HttpToolsConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Set up one agent per conversation subentry."""
    for subentry in config_entry.subentries.values():
        if subentry.subentry_type != SUBENTRY_CONVERSATION:
            continue
        async_add_entities(
            [HttpToolsConversationEntity(config_entry, subentry)],
            config_subentry_id=subentry.subentry_id,
        )


class HttpToolsConversationEntity(
    conversation.ConversationEntity,
    HttpToolsAgentEntity,
):
    """A conversation agent that can call HTTP tools."""

    _attr_supports_streaming = True

    def __init__(self, entry: HttpToolsConfigEntry, subentry: ConfigSubentry) -> None:
        """Initialize the agent."""
        super().__init__(entry, subentry)
        if subentry.data.get(CONF_LLM_HASS_API):
            self._attr_supported_features = (
                conversation.ConversationEntityFeature.CONTROL
            )

    @property
    @override
    def supported_languages(self) -> list[str] | Literal["*"]:
        """Any language the model speaks."""
        return MATCH_ALL

    @override
    async def async_added_to_hass(self) -> None:
        """Send the prompt's start ahead when the agent warms up its server."""
        await super().async_added_to_hass()
        runtime = self.entry.runtime_data
        options = AgentOptions.from_subentry(self.subentry.data)
        if not warm_up_wanted(
            options.warm_up, self.entry.data[CONF_BASE_URL], runtime.server_info
        ):
            return
        warmer = PromptWarmer(
            self.hass, self.entry, self.entity_id, self._async_warm_up_request
        )
        apis = self.subentry.data.get(CONF_LLM_HASS_API) or ()
        self.async_on_remove(
            warmer.async_start(follow_assist=llm.LLM_API_ASSIST in apis)
        )

        @callback
        def server_back() -> None:
            if runtime.availability.available:
                warmer.async_warm(again=True)

        self.async_on_remove(runtime.availability.async_add_listener(server_back))

    async def _async_warm_up_request(self) -> Request:
        """The first request a turn would send now, its question aside: a
        chat log filled the way a turn's is (`server/warm_up.py`). Assist's prompt
        and tools depend on the asking device (its area, its timers): the
        device and language of this agent's latest turn, else none (a typed
        question, an automation). No user."""
        device_id, language = last_asked(self.hass).get(
            self.subentry.subentry_id, (None, self.hass.config.language)
        )
        llm_context = llm.LLMContext(
            platform=DOMAIN,
            context=Context(),
            language=language,
            assistant=conversation.DOMAIN,
            device_id=device_id,
        )
        chat_log = conversation.ChatLog(self.hass, ulid_now())
        token = current_agent.set(self.agent_scope())
        try:
            await self._async_provide_llm_data(chat_log, llm_context, None)
        finally:
            current_agent.reset(token)
        chat_log.async_add_user_content(conversation.UserContent(WARM_UP_TEXT))
        return self.turn(chat_log).request()

    async def _async_provide_llm_data(
        self,
        chat_log: conversation.ChatLog,
        llm_context: llm.LLMContext,
        extra_system_prompt: str | None,
    ) -> str:
        """Home Assistant fills the chat log's system prompt and tools;
        returns the prompt template's lines that render with each message.

        Lines using `now()` render with the message, not in the system
        prompt, so the prompt's start stays the same (`prompt`).
        """
        options = self.subentry.data
        prompt, per_message = split_prompt_template(
            options.get(CONF_PROMPT) or llm.DEFAULT_INSTRUCTIONS_PROMPT
        )
        await chat_log.async_provide_llm_data(
            llm_context, options.get(CONF_LLM_HASS_API), prompt, extra_system_prompt
        )
        return per_message

    @override
    async def _async_handle_message(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
    ) -> conversation.ConversationResult:
        """Answer one user turn."""
        # The HTTP tools API reads it to offer this agent's tools, the tool
        # event to name the agent.
        token = current_agent.set(self.agent_scope())
        try:
            return await self._async_answer(user_input, chat_log)
        finally:
            current_agent.reset(token)

    async def _async_answer(
        self,
        user_input: conversation.ConversationInput,
        chat_log: conversation.ChatLog,
    ) -> conversation.ConversationResult:
        if self.hass.state in (CoreState.not_running, CoreState.starting):
            _stop_holding_the_start(self.hass)
        if (
            words := await conversation.async_handle_sentence_triggers(
                self.hass, user_input, chat_log
            )
        ) is not None:
            # A sentence of the tools (or an automation's) said to this agent
            # directly: a delayed command when its time comes, the REST API,
            # a pipeline that skipped them. Answered as the pipeline would.
            response = intent.IntentResponse(language=user_input.language)
            response.async_set_speech(words)
            return conversation.ConversationResult(
                response=response, conversation_id=chat_log.conversation_id
            )
        llm_context = user_input.as_llm_context(DOMAIN)
        last_asked(self.hass)[self.subentry.subentry_id] = (
            user_input.device_id,
            user_input.language,
        )
        try:
            per_message = await self._async_provide_llm_data(
                chat_log, llm_context, user_input.extra_system_prompt
            )
            note = await async_note(self.hass, chat_log, llm_context, per_message)
        except conversation.ConverseError as err:
            return err.as_conversation_result()
        if isinstance(asked := chat_log.content[-1], conversation.UserContent):
            self.notes.remember(asked, note)

        runtime = self.entry.runtime_data
        try:
            with runtime.turns.turn():
                asks = await self._async_handle_chat_log(
                    chat_log, user_input.language, user_input.device_id
                )
        except HomeAssistantError as err:
            # A server failure is spoken in the user's language; the next
            # turn starts clean.
            message = await async_spoken_error(self.hass, user_input.language, err)
            runtime.record_error("llm", message)
            self.async_server_failed(runtime, err, message)
            response = intent.IntentResponse(language=user_input.language)
            response.async_set_error(intent.IntentResponseErrorCode.UNKNOWN, message)
            return conversation.ConversationResult(
                response=response,
                conversation_id=chat_log.conversation_id,
                continue_conversation=False,
            )

        runtime.availability.async_mark_available()
        result = conversation.async_get_result_from_chat_log(user_input, chat_log)
        said = result.response.speech.get("plain", {}).get("speech", "")
        if asks or asks_back(said):
            # The agent asked before it acts (a PIN's instructions), or its
            # answer asks the user something ("Please tell me which city."):
            # a satellite listens again whatever the answer's last character.
            result.continue_conversation = True
        return result


@callback
def _stop_holding_the_start(hass: HomeAssistant) -> None:
    """A question asked while Home Assistant starts runs in a task its start
    waits for (the Assist dialog's pipeline run: `assist_pipeline`'s
    websocket API makes it with `hass.async_create_task`), and the first
    answer waits for the warm-up and reads the prompt: Home Assistant stayed
    `starting` for minutes (its bootstrap waits up to 5 for such tasks,
    "Setup timed out for bootstrap waiting on ... PipelineInput.execute()").
    The task becomes a background task, as Home Assistant makes its own
    long-running work: it still runs to its answer (and is cancelled on
    stop), and the start goes on without it. Home Assistant offers no
    public way to do this for a task it made.
    """
    task = asyncio.current_task()
    if task is None:
        return
    if task in hass._tasks:
        _to_background(hass, task)
    else:
        # Started eagerly: Home Assistant tracks it once it first waits.
        hass.loop.call_soon(_to_background, hass, task)


def _to_background(hass: HomeAssistant, task: asyncio.Task[Any]) -> None:
    tracked = hass._tasks
    if task not in tracked or task.done():
        return
    tracked.discard(task)
    task.remove_done_callback(tracked.remove)
    background = hass._background_tasks
    background.add(task)
    task.add_done_callback(background.remove)
