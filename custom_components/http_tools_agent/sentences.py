"""The tools' own sentences, answered before any model (`ToolSentences`).

A tool's `sentences` (`engine/sentences.py`) are registered with Home
Assistant's conversation integration as **sentence triggers**
(`AgentManager.register_trigger`, the call the automation trigger
`conversation/trigger.py` makes), one trigger per entry. Home Assistant
matches them with its own matcher (hassil) and the Assist pipeline tries
them before any conversation agent other than its own
(`conversation.async_handle_sentence_triggers`, with or without "prefer
handling commands locally"); Home Assistant's own agent tries them too. The
trigger's answer is what is spoken: the tool's `speech`, else the agent's
read-out of the result. No model, the same words every time.

Why triggers, and not the other ways a sentence reaches Home Assistant:

- custom sentences (`custom_sentences/<language>/*.yaml`, or the
  `conversation: intents:` YAML) are the user's files: an integration would
  have to write into the configuration directory, and they are matched only
  when the pipeline prefers local intents, with an intent handler
  registered for the whole house;
- the automation trigger platform wraps this same `register_trigger`, and
  answers only through an automation's `ScriptRunResult`: the callback here
  gets the user's input (language, conversation, device, agent) and the
  match, and returns the words.

What Home Assistant's triggers decide for us: every registered sentence is
matched whatever the pipeline's language (one set of trigger sentences), so
each language's templates are registered and the answer is said in the
language of the template matched (the pipeline's, for a user speaking it);
a matched trigger always answers (Home Assistant says "Done" when every
callback declines), so a sentence is never passed on to the agent.

A tool that asks first (`confirm`) runs nothing here: its question is the
answer, and the call is held (`turn/hold.py`) for the conversation, the
device and the pipeline's agent, when that agent is one of this entry's; the
"yes" matches no sentence, reaches the agent, and runs exactly the held call
(`entity.py`). With any other agent nothing could take the yes, so the
answer says to ask this integration's agent, and nothing runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from hassil.recognize import RecognizeResult
from homeassistant.components import conversation
from homeassistant.components.conversation.agent_manager import get_agent_manager
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers import entity_registry as er, llm

from .const import LOGGER
from .engine.arguments import check_arguments, compile_validator
from .engine.definitions import ToolDefinition
from .engine.sentences import SentenceVariant, sentence_variants
from .lexicon import LEXICONS
from .runtime import HttpToolsConfigEntry
from .turn.alone import async_run_alone
from .turn.hold import HeldCall
from .turn.say import Said, async_confirm_question, async_words


@dataclass(frozen=True, slots=True)
class _Target:
    """What a registered template runs (`later`: the template said with a
    later time, which runs nothing)."""

    definition: ToolDefinition
    variant: SentenceVariant
    later: bool = False


def _can_run_later(definition: ToolDefinition) -> bool:
    """Whether Home Assistant's delayed command could carry the tool out:
    a change that asks first has nobody to say yes then, and a read's
    answer is heard by nobody."""
    return not (definition.needs_confirmation or definition.read_only)


def _later_variants(variant: SentenceVariant) -> list[str]:
    """`variant` said with a later time before or after it."""
    lexicon = LEXICONS.get(_base(variant.language))
    return [
        template
        for later in (lexicon.later if lexicon is not None else ())
        for template in (f"{later} {variant.template}", f"{variant.template} {later}")
    ]


def _base(language: str | None) -> str:
    return (language or "").split("-")[0].lower()


class ToolSentences:
    """The sentence trigger of one entry's tools: registered with the
    entry, registered again when its tools are replaced, removed on
    unload."""

    def __init__(self, hass: HomeAssistant, entry: HttpToolsConfigEntry) -> None:
        """Nothing registered yet."""
        self.hass = hass
        self.entry = entry
        self._targets: dict[str, list[_Target]] = {}
        self._unregister: CALLBACK_TYPE | None = None

    @callback
    def async_update(self, tools: Iterable[ToolDefinition]) -> None:
        """Register the sentences of `tools` (the ones offered), in place of
        the ones registered before."""
        self.async_stop()
        targets: dict[str, list[_Target]] = {}
        for definition in tools:
            for variant in sentence_variants(
                definition.sentences, definition.parameters
            ):
                targets.setdefault(variant.template, []).append(
                    _Target(definition, variant)
                )
                if not _can_run_later(definition):
                    for template in _later_variants(variant):
                        targets.setdefault(template, []).append(
                            _Target(definition, variant, later=True)
                        )
        self._targets = targets
        if targets:
            self._unregister = get_agent_manager(self.hass).register_trigger(
                list(targets), self._async_answer
            )
            LOGGER.debug(
                "%s: %d tool sentences registered", self.entry.title, len(targets)
            )

    @callback
    def async_stop(self) -> None:
        """Remove the trigger."""
        if self._unregister is not None:
            self._unregister()
            self._unregister = None
        self._targets = {}

    def _target(self, template: str | None, language: str | None) -> _Target | None:
        """The tool a matched template runs: of the templates written alike,
        the one in the pipeline's language."""
        found = self._targets.get(template or "")
        if not found:
            return None
        wanted = _base(language)
        return next((t for t in found if _base(t.variant.language) == wanted), found[0])

    async def _async_answer(
        self, user_input: conversation.ConversationInput, result: RecognizeResult
    ) -> str | None:
        """A matched sentence: run its tool (or hold it for a yes), return
        the words to say."""
        sentence = result.intent_sentence
        target = self._target(
            sentence.text if sentence is not None else None, user_input.language
        )
        if target is None:
            return None  # another entry's trigger, or tools replaced meanwhile
        definition, variant = target.definition, target.variant
        if target.later:
            # Not left to Home Assistant's delayed command: it could not be
            # carried out then (`_can_run_later`).
            LOGGER.debug("%r asks %s for later", user_input.text, definition.name)
            return await async_words(self.hass, variant.language, Said("not_later"))
        arguments: dict[str, Any] = {
            name: entity.value.strip()
            if isinstance(entity.value, str)
            else entity.value
            for name, entity in result.entities.items()
        }
        arguments.update(variant.arguments)
        language = variant.language
        runtime = self.entry.runtime_data
        LOGGER.debug(
            "%r matched a sentence of %s: %s",
            user_input.text,
            definition.name,
            arguments,
        )
        checked = check_arguments(
            definition.name,
            definition.parameters,
            compile_validator(definition.parameters),
            arguments,
        )
        if checked.error is not None:
            return await async_words(
                self.hass, language, Said("invalid_arguments", {"error": checked.error})
            )
        if definition.needs_confirmation:
            return await self._async_hold(
                user_input, definition, checked.arguments, language
            )
        _, words = await async_run_alone(
            self.hass,
            runtime,
            definition,
            checked.arguments,
            language,
            context=user_input.context,
            device_id=user_input.device_id,
        )
        return words

    async def _async_hold(
        self,
        user_input: conversation.ConversationInput,
        definition: ToolDefinition,
        arguments: dict[str, Any],
        language: str,
    ) -> str:
        """A change that asks first: its question, the call held for the
        pipeline's agent when that is one of ours (else nothing can take
        the yes: say so)."""
        agent_id = user_input.agent_id
        conversation_id = user_input.conversation_id
        if (
            agent_id is None
            or conversation_id is None
            or not self._is_our_agent(agent_id)
        ):
            return await async_words(
                self.hass, language, Said("sentence_confirm_elsewhere")
            )
        call = llm.ToolInput(definition.name, arguments)
        question = await async_confirm_question(
            self.hass, language, call, definition.confirmation
        )
        held = self.entry.runtime_data.held
        held.hold(
            HeldCall(
                conversation_id=conversation_id,
                device_id=user_input.device_id,
                agent_id=agent_id,
                call=call,
                request=user_input.text,
                question=question,
                language=language,
                expires=held.deadline(),
                pin=definition.confirmation.pin,
                sentence=True,
            )
        )
        self.entry.runtime_data.record_quirk("sentence_held_for_confirmation")
        return question

    def _is_our_agent(self, agent_id: str) -> bool:
        """Whether `agent_id` is a conversation agent of this entry."""
        registered = er.async_get(self.hass).async_get(agent_id)
        return (
            registered is not None
            and registered.config_entry_id == self.entry.entry_id
            and registered.domain == conversation.DOMAIN
        )
