"""The tool loop over Home Assistant's ChatLog: the guide's loop.

Each round asks the model once; the chat log runs the calls of its reply
and the next request carries their results, until a reply makes no call
(the answer) or `max_tool_iterations` rounds ran. Which calls run is
`turn/calls.py` (argument checks, the call cap, repeats, calls copied from
results) in every profile; the `small` profile adds the rules of
`small/rules.py` (the request for the answer after results among them).
What keeps a turn from ending in silence: a streamed reply that comes back
without words or a call (thinking alone counts as nothing) is asked again
without streaming; a request longer than the server's context is sent again
once without the older history; tools that ran but got no answer lead to
one closing request for it; and when even that stays silent, the agent says
what happened (or reads the tools' results).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
import re
from typing import override

from homeassistant.components import conversation
from homeassistant.config_entries import ConfigSubentry
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
from .engine.lookup import named_items
from .engine.speakable import speakable
from .lexicon import guess_language
from .runtime import HttpToolsConfigEntry
from .server.errors import ContextOverflowError
from .server.profiles import ProfileChoice, choose_profile
from .small.rules import asks_for, texts_of
from .tools.llm_api import AgentScope
from .turn.calls import call_key, new_call_id
from .turn.changes import says_failed
from .turn.context_fit import ContextWindow
from .turn.honesty import Withheld, asks_for_action
from .turn.messages import AgentWords, ChatTools, chat_tools, tool_result_text
from .turn.outcomes import RESULT_KEY, succeeded
from .turn.prompt import MessageNotes
from .turn.reply import CompletionStream, Delta
from .turn.say import async_spoken_message
from .turn.state import Ask, Turn, this_turn, turn_rules


def _last_round(chat_log: conversation.ChatLog) -> list[conversation.ToolResultContent]:
    """The tool results of this turn's last round that had calls, in order."""
    found: list[conversation.ToolResultContent] = []
    for content in reversed(chat_log.content):
        if isinstance(content, conversation.ToolResultContent):
            found.append(content)
        elif found or isinstance(content, conversation.UserContent):
            break
    return found[::-1]


# Assist's overview of the house: what the model reads to act, never an
# answer of its own.
_CONTEXT_TOOLS = ("GetLiveContext",)


_NAME_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_SAID_WORD = re.compile(r"[^\W\d_]+")


def _asked(
    content: conversation.ToolResultContent,
    call: llm.ToolInput | None,
    question: str,
    read_only: frozenset[str],
) -> bool:
    """Whether the user's words ask for what this call gave. A change: its
    verb or another word of its name (`rules.asks_for`). A read: its
    text arguments are words of the request ("Madrid" for "How hot is it in
    Madrid?"), or a word of its name is ("list" for "What's on my shopping
    list?"); the weather in London read for "Tell everyone dinner is
    ready." is neither."""
    name = content.tool_name.rpartition("__")[2]
    if name in _CONTEXT_TOOLS:
        return False
    if content.tool_name not in read_only:
        return asks_for(content.tool_name, question)
    lowered = question.lower()
    texts = texts_of(call.tool_args) if call is not None else frozenset()
    if texts and all(text in lowered for text in texts):
        return True
    said = set(_SAID_WORD.findall(lowered))
    words = {w.lower() for w in _NAME_WORD.findall(name) if len(w) > 2}
    return any(w in said or f"{w}s" in said or w.rstrip("s") in said for w in words)


