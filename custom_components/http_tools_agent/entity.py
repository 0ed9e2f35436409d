"""The agent's base entity: one agent (subentry) on one server (entry).

A turn is built here from the agent's settings and the house
(`turn(chat_log)`), and run by the tool loop (`turn/loop.py`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, override

from homeassistant.components import conversation
from homeassistant.config_entries import (
    SOURCE_REAUTH,
    SOURCE_RECONFIGURE,
    ConfigSubentry,
)
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import (
    area_registry as ar,
    device_registry as dr,
    floor_registry as fr,
    llm,
)
from homeassistant.helpers.entity import Entity

from .agent_options import AgentOptions
from .const import (
    CONF_AGENT_TOOLS,
    CONF_BASE_URL,
    CONF_MODEL,
    DEFAULT_MODEL,
    DOMAIN,
    LOGGER,
)
from .lexicon import guess_language
from .runtime import HttpToolsConfigEntry, HttpToolsRuntime
from .server.errors import ServerAuthError, ServerUnavailableError
from .server.info import reads_images
from .server.profiles import ProfileChoice, choose_profile
from .server.thinking import OpenThinking
from .small.rules import rules_for
from .tools.call_result import CallResult
from .tools.llm_api import AgentScope
from .turn.alone import async_run_alone
from .turn.context_fit import ContextWindow
from .turn.hold import Decision, HeldCall, Verdict, mask_digits
from .turn.loop import TurnLoop
from .turn.messages import ChatTools, chat_tools, this_turn
from .turn.prompt import MessageNotes
from .turn.say import agent_words, async_spoken_message
from .turn.sensitive import sensitive_intents
from .turn.state import Turn
from .turn.tool_search import mode_for, with_search

# What the agent says when a held call does not run (`turn/hold.py`).
_NOT_RUN = {
    Verdict.DECLINED: "confirm_declined",
    Verdict.NOT_ANSWERED: "confirm_not_answered",
    Verdict.EXPIRED: "confirm_expired",
    Verdict.LOCKED: "confirm_pin_locked",
}


class HttpToolsAgentEntity(Entity):
    """Base entity: one agent (subentry) on one server (entry)."""

    _attr_has_entity_name = True
    _attr_name = None

    def __init__(self, entry: HttpToolsConfigEntry, subentry: ConfigSubentry) -> None:
        """Initialize the agent."""
        self.entry = entry
        self.subentry = subentry
        # What each user message carries besides its text (`turn/prompt.py`).
        self.notes = MessageNotes()
        # How much history fits the server's context (`turn/context_fit.py`).
        self.context = ContextWindow()
        # Whether the model's replies start inside thinking (`server/thinking.py`).
        self.open_thinking = OpenThinking()
        # The profile last logged (`server/profiles.py`): logged again on a change.
        self._logged_profile: ProfileChoice | None = None
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

    def profile(self, options: AgentOptions | None = None) -> ProfileChoice:
        """The profile this agent runs with now, and why (`server/profiles.py`)."""
        options = options or AgentOptions.from_subentry(self.subentry.data)
        choice = choose_profile(
            options.profile,
            options.model,
            self.entry.runtime_data.server_info,
            self.entry.data[CONF_BASE_URL],
        )
        if choice != self._logged_profile:
            self._logged_profile = choice
            LOGGER.info(
                "%s (model %s) runs with the %s profile: %s",
                self.entity_id or self.subentry.title,
                options.model,
                choice.profile.value,
                choice.describe(),
            )
        return choice

    @override
    async def async_added_to_hass(self) -> None:
        """Follow the server's availability."""
        await super().async_added_to_hass()
        self.profile()
        self.async_on_remove(
            self.entry.runtime_data.availability.async_add_listener(
                self.async_write_ha_state
            )
        )

    def reads_images(self, options: AgentOptions | None = None) -> bool:
        """Whether a tool's image goes to this agent's model as a picture."""
        options = options or AgentOptions.from_subentry(self.subentry.data)
        caps = self.entry.runtime_data.server_info.model(options.model)
        return reads_images(options.vision, caps)

    def agent_scope(self) -> AgentScope:
        """This agent, the entry's tools it offers (for the HTTP tools API)
        and whether its model is given the images they answer."""
        names = self.subentry.data.get(CONF_AGENT_TOOLS) or ()
        return AgentScope(
            self.entity_id,
            self.entry.entry_id,
            frozenset(names),
            pictures=self.reads_images(),
        )

    def turn(
        self,
        chat_log: conversation.ChatLog,
        language: str | None = None,
        *,
        cut_note: str = "",
        data: bool = False,
        images: tuple[str, ...] = (),
        structure: dict[str, Any] | None = None,
        device_id: str | None = None,
        confirmed_request: str | None = None,
    ) -> Turn:
        """A new turn over `chat_log` (which Home Assistant has filled) with
        this agent's settings: what its requests are built from. The agent
        speaks `language`: the pipeline's, or the one the request is clearly
        in (`lexicon.guess_language`). `data`: an AI task's turn, whose answer
        is data, not speech, and whose question carries `images`."""
        options = AgentOptions.from_subentry(self.subentry.data)
        profile = self.profile(options)
        rules = rules_for(options, profile)
        llm_api = chat_log.llm_api
        offered, search = with_search(
            llm_api,
            chat_tools(llm_api) if llm_api else ChatTools(),
            mode_for(options.tool_search, profile.small),
            confirmed_request or this_turn(chat_log)[0],
        )
        return Turn(
            options,
            chat_log,
            self.notes,
            self.entry.runtime_data.server_info,
            self.context,
            self.open_thinking,
            profile=profile,
            rules=rules,
            offered=offered,
            search=search,
            places=self._places() if rules.invented_places else frozenset(),
            cut_note=cut_note,
            language=language,
            data=data,
            images=images,
            structure=structure,
            device_id=device_id,
            confirmed_request=confirmed_request,
            sensitive=sensitive_intents(self.hass) if options.confirm_intents else None,
            pictures=self.reads_images(options),
        )

    def _places(self) -> frozenset[str]:
        """The house's area and floor names and aliases, lower-cased."""
        names: set[str] = set()
        for area in ar.async_get(self.hass).async_list_areas():
            names.update([area.name, *area.aliases])
        for floor in fr.async_get(self.hass).async_list_floors():
            names.update([floor.name, *floor.aliases])
        return frozenset(name.strip().lower() for name in names)

    async def _async_handle_chat_log(
        self,
        chat_log: conversation.ChatLog,
        language: str | None = None,
        device_id: str | None = None,
    ) -> bool:
        """One turn: the answer to a held call (`turn/hold.py`), or the tool
        loop over the chat log (`turn/loop.py`). True when the turn ends with
        the agent's question (the conversation continues)."""
        runtime = self.entry.runtime_data
        text = this_turn(chat_log)[0]
        decision = runtime.held.answer(
            chat_log.conversation_id,
            device_id,
            self.entity_id,
            text,
            dict(runtime.tools.secrets),
        )
        if decision is not None:
            return await self._async_answer_held(chat_log, decision, device_id)
        language = guess_language(text, language)
        cut_note = await async_spoken_message(self.hass, language, "cut_off", {})
        turn = self.turn(chat_log, language, cut_note=cut_note, device_id=device_id)
        await TurnLoop(self.hass, runtime, turn, self.entity_id).async_run()
        return turn.asked

    async def _async_answer_held(
        self,
        chat_log: conversation.ChatLog,
        decision: Decision,
        device_id: str | None,
    ) -> bool:
        """The user answered a held call: run it (a yes, the right PIN), ask
        for the PIN again, or say that it was not done."""
        held = decision.held
        if held.pin is not None:
            _hide_pin(chat_log)
        language = held.language
        if decision.verdict is Verdict.RUN and held.sentence:
            await self._async_run_held_sentence(chat_log, held, device_id)
            return False
        if decision.verdict is Verdict.RUN:
            cut_note = await async_spoken_message(self.hass, language, "cut_off", {})
            turn = self.turn(
                chat_log,
                language,
                cut_note=cut_note,
                device_id=device_id,
                confirmed_request=held.request,
            )
            loop = TurnLoop(self.hass, self.entry.runtime_data, turn, self.entity_id)
            await loop.async_run_confirmed(held.call)
            return False
        if decision.verdict is Verdict.WRONG_PIN:
            again = await async_spoken_message(
                self.hass, language, "confirm_wrong_pin", {}
            )
            chat_log.async_add_assistant_content_without_tools(
                agent_words(self.entity_id, again, again)
            )
            return True
        key = _NOT_RUN[decision.verdict]
        said = await async_spoken_message(self.hass, language, key, {})
        chat_log.async_add_assistant_content_without_tools(
            agent_words(self.entity_id, said, said)
        )
        return False

    async def _async_run_held_sentence(
        self,
        chat_log: conversation.ChatLog,
        held: HeldCall,
        device_id: str | None,
    ) -> None:
        """The yes to a call a tool's own sentence held: run it and say its
        words with no model, as the sentence would have; the call and its
        result stay in the chat log for later turns."""
        runtime = self.entry.runtime_data
        definition = runtime.tools.active.by_name.get(held.call.tool_name)
        if definition is None or not definition.enabled:  # replaced meanwhile
            said = await async_spoken_message(
                self.hass, held.language, "confirm_expired", {}
            )
        else:
            call = llm.ToolInput(
                held.call.tool_name, held.call.tool_args, external=True
            )
            chat_log.async_add_assistant_content_without_tools(
                conversation.AssistantContent(
                    agent_id=self.entity_id, content=None, tool_calls=[call]
                )
            )
            run, said = await async_run_alone(
                self.hass,
                runtime,
                definition,
                dict(held.call.tool_args),
                held.language,
                device_id=device_id,
            )
            chat_log.async_add_assistant_content_without_tools(
                conversation.ToolResultContent(
                    agent_id=self.entity_id,
                    tool_call_id=call.id,
                    tool_name=call.tool_name,
                    result=CallResult.of_run(run),
                )
            )
        chat_log.async_add_assistant_content_without_tools(
            agent_words(self.entity_id, said, said)
        )

    def async_server_failed(
        self,
        runtime: HttpToolsRuntime,
        err: HomeAssistantError,
        message: str | None = None,
    ) -> None:
        """Tell the entry what a failed turn or task says about its server
        (`message`: what the user was told, the error's text otherwise)."""
        availability = runtime.availability
        if isinstance(err, ServerUnavailableError):
            availability.async_mark_unavailable(message or str(err))
            return
        # Anything else came from a server that answered.
        availability.async_mark_available()
        if isinstance(err, ServerAuthError) and not any(
            # Home Assistant starts no reauth while one of these runs.
            self.entry.async_get_active_flows(
                self.hass, {SOURCE_REAUTH, SOURCE_RECONFIGURE}
            )
        ):
            LOGGER.warning(
                "The language model server of %s refused the API key; "
                "asking for a new one (re-authentication)",
                self.entry.title,
            )
            self.entry.async_start_reauth(self.hass)


def _hide_pin(chat_log: conversation.ChatLog) -> None:
    """The user's answer with its digits hidden: a PIN is never sent to the
    model (later requests carry the conversation) nor kept in the chat log."""
    for index in range(len(chat_log.content) - 1, -1, -1):
        content = chat_log.content[index]
        if isinstance(content, conversation.UserContent):
            chat_log.content[index] = replace(
                content, content=mask_digits(content.content)
            )
            return
