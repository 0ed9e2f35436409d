"""The tool loop of one turn, over Home Assistant's ChatLog.

Each round asks the model once; the chat log runs the calls of its reply
and the next request carries their results, until a reply makes no call
(the answer) or `max_tool_iterations` rounds ran. Every request of the turn
is sent by `_async_ask`, and counts against one budget (`RequestBudget`):
the rounds, the request for the answer, the closing request and the
requests asked again. What keeps a turn from ending in silence, each asked
at most once: a streamed reply that came back with no words and no call is
asked again without streaming (some servers' tool parsers swallow a call
on the streaming path); a request longer than the server's context is sent
again without the older history; a reply whose words were not spoken
(`turn/honesty.py`) or whose call could not be read is asked again, saying
why. Tools that ran but got no answer lead to one closing request for it;
when even that stays silent, the agent says what happened
(`turn/say.py`). The small profile's request for the answer and its
lookups come from `small/` through the turn's rules.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from homeassistant.components import conversation
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm

from ..const import LOGGER
from ..engine.lookup import named_items
from ..server.client import Request
from ..server.errors import ContextOverflowError
from ..small.answer import may_ask_more
from ..small.guards import asks_for
from ..tools.call_result import CallResult
from .asking import async_ask_to_confirm
from .calls import new_call_id
from .honesty import Withheld, asks_for_action
from .intent_speech import async_intent_speech
from .messages import tool_result_text
from .outcomes import succeeded
from .read_out import read_out_whole
from .reply import Delta, Reply
from .request import Ask
from .say import Said, agent_words, async_words, read_out, what_happened
from .spoken_text import spoken
from .tool_search import FIND_TOOLS

if TYPE_CHECKING:
    from ..runtime import HttpToolsRuntime
    from .state import Turn

# Requests a turn may send besides its rounds: the request for the answer,
# the closing request, and two requests asked again (a reply not spoken, a
# streamed reply that came back empty, a request longer than the context).
EXTRA_REQUESTS = 4


@dataclass(slots=True)
class RequestBudget:
    """How many requests a turn may still send."""

    left: int

    def take(self) -> bool:
        """Spend one; False when none is left."""
        if self.left <= 0:
            return False
        self.left -= 1
        return True


def _last_round(turn: Turn) -> list[conversation.ToolResultContent]:
    """The tool results of this turn's last round that had calls, in order."""
    found: list[conversation.ToolResultContent] = []
    for content in reversed(turn.since_question):
        if isinstance(content, conversation.ToolResultContent):
            found.append(content)
        elif found:
            break
    return found[::-1]


def _latest_result(turn: Turn, tool: str) -> str | None:
    """The text of this turn's latest successful result of `tool`."""
    for content in reversed(turn.since_question):
        if (
            isinstance(content, conversation.ToolResultContent)
            and content.tool_name == tool
            and succeeded(content)
        ):
            return tool_result_text(content.result)
    return None


# What a turn's replies made the agent make up for, counted in the entry's
# diagnostics (`HttpToolsRuntime.record_quirk`).


def note_required_answered(runtime: HttpToolsRuntime, turn: Turn, reply: Reply) -> None:
    """The server does not enforce `required` (llama-cpp-python, small
    models): the words are the answer, not a reason to loop."""
    if turn.options.tool_choice == "required" and reply.text.strip():
        runtime.record_quirk(
            "required_answered_in_words",
            "The model answered in words although tool_choice is "
            "required (the server does not enforce it)",
        )


def note_quirks(runtime: HttpToolsRuntime, reply: Reply) -> None:
    """Count what the agent made up for in `reply`."""
    counts = reply.gate.counts
    for quirk, count in (
        ("calls_over_the_limit", counts["over_budget"]),
        ("unasked_change", counts["unasked"]),
        ("invented_place", counts["invented_places"]),
        ("invented_filter", counts["invented_filters"]),
        ("untrusted_id", counts["untrusted"]),
        ("near_json_repaired", reply.repaired),
        ("runaway_cut", reply.ran_away),
        ("thinking_only_round", reply.empty and bool(reply.thinking.strip())),
    ):
        if count:
            runtime.record_quirk(quirk)
    if counts["copied"]:
        runtime.record_quirk(
            "call_copied_from_result",
            "A call written in a tool's result was not run",
        )


async def _agent_calls(calls: list[llm.ToolInput]) -> AsyncGenerator[Delta]:
    """Calls the agent makes itself, as an assistant message without words."""
    yield {"role": "assistant"}
    yield {"tool_calls": calls}