def _results_in_words(
    chat_log: conversation.ChatLog, read_only: frozenset[str]
) -> tuple[str, dict[str, str]] | None:
    """This turn's successful results that the request asked for, as an
    answer ("Rome: sunny, 16 °C.", "apples (3), bananas (6), milk (1).",
    "Done: eggs (1)."), as a spoken message key and its placeholders; None
    when none did. The weather nobody asked for, or Assist's overview of
    the house, is never read out."""
    question, since = this_turn(chat_log)
    calls = {
        call.id: call
        for content in since
        if isinstance(content, conversation.AssistantContent)
        for call in content.tool_calls or ()
    }
    asked = [
        content
        for content in since
        if isinstance(content, conversation.ToolResultContent)
        and succeeded(content)
        and _asked(content, calls.get(content.tool_call_id), question, read_only)
    ]
    if not asked:
        return None
    changes = [content for content in asked if content.tool_name not in read_only]
    acted = bool(changes)
    texts: list[str] = []
    # "Done" is said of the changes: the reads that led to them are no news.
    for content in changes or asked:
        text = content.result.data.get(RESULT_KEY)
        if not isinstance(text, str):
            text = tool_result_text(content.result)
        if (words := speakable(text).strip()) and words not in texts:
            texts.append(words)
    result = "; ".join(texts).rstrip(".") + "." if texts else ""
    if acted:
        return ("tool_result_done", {"result": result}) if texts else ("done", {})
    if texts:
        return "tool_result_only", {"result": result}
    return "tool_result_empty", {}


def _latest_result(chat_log: conversation.ChatLog, tool: str) -> str | None:
    """The text of this turn's latest successful result of `tool`."""
    for content in reversed(this_turn(chat_log)[1]):
        if (
            isinstance(content, conversation.ToolResultContent)
            and content.tool_name == tool
            and succeeded(content)
        ):
            return tool_result_text(content.result)
    return None


async def _agent_calls(calls: list[llm.ToolInput]) -> AsyncGenerator[Delta]:
    """Calls the agent makes itself, as an assistant message without words."""
    yield {"role": "assistant"}
    yield {"tool_calls": calls}


def _round_failed(chat_log: conversation.ChatLog) -> bool:
    """Whether a call of the last round got an error (the model may retry)."""
    return any(not succeeded(content) for content in _last_round(chat_log))


