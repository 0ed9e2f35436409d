"""AI Task entities: one per `ai_task_data` subentry, as core's integrations.

`ai_task.generate_data` runs through the agent's tool loop (`turn/loop.py`):
the HTTP tools this task offers, the LLM APIs it selects (and the one a
caller passes), text calls and the small profile's rules, like a
conversation turn. Its answer is data, not speech: kept as the model wrote
it. With a `structure` the answer must be JSON that matches it
(`task_data.py`); a mismatch is asked again once, then is an error naming
what did not match. Image attachments go with the instructions as image
parts.
"""

from __future__ import annotations

from typing import override

from homeassistant.components import ai_task, conversation
from homeassistant.components.ai_task.const import DEFAULT_SYSTEM_PROMPT
from homeassistant.const import CONF_LLM_HASS_API, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import llm
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from .const import DOMAIN, SUBENTRY_AI_TASK
from .entity import HttpToolsAgentEntity
from .runtime import HttpToolsConfigEntry
from .task_data import (
    StructureMismatch,
    async_images,
    mismatch_note,
    read_structured,
    structure_prompt,
    structure_schema,
)
from .tools.llm_api import current_agent
from .turn.loop import TurnLoop
from .turn.messages import AgentWords

# Tasks run concurrently: each is its own request to the server.
PARALLEL_UPDATES = 0


async def async_setup_entry(
    hass: HomeAssistant,
    config_entry: HttpToolsConfigEntry,
    async_add_entities: AddConfigEntryEntitiesCallback,
) -> None:
    """Set up one AI Task entity per `ai_task_data` subentry."""
    for subentry in config_entry.subentries.values():
        if subentry.subentry_type != SUBENTRY_AI_TASK:
            continue
        async_add_entities(
            [HttpToolsAITaskEntity(config_entry, subentry)],
            config_subentry_id=subentry.subentry_id,
        )


class HttpToolsAITaskEntity(ai_task.AITaskEntity, HttpToolsAgentEntity):
    """Generates data with the server's model and the HTTP tools."""

    _attr_supported_features = (
        ai_task.AITaskEntityFeature.GENERATE_DATA
        | ai_task.AITaskEntityFeature.SUPPORT_ATTACHMENTS
    )

    @override
    async def _async_generate_data(
        self,
        task: ai_task.GenDataTask,
        chat_log: conversation.ChatLog,
    ) -> ai_task.GenDataTaskResult:
        """Run the task through the tool loop; read its answer."""
        # The HTTP tools API reads it to offer this task's tools.
        token = current_agent.set(self.agent_scope())
        try:
            return await self._async_run_task(task, chat_log)
        finally:
            current_agent.reset(token)

    async def _async_run_task(
        self, task: ai_task.GenDataTask, chat_log: conversation.ChatLog
    ) -> ai_task.GenDataTaskResult:
        await self._async_provide_task_data(task, chat_log)
        images = await async_images(self.hass, task.attachments or ())
        text = await self._async_answer(task, chat_log, images)
        if task.structure is None:
            return ai_task.GenDataTaskResult(
                conversation_id=chat_log.conversation_id, data=text
            )
        try:
            data = read_structured(text, task.structure)
        except StructureMismatch as err:
            # Asked once more, saying what did not match.
            chat_log.async_add_user_content(
                conversation.UserContent(mismatch_note(err))
            )
            text = await self._async_answer(task, chat_log, images)
            try:
                data = read_structured(text, task.structure)
            except StructureMismatch as again:
                raise HomeAssistantError(
                    translation_domain=DOMAIN,
                    translation_key="task_structure_mismatch",
                    translation_placeholders={"task": task.name, "error": str(again)},
                ) from again
        return ai_task.GenDataTaskResult(
            conversation_id=chat_log.conversation_id, data=data
        )

    async def _async_answer(
        self,
        task: ai_task.GenDataTask,
        chat_log: conversation.ChatLog,
        images: tuple[str, ...],
    ) -> str:
        """One run of the tool loop over the task's chat log; its answer."""
        runtime = self.entry.runtime_data
        try:
            with runtime.turns.turn():
                turn = self.turn(
                    chat_log,
                    data=True,
                    images=images,
                    structure=structure_schema(task.structure, chat_log.llm_api)
                    if task.structure is not None
                    else None,
                )
                await TurnLoop(self.hass, runtime, turn, self.entity_id).async_run()
        except HomeAssistantError as err:
            self.async_server_failed(runtime, err)
            raise
        runtime.availability.async_mark_available()
        answer = chat_log.content[-1]
        if isinstance(answer, conversation.AssistantContent) and not (
            isinstance(answer.native, AgentWords) and answer.native.history is None
        ):
            # The model's words, or the agent's read-out of the results.
            return answer.content or ""
        # The agent's own words in place of an answer ("The model gave no
        # answer.", a failed action): no data, the task's error says them.
        said = (
            answer.content if isinstance(answer, conversation.AssistantContent) else ""
        )
        raise HomeAssistantError(
            translation_domain=DOMAIN,
            translation_key="task_no_answer",
            translation_placeholders={"task": task.name, "said": said or ""},
        )

    async def _async_provide_task_data(
        self, task: ai_task.GenDataTask, chat_log: conversation.ChatLog
    ) -> None:
        """The task's prompt and tools: this subentry's instructions and
        LLM APIs (its HTTP tools), with the API a caller passed; the
        structure's JSON schema ends the prompt."""
        options = self.subentry.data
        apis: list[str] = list(options.get(CONF_LLM_HASS_API) or ())
        if task.llm_api is not None and task.llm_api.id not in apis:
            apis.append(task.llm_api.id)
        previous = chat_log.llm_api
        llm_context = (
            previous.llm_context
            if previous is not None
            else llm.LLMContext(
                platform=DOMAIN,
                context=self._context,
                language=None,
                assistant=ai_task.DOMAIN,
                device_id=None,
            )
        )
        extra = structure_prompt(task.structure, previous) if task.structure else None
        await chat_log.async_provide_llm_data(
            llm_context,
            apis or None,
            options.get(CONF_PROMPT) or DEFAULT_SYSTEM_PROMPT,
            extra,
        )