class TurnLoop:
    """One turn of an agent: its rounds, its requests, its last words."""

    def __init__(
        self,
        hass: HomeAssistant,
        runtime: HttpToolsRuntime,
        turn: Turn,
        agent_id: str,
    ) -> None:
        """Run `turn` for the agent `agent_id` on the entry's server."""
        self.hass = hass
        self.runtime = runtime
        self.turn = turn
        self.agent_id = agent_id
        self.rounds = runtime.settings.max_tool_iterations
        self.budget = RequestBudget(self.rounds + EXTRA_REQUESTS)

    async def async_run(self) -> None:
        """Ask, run the reply's calls, send their results back, until the
        model answers or the rounds run out; then, if needed, say what
        happened."""
        if await self._async_rounds():
            return
        await self._async_end()

    async def async_run_confirmed(self, call: llm.ToolInput) -> None:
        """The user said yes to a held call: run exactly it, once, through
        the chat log (no model round writes it again; the gate keeps it from
        running twice), then go on as after any round with calls: the model
        answers from its result (or calls on), else the agent says what
        happened."""
        turn = self.turn
        turn.gate.mark_run(call)
        LOGGER.debug("Running the confirmed call %s", call.tool_name)
        await self._async_add(
            _agent_calls([llm.ToolInput(call.tool_name, call.tool_args, new_call_id())])
        )
        if turn.rules.own_answer and await self._async_answer_own():
            return
        if turn.rules.answer_request and not self._round_failed():
            if await self._async_ask_answer():
                return
        else:
            turn.next_round()
            if await self._async_rounds():
                return
        await self._async_end()

    async def _async_rounds(self) -> bool:
        """The rounds, until an answer, a held call, or the last round; True
        when the tools' own sentences answered (nothing more to say)."""
        turn = self.turn
        while turn.round < self.rounds:
            reply = await self._async_ask(Ask.ROUND)
            if reply is None:
                break
            if turn.gate.held is not None:
                break  # the agent asks before it acts
            if reply.lookups:
                await self._async_look_up(reply)
                if turn.verdict is not None or turn.gate.held is not None:
                    break
            if not reply.calls:
                note_required_answered(self.runtime, self.turn, reply)
                if turn.gate.seen and not reply.text.strip():
                    # Tools ran, but this reply only repeated a call or echoed
                    # a result: the results are in, so ask for the answer.
                    await self._async_ask(Ask.CLOSING)
                break
            if reply.released and all(
                call.tool_name == FIND_TOOLS for call in reply.released
            ):
                # A search found tools: the next round offers them to call.
                turn.next_round()
                continue
            if (
                turn.rules.own_answer
                and not turn.data  # an AI task's answer is the model's data
                and await self._async_answer_own()
            ):
                return True
            if turn.rules.answer_request and not self._round_failed():
                # Small models: the results are in, ask for the answer
                # (`small/answer.py`). A failed call gets another round, so
                # the model can retry.
                if await self._async_ask_answer():
                    return True
                break
            turn.next_round()
        else:
            # Calls kept coming until the rounds ran out.
            await self._async_ask(Ask.CLOSING)
        return False

    async def _async_end(self) -> None:
        """The agent's question about a held call, or its own words when the
        model's are no answer."""
        turn = self.turn
        if turn.gate.held is not None:
            await async_ask_to_confirm(
                self.hass, self.runtime, turn, self.agent_id, turn.gate.held
            )
            return
        await self._async_know_intents()
        if (said := what_happened(turn)) is not None:
            await self._async_say(said)

    async def _async_know_intents(self) -> None:
        """Once an Assist intent's result is in, the sentences Home
        Assistant's agent says of intents, in the turn's language."""
        turn = self.turn
        if turn.intent_speech is None and any(
            isinstance(content, conversation.ToolResultContent)
            and isinstance(content.result.data, llm.IntentResponseDict)
            for content in turn.since_question
        ):
            language = turn.language or self.hass.config.language
            turn.intent_speech = await async_intent_speech(self.hass, language)

    async def _async_own_speech(self) -> str | None:
        """The sentences of the last round's calls, when every call
        succeeded and each has one: its tool's, or Home Assistant's for an
        intent (None: the model answers)."""
        await self._async_know_intents()
        sentences: list[str] = []
        for content in _last_round(self.turn):
            if (sentence := self.turn.own_speech(content)) is None:
                return None
            if sentence not in sentences:
                sentences.append(sentence)
        if len(sentences) > 1:
            # Home Assistant's sentences end without a stop ("Turned on the
            # lights"): one is said as it is, several each with its own.
            sentences = [s if s[-1] in ".!?…" else f"{s}." for s in sentences]
        return " ".join(sentences) or None

    async def _async_answer_own(self, *, answered: bool = False) -> bool:
        """Answer the last round with the agent's own words when they are
        the answer (`Rules.own_answer`): the calls' own sentences, or the
        read-out of what the request asked for, the change it asked for or,
        asked for none, the reads. `answered`: the request for the answer
        ran its calls, so the closing request could only put the turn's
        results into words. False: the model is asked."""
        if (own := await self._async_own_speech()) is not None:
            # The tools said it themselves.
            await self._async_say_own(own)
            return True
        turn = self.turn
        results = (
            [
                c
                for c in turn.since_question
                if isinstance(c, conversation.ToolResultContent)
            ]
            if answered
            else _last_round(turn)
        )
        question = turn.question
        changes = [c for c in results if c.tool_name not in turn.offered.read_only]
        if (
            not turn.rules.answer_request  # the model may call on from results
            or not results
            or not all(succeeded(c) for c in results)
            # Asked to act, a change asked for ran (the reads beside it led
            # to it and are not said); asked for nothing, only reads ran.
            or bool(changes) != asks_for_action(question)
            or not all(asks_for(c.tool_name, question) for c in changes)
            or not all(self._read_out_alone(c) for c in changes or results)
            or (not answered and may_ask_more(question, (c.tool_name for c in results)))
            or (said := read_out(turn)) is None
        ):
            return False
        LOGGER.debug("Reading out what the request asked for")
        await self._async_say(said, "answered_by_read_out")
        return True

    def _read_out_alone(self, content: conversation.ToolResultContent) -> bool:
        """Whether the agent's read-out of a result is all an answer could
        say: every value of it said, no call in it (its markup would be
        heard), no picture (for the model to see)."""
        result = content.result
        return (
            not (isinstance(result, CallResult) and result.picture is not None)
            and read_out_whole(content)
            and not self.turn.data_calls.written_in(tool_result_text(result))
        )

    async def _async_say_own(self, text: str) -> None:
        """The tools' own sentences as the turn's answer (later requests
        carry them as the agent's words)."""
        self.runtime.record_quirk("answered_by_tool_speech")
        if not self.turn.data:
            text = spoken(text)  # a service's emoji or URLs are not said
        self.turn.chat_log.async_add_assistant_content_without_tools(
            agent_words(self.agent_id, text, text)
        )

    def _round_failed(self) -> bool:
        """Whether a call of the last round got an error (the model may retry)."""
        return any(not succeeded(content) for content in _last_round(self.turn))

    async def _async_ask_answer(self) -> bool:
        """The results are in: ask for the answer from them. Asked so, a
        small model answers; offered any call, it calls other tools. While
        rounds remain, it may still call a tool it used for something else
        the user named (`MoreOf`: "Rome and Paris?" drew one call, for Rome);
        with those results in, or when the reply had no words (offered
        calls, the 0.5B model seldom writes any), the closing request asks
        for the answer, unless the agent's read-out of them is the answer
        (True: the agent answered)."""
        turn = self.turn
        if turn.round + 1 < self.rounds:
            turn.next_round()
            LOGGER.debug("Asking for the answer, or calls for the rest")
            reply = await self._async_ask(Ask.ANSWER)
            if (
                reply is None
                or turn.gate.held is not None
                or (reply.text.strip() and not reply.ran)
            ):
                return False
            if (
                reply.ran
                and turn.rules.own_answer
                and not turn.data
                and await self._async_answer_own(answered=True)
            ):
                return True
        await self._async_ask(Ask.CLOSING)
        return False

    async def _async_ask(self, ask: Ask) -> Reply | None:
        """Send one request (and the requests asked again for it), each one
        counted; the chat log runs the calls of the reply. None: the turn's
        budget is spent."""
        turn = self.turn
        stream = turn.options.stream
        while self.budget.take():
            reply = turn.reply(ask)
            request = turn.request(ask)
            try:
                await self._async_send(reply, request, stream=stream)
            except ContextOverflowError as err:
                if not turn.refitted:
                    self._learn_context(err, request.chars)
                elif not turn.trim():
                    # Fitted and cut, it still does not fit: the agent says
                    # so, never the server's error.
                    LOGGER.info(
                        "The request of %s does not fit the server's context "
                        "even with its history left out and its results cut",
                        self.agent_id,
                    )
                    turn.end("context_too_long")
                    return None
                # Streamed again, as the agent streams: an empty stream was
                # the overflow's doing (llama-cpp-python fails inside it).
                stream = turn.options.stream
                continue
            turn.after_reply(reply)
            tokens = (reply.usage or {}).get("prompt_tokens")
            if tokens is not None and not request.images:
                turn.context.calibrate(request.chars, tokens)
            note_quirks(self.runtime, reply)
            if reply.withheld is not None:
                again = self._after_withheld(ask, reply)
                if again is None:
                    return reply
                ask = again
                continue
            if stream and reply.empty:
                if reply.thinking.strip() and reply.finish_reason == "length":
                    # Thinking used up `max_tokens`: asking again would too.
                    LOGGER.warning(
                        "The model of %s spent all %d tokens thinking; set its "
                        "thinking off or raise its maximum tokens",
                        self.agent_id,
                        turn.options.max_tokens,
                    )
                    self.runtime.record_quirk("thinking_used_max_tokens")
                    return reply
                # Some servers' tool parsers swallow a call (or a thinking
                # model's answer) on the streaming path: ask without it.
                LOGGER.debug("Streamed reply had no words and no call; asking again")
                stream = False
                continue
            return reply
        LOGGER.debug("%s: the turn's requests are spent", self.agent_id)
        return None

    async def _async_send(
        self, reply: Reply, request: Request, *, stream: bool
    ) -> None:
        """One request; the reply streams into the chat log."""
        async with self.runtime.turns.request():
            await self._async_add(
                reply.async_run(
                    self.runtime.client,
                    request.params,
                    stream=stream,
                    extra_body=request.extra_body,
                )
            )

    async def _async_add(self, deltas: AsyncGenerator[Delta]) -> None:
        """Stream content into the chat log (which runs its calls)."""
        async for _content in self.turn.chat_log.async_add_delta_content_stream(
            self.agent_id, deltas
        ):
            pass

    def _after_withheld(self, ask: Ask, reply: Reply) -> Ask | None:
        """A reply whose words were not spoken (`turn/honesty.py`): it
        narrated a call, claimed an action no tool did, restated the agent's
        instruction, or wrote a call that could not be read. Asked once
        more, saying why (the next request to send, or None); after a second
        such reply the agent says that nothing was done."""
        turn = self.turn
        assert reply.withheld is not None
        self.runtime.record_quirk(reply.withheld.value)
        if reply.calls:
            return None  # it called: only its words were not said
        if ask is Ask.CLOSING or turn.retried is not None:
            turn.settle(reply.withheld)  # no more asking
            return None
        if (
            reply.withheld in (Withheld.INSTRUCTION, Withheld.NOT_SPEECH)
            and turn.gate.seen
        ):
            return None  # the results are in: the agent asks for or reads them
        LOGGER.debug("Reply not spoken (%s); asking once more", reply.withheld)
        turn.retry(reply.withheld)
        return Ask.RETRY

    def _learn_context(self, err: ContextOverflowError, chars: int) -> None:
        """The request did not fit the server's context (tried once a turn)."""
        overflow = err.overflow
        LOGGER.info(
            "The request of %s was longer than the server's context (%s tokens); "
            "sending it again with less history",
            self.agent_id,
            overflow.n_ctx or "size unknown",
        )
        self.runtime.record_quirk("context_overflow")
        self.turn.learn_context(overflow, chars)

    async def _async_look_up(self, reply: Reply) -> None:
        """Changes refused for an id nobody read: their collection was read
        (`Rules.reads_first`); the agent makes the change itself on the one
        item the user's words name, or says that none, or several, do."""
        turn = self.turn
        calls: list[llm.ToolInput] = []
        for lookup in reply.lookups:
            text = _latest_result(turn, lookup.lister)
            if text is None:
                continue  # the read failed: the model reads why
            found = named_items(text, lookup.key, turn.question)
            if len(found) == 1:
                arguments = {**lookup.arguments, lookup.key: found[0][0]}
                calls.append(
                    llm.ToolInput(
                        tool_name=lookup.tool, tool_args=arguments, id=new_call_id()
                    )
                )
            elif found:
                turn.end("which_one", {"names": " / ".join(n for _, n in found)})
            else:
                turn.end("no_match")
        if not calls:
            return
        turn.go_on()
        if waiting := [c for c in calls if c.tool_name in turn.offered.confirm]:
            # The change the user's words name waits for their yes too.
            turn.gate.held = waiting[0]
            return
        for call in calls:
            turn.gate.mark_run(call)
        LOGGER.debug("Changing the items the request names: %s", calls)
        await self._async_add(_agent_calls(calls))

    async def _async_say(self, said: Said, quirk: str = "agent_answered") -> None:
        """Add the agent's own words to the turn (counted as `quirk`)."""
        self.runtime.record_quirk(quirk)
        text = await async_words(self.hass, self.turn.language, said)
        if not self.turn.data:
            text = spoken(text)  # a read-out may hold a result's URLs
        self.turn.chat_log.async_add_assistant_content_without_tools(
            agent_words(self.agent_id, text, said.history)
        )