class HttpToolsAgentEntity(Entity):
    """Base entity: one agent (subentry) on one server (entry)."""

    _attr_has_entity_name = True
    _attr_name = None

    def __init__(self, entry: HttpToolsConfigEntry, subentry: ConfigSubentry) -> None:
        """Initialize the agent."""
        self.entry = entry
        self.subentry = subentry
        # What each user message carries besides its text (`prompt`).
        self.notes = MessageNotes()
        # How much history fits the server's context (`context_fit`).
        self.context = ContextWindow()
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

    def agent_scope(self) -> AgentScope:
        """This agent and the entry's tools it offers (for the HTTP tools API)."""
        names = self.subentry.data.get(CONF_AGENT_TOOLS) or ()
        return AgentScope(self.entity_id, self.entry.entry_id, frozenset(names))

    def turn(self, chat_log: conversation.ChatLog) -> Turn:
        """A new turn over `chat_log` (which Home Assistant has filled) with
        this agent's settings: what its requests are built from."""
        options = AgentOptions.from_subentry(self.subentry.data)
        profile = self.profile(options)
        rules = turn_rules(options, profile)
        return Turn(
            options,
            chat_log,
            self.notes,
            self.entry.runtime_data.server_info,
            self.context,
            profile=profile,
            rules=rules,
            offered=chat_tools(chat_log.llm_api) if chat_log.llm_api else ChatTools(),
            places=self._places() if rules.invented_places else frozenset(),
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
        self, chat_log: conversation.ChatLog, language: str | None = None
    ) -> None:
        """The guide's loop: ask, run the reply's calls, send their results
        back, until the model answers or the rounds run out."""
        turn = self.turn(chat_log)
        # The agent's own words in the user's language: the pipeline's, or
        # the one the request is clearly in.
        language = guess_language(this_turn(chat_log)[0], language)
        turn.cut_note = await async_spoken_message(self.hass, language, "cut_off", {})
        rounds = self.entry.runtime_data.settings.max_tool_iterations
        for turn.round in range(rounds):
            reply = await self._async_ask(chat_log, turn)
            if reply.lookups:
                await self._async_look_up(chat_log, turn, reply)
                if turn.verdict is not None:
                    break
            if not reply.calls:
                self._note_required_answered(turn, reply)
                if turn.seen_calls and not reply.text.strip():
                    # Tools ran, but this reply only repeated a call or echoed
                    # a result: the results are in, so ask for the answer.
                    await self._async_ask_closing(chat_log, turn)
                break
            if turn.rules.answer_request and not _round_failed(chat_log):
                # Small models: the results are in, ask for the answer
                # (`small/rules.py`). A failed call gets another round, so
                # the model can retry.
                await self._async_ask_answer(chat_log, turn, rounds)
                break
        else:
            # Calls kept coming until the rounds ran out.
            await self._async_ask_closing(chat_log, turn)
        await self._async_answer_if_silent(chat_log, turn, language)

    async def _async_look_up(
        self, chat_log: conversation.ChatLog, turn: Turn, reply: CompletionStream
    ) -> None:
        """Changes refused for an id nobody read: their collection was read
        (`Rules.reads_first`); the agent makes the change itself on the one
        item the user's words name, or says that none, or several, do."""
        question = this_turn(chat_log)[0]
        calls: list[llm.ToolInput] = []
        for lookup in reply.lookups:
            text = _latest_result(chat_log, lookup.lister)
            if text is None:
                continue  # the read failed: the model reads why
            found = named_items(text, lookup.key, question)
            if len(found) == 1:
                arguments = {**lookup.arguments, lookup.key: found[0][0]}
                calls.append(
                    llm.ToolInput(
                        tool_name=lookup.tool, tool_args=arguments, id=new_call_id()
                    )
                )
            elif found:
                names = " / ".join(name for _, name in found)
                turn.verdict = ("which_one", {"names": names})
            else:
                turn.verdict = ("no_match", {})
        if not calls:
            return
        turn.verdict = None
        for call in calls:
            turn.seen_calls.add(call_key(call.tool_name, call.tool_args))
        LOGGER.debug("Changing the items the request names: %s", calls)
        await self._async_add(chat_log, _agent_calls(calls))
        turn.calls_run += len(calls)
        turn.changed = True

    def _note_required_answered(self, turn: Turn, reply: CompletionStream) -> None:
        """The server does not enforce `required` (llama-cpp-python, small
        models): the words are the answer, not a reason to loop."""
        if turn.tool_choice() == "required" and reply.text.strip():
            self.entry.runtime_data.record_quirk(
                "required_answered_in_words",
                "The model answered in words although tool_choice is "
                "required (the server does not enforce it)",
            )

    async def _async_ask(
        self,
        chat_log: conversation.ChatLog,
        turn: Turn,
        ask: Ask = Ask.ROUND,
        *,
        stream: bool | None = None,
    ) -> CompletionStream:
        """Ask the model once; the chat log runs the calls of its reply."""
        reply = turn.reply(ask)
        stream = turn.options.stream if stream is None else stream
        runtime = self.entry.runtime_data
        request = turn.request(ask)
        try:
            async with runtime.turns.request():
                await self._async_add(
                    chat_log,
                    reply.async_run(
                        runtime.client,
                        request.params,
                        stream=stream,
                        extra_body=request.extra_body,
                    ),
                )
        except ContextOverflowError as err:
            if turn.refitted:
                raise  # spoken as the server's error
            self._learn_context(turn, err, request.chars)
            # As the agent streams: an empty stream was the overflow's doing
            # (llama-cpp-python fails inside its stream).
            return await self._async_ask(chat_log, turn, ask)
        turn.calls_run += reply.ran
        turn.unreadable += bool(reply.unreadable)
        turn.after_round(reply)
        if (tokens := (reply.usage or {}).get("prompt_tokens")) is not None:
            turn.context.calibrate(request.chars, tokens)
        self._note_quirks(reply)
        if reply.withheld is not None:
            return await self._async_after_withheld(chat_log, turn, ask, reply)
        if stream and reply.empty:
            if reply.thinking.strip() and reply.finish_reason == "length":
                # Thinking used up `max_tokens`: asking again would too.
                LOGGER.warning(
                    "The model of %s spent all %d tokens thinking; set its "
                    "thinking off or raise its maximum tokens",
                    self.entity_id,
                    turn.options.max_tokens,
                )
                runtime.record_quirk("thinking_used_max_tokens")
            else:
                return await self._async_reask_unstreamed(chat_log, turn, ask)
        return reply

    async def _async_after_withheld(
        self,
        chat_log: conversation.ChatLog,
        turn: Turn,
        ask: Ask,
        reply: CompletionStream,
    ) -> CompletionStream:
        """A reply whose words were not spoken (`turn/honesty.py`): it narrated a
        call, claimed an action no tool did, or restated the agent's
        instruction. Asked once more, saying why; after a second such reply
        the agent says that nothing was done (`_async_answer_if_silent`)."""
        assert reply.withheld is not None
        self.entry.runtime_data.record_quirk(reply.withheld.value)
        if reply.calls:
            return reply  # it called: only its words were not said
        if ask is Ask.CLOSING or turn.retried is not None:
            # No more asking: a narration or a claim means nothing was done.
            turn.nothing_done = reply.withheld in (
                Withheld.NARRATION,
                Withheld.CLAIM,
                Withheld.RESULT,
            )
            return reply
        if (
            reply.withheld in (Withheld.INSTRUCTION, Withheld.NOT_SPEECH)
            and turn.seen_calls
        ):
            return reply  # the results are in: the agent asks for or reads them
        LOGGER.debug("Reply not spoken (%s); asking once more", reply.withheld)
        turn.retried = reply.withheld
        return await self._async_ask(chat_log, turn, Ask.RETRY)

    def _note_quirks(self, reply: CompletionStream) -> None:
        """Count what the agent made up for (diagnostics)."""
        runtime = self.entry.runtime_data
        if reply.over_budget:
            runtime.record_quirk("calls_over_the_limit")
        if reply.unasked:
            runtime.record_quirk("unasked_change")
        if reply.invented_places:
            runtime.record_quirk("invented_place")
        if reply.invented_filters:
            runtime.record_quirk("invented_filter")
        if reply.untrusted:
            runtime.record_quirk("untrusted_id")
        if reply.repaired:
            runtime.record_quirk("near_json_repaired")
        if reply.ran_away:
            runtime.record_quirk("runaway_cut")
        if reply.copied_from_results:
            runtime.record_quirk(
                "call_copied_from_result",
                "A call written in a tool's result was not run",
            )
        if reply.empty and reply.thinking.strip():
            runtime.record_quirk("thinking_only_round")

    async def _async_reask_unstreamed(
        self, chat_log: conversation.ChatLog, turn: Turn, ask: Ask
    ) -> CompletionStream:
        """Ask again without streaming: some servers' tool parsers swallow a
        call (or a thinking model's answer) on the streaming path and send an
        empty reply (guide, sections 5 and 7).
        """
        LOGGER.debug("Streamed reply had no words and no call; asking again")
        return await self._async_ask(chat_log, turn, ask, stream=False)

    def _learn_context(self, turn: Turn, err: ContextOverflowError, chars: int) -> None:
        """The request did not fit the server's context: the next one leaves
        out the history that does not fit (all of it when the server did not
        say its size). Tried once per turn."""
        overflow = err.overflow
        LOGGER.info(
            "The request of %s was longer than the server's context (%s tokens); "
            "sending it again with less history",
            self.entity_id,
            overflow.n_ctx or "size unknown",
        )
        self.entry.runtime_data.record_quirk("context_overflow")
        turn.refitted = True
        if overflow.n_ctx:
            turn.context.learned_n_ctx = overflow.n_ctx
            turn.context.calibrate(chars, overflow.prompt_tokens)
        else:
            turn.drop_history = True

    async def _async_ask_answer(
        self, chat_log: conversation.ChatLog, turn: Turn, rounds: int
    ) -> None:
        """The results are in: ask for the answer from them. Asked so, a
        small model answers; offered any call, it calls other tools. While
        rounds remain, it may still call a tool it used for something else
        the user named (`MoreOf`: "Rome and Paris?" drew one call, for Rome);
        with those results in, or when the reply had no words (offered
        calls, the 0.5B model seldom writes any), the closing request asks
        for the answer."""
        if turn.round + 1 < rounds:
            turn.round += 1
            LOGGER.debug("Asking for the answer, or calls for the rest")
            reply = await self._async_ask(chat_log, turn, Ask.ANSWER)
            if reply.text.strip() and not reply.ran:
                return
        await self._async_ask_closing(chat_log, turn)

    async def _async_ask_closing(
        self, chat_log: conversation.ChatLog, turn: Turn
    ) -> CompletionStream:
        """Ask for the answer from the tool results, with no calls allowed."""
        LOGGER.debug("Asking for the answer from the tool results")
        return await self._async_ask(chat_log, turn, Ask.CLOSING)

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
        turn: Turn,
        language: str | None,
    ) -> None:
        """Never leave the user with silence, nor with a claim: say what
        happened, in words that are the agent's own (marked so in the chat
        log: `messages` never sends them as the model's). An action
        that failed is said as failed, whatever the model wrote."""
        last = chat_log.content[-1]
        said = (
            last.content.strip()
            if isinstance(last, conversation.AssistantContent)
            and last.content
            and not isinstance(last.native, AgentWords)
            else ""
        )
        acts = turn.actions()
        if turn.verdict is not None and not acts.done:
            await self._async_say(chat_log, language, *turn.verdict, None)
            return
        if acts.failed and not (said and says_failed(said)):
            failure = acts.failed[0]
            reason = await async_spoken_message(
                self.hass, language, failure.reason, failure.placeholders
            )
            key = "action_partly_failed" if acts.done else "action_failed"
            await self._async_say(chat_log, language, key, {"reason": reason}, None)
            return
        if said and not turn.nothing_done:
            return
        question = this_turn(chat_log)[0]
        asked_action = asks_for_action(question)
        result = _results_in_words(chat_log, turn.offered.read_only)
        placeholders: dict[str, str] = {}
        ran = turn.calls_run > 0
        if turn.nothing_done:
            # A narration, a claim or a made-up result again, never the
            # call: nothing was done.
            if turn.retried is Withheld.RESULT or not asked_action:
                key = "no_result" if not ran else "could_not_find_out"
            else:
                key = "nothing_done" if not ran else "not_done"
        elif result is not None and not (asked_action and not acts.done):
            # A weak model that ran tools but could not put their results
            # into words (even when its rounds ran out): read the results.
            key, placeholders = result
        elif not turn.unreadable and not any(
            isinstance(content, conversation.ToolResultContent)
            for content in this_turn(chat_log)[1]
        ):
            key = "empty_answer"  # no call was even tried: the model was silent
        elif asked_action:
            # A change was asked for and none ran: never a read-out of
            # other results instead.
            key = "nothing_done" if not ran else "not_done"
        else:
            key = "could_not_find_out"
        # Later requests show the results as the answer, never these words.
        history = placeholders.get("result") if result is not None else None
        await self._async_say(chat_log, language, key, placeholders, history)

    async def _async_say(
        self,
        chat_log: conversation.ChatLog,
        language: str | None,
        key: str,
        placeholders: dict[str, str],
        history: str | None,
    ) -> None:
        """Add the agent's own words to the turn (`messages.AgentWords`)."""
        self.entry.runtime_data.record_quirk("agent_answered")
        text = await async_spoken_message(self.hass, language, key, placeholders)
        chat_log.async_add_assistant_content_without_tools(
            conversation.AssistantContent(
                agent_id=self.entity_id, content=text, native=AgentWords(history)
            )
        )
