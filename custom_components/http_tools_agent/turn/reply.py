"""One completion of the model (streamed or not) -> chat log deltas.

Text goes through the engine's text-call filter, so call markup and thinking
never reach the speaker; structured `tool_calls` deltas are assembled by
index. Calls the agent cannot run (unknown tool, unreadable arguments or
markup) become external calls answered with an `Error: …` result, so the
model reads what went wrong in the standard round trip and can retry.
Calls to run are released when the reply ends, after the turn's call
budget (`call_budget`) and, under the small-model rules, the tool-list
recital rule (one reply may not call every offered tool at once, what a
small model does with "What is 2 plus 2?"). Calls refused so are answered
with an `Error: …` result too.
Afterwards the object tells what the reply held: `text`, `calls`, `empty`,
`finish_reason`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
import json
from typing import Any

from homeassistant.components.conversation import (
    AssistantContentDeltaDict,
    ToolResultContentDeltaDict,
)
from homeassistant.helpers import llm
import openai
from openai.types.chat.completion_create_params import CompletionCreateParamsBase

from ..engine.lookup import guessed_ids
from ..engine.textcalls import FilterOutput, TextCallFilter, ToolNames
from ..server.client import async_complete, async_stream_completion
from ..server.errors import MalformedResponse, llm_error_handler
from ..small.rules import (
    PLAIN,
    UNASKED_ERROR,
    MoreOf,
    Rules,
    asks_for,
    without_invented_filters,
    without_invented_places,
)
from .calls import (
    COPIED_CALL_ERROR,
    DataCalls,
    call_key,
    new_call_id,
    over_budget_error,
    untrusted_id_error,
)
from .honesty import SentenceCheck, SpokenCheck, Withheld, asks_for_action
from .outcomes import CallOutcome, CallResult
from .runaway import RunawayGuard

type Delta = AssistantContentDeltaDict | ToolResultContentDeltaDict

# Name used for call markup that could not be read at all.
UNREADABLE_CALL = "invalid_tool_call"
# A reply that repeats one answered call this often is looping: small models
# (Qwen2.5-0.5B on llama-server) write it until `max_tokens`, 25 s on a CPU.
LOOP_REPEATS = 2


def _object(value: object) -> dict[str, Any]:
    """A JSON object of the server's answer; anything else is malformed."""
    if not isinstance(value, dict):
        raise MalformedResponse
    return value


def _text(value: object) -> str:
    """A text field of the answer (`null` and other types count as none)."""
    return value if isinstance(value, str) else ""


def _reasoning(message: dict[str, Any]) -> str:
    """Reasoning text, from the fields servers use for it."""
    return _text(message.get("reasoning_content")) or _text(message.get("reasoning"))


def _first_choice(answer: dict[str, Any]) -> dict[str, Any] | None:
    """The answer's choice 0 (servers asked for one may still send others)."""
    for choice in answer.get("choices") or ():
        if isinstance(choice, dict) and choice.get("index", 0) in (0, None):
            return choice
    return None


@dataclass(frozen=True, slots=True)
class Lookup:
    """A change refused for an id nobody read, whose collection is read
    first (`Rules.reads_first`): the agent then changes the item the user's
    words name (`entity.py`)."""

    tool: str
    arguments: dict[str, Any]
    key: str  # the argument that holds the id
    lister: str  # the tool that lists the collection


@dataclass(slots=True)
class _PartialCall:
    """A structured tool call being assembled from stream deltas."""

    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass(slots=True)
class CompletionStream:
    """One model reply: asks the server, yields chat log deltas, remembers.

    `run_calls` is False on the closing request (tools offered with
    `tool_choice: none`): calls are still recognised, so their markup stays
    hidden, but they are dropped. `seen_calls` is shared by a turn's rounds:
    a call repeated with the same arguments is not run again. `call_budget`:
    how many more calls the turn may run (None: no limit).
    """

    tool_schemas: Mapping[str, Mapping[str, Any]]
    seen_calls: set[str]
    run_calls: bool = True
    call_budget: int | None = None
    # The turn's limit, for the error text.
    call_limit: int = 0
    # The small-model rules that apply (`small/rules.py`).
    rules: Rules = PLAIN
    # Calls written in tool results: never run (`calls.DataCalls`).
    data_calls: DataCalls | None = None
    # Checks each sentence before it is spoken (`turn/honesty.py`); None: none.
    sentence_check: SentenceCheck | None = None
    # The user's words and the tools that only read (`Rules.unasked_changes`).
    question: str = ""
    read_only: frozenset[str] = frozenset()
    # Calls refused as changes nobody asked for.
    unasked: int = 0
    # The offered tools' names, indexed once for the turn's replies.
    names: ToolNames | None = None
    # The house's area and floor names (`Rules.invented_places`).
    places: frozenset[str] = frozenset()
    # Places left out of intent calls; filters left out of reading calls.
    invented_places: int = 0
    invented_filters: int = 0
    # On the request for the answer: the only calls that run (others are
    # dropped, as on the closing request).
    more_of: MoreOf | None = None
    # Said after a reply cut for running away (`turn/runaway.py`), in the
    # user's language.
    cut_note: str = ""
    # The ids a change may use (`calls.trusted_ids`); None: not checked.
    trusted_ids: frozenset[str] | None = None
    # For a tool that changes an item of a collection, the tool listing it.
    listers: Mapping[str, str] = field(default_factory=dict)
    # Changes refused for an id nobody read, whose collection is read now.
    lookups: list[Lookup] = field(default_factory=list)
    untrusted: int = 0
    text: str = ""
    thinking: str = ""
    # JSON the filter kept from speech (an echo of a result).
    held: str = ""
    calls: int = 0
    # Calls released to run; refused for the budget.
    ran: int = 0
    over_budget: int = 0
    # Calls copied from a tool's result (not run).
    copied_from_results: int = 0
    # The tools of the calls released to run, in order.
    released: list[str] = field(default_factory=list)
    # How often each answered call came back in this reply.
    _repeated: Counter[str] = field(default_factory=Counter)
    # How often each JSON object held from speech (an echoed result or
    # error) came back in this reply.
    _echoes: Counter[str] = field(default_factory=Counter)
    # Calls recognised on the closing request (never run).
    dropped: int = 0
    finish_reason: str | None = None
    # What the server reported evaluating, when it says so.
    usage: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None
    # Calls of this reply read from near-JSON (`engine/textcalls/repair.py`),
    # and why markup that was meant as a call could not be read.
    repaired: int = 0
    unreadable: list[str] = field(default_factory=list)
    # The reply ran off inside a call (longer than any call): read no further.
    ran_off: bool = False
    _filter: TextCallFilter = field(init=False)
    _spoken: SpokenCheck | None = field(init=False, default=None)
    _runaway: RunawayGuard = field(default_factory=RunawayGuard)
    # Calls being assembled, in arrival order; `_slots` maps the server's
    # `index` to the call it is currently filling.
    _partial: dict[int, _PartialCall] = field(default_factory=dict)
    _slots: dict[int, int] = field(default_factory=dict)
    _unrunnable_calls: list[tuple[llm.ToolInput, str, CallOutcome]] = field(
        default_factory=list
    )
    _runnable: list[llm.ToolInput] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Start the text filter for this reply; its names also resolve
        structured calls (HA namespaces merged APIs' tools,
        `http-tools__get_weather`; models drop the prefix)."""
        # A line-start JSON object that is no call is never speech: it
        # echoes a result, or is a model's idea of an answer
        # (`{"id": "1234567890", "qty": 2, …}` for "Add apples and pears").
        self._filter = TextCallFilter(
            self.names or self.tool_schemas, after_tool_results=True
        )
        if self.sentence_check is not None:
            self._spoken = SpokenCheck(self.sentence_check)

    @property
    def withheld(self) -> Withheld | None:
        """Why the reply's words (from some sentence on) were not spoken; a
        reply that was only JSON (an object that is no call is never
        speech) has none to speak."""
        if self._spoken is not None and self._spoken.reason is not None:
            return self._spoken.reason
        if self.text.strip() or self.calls:
            return None
        if self.unreadable:
            return Withheld.UNREADABLE
        if self.held.strip():
            return Withheld.NOT_SPEECH
        return None

    @property
    def ran_away(self) -> bool:
        """Whether the reply was cut for repeating itself or running long."""
        return self._runaway.cut

    @property
    def repeats(self) -> int:
        """Calls in this reply that repeat one answered in the turn."""
        return self._repeated.total()

    @property
    def looping(self) -> bool:
        """Whether the reply keeps repeating a call that was answered, or,
        asked for the answer, writes calls instead (none of them runs; Qwen2.5-
        0.5B listed twenty cities so for 30 s before falling silent, and
        recites the other tools after the one call it may make: on the
        request for the answer the first call that may not run ends it)."""
        if self.more_of is not None and self.dropped:
            return not self.text.strip()
        if not self.run_calls and self.dropped >= LOOP_REPEATS:
            return not self.text.strip()
        if any(count >= LOOP_REPEATS for count in self._echoes.values()):
            # Writing a result or an error back again and again: Qwen2.5-0.5B
            # wrote an intent's error JSON until `max_tokens`, 60 s on a CPU.
            return True
        return any(count >= LOOP_REPEATS for count in self._repeated.values())

    @property
    def empty(self) -> bool:
        """Return whether the reply held no words and no call.

        Thinking alone counts as empty: a thinking model behind a server
        whose parser does not match loses its answer or call on the
        streaming path (guide, section 7). An echoed result, a repeated call
        or a call on the closing request is something: the server did not
        swallow the reply, so asking again would not help.
        """
        return (
            not self.text.strip()
            and not self.held.strip()
            and not self.calls
            and not self.repeats
            and not self.dropped
            and self.withheld is None
        )

    async def async_run(
        self,
        client: openai.AsyncOpenAI,
        params: CompletionCreateParamsBase,
        *,
        stream: bool,
        extra_body: Mapping[str, Any] | None = None,
    ) -> AsyncGenerator[Delta]:
        """Ask the model once and yield what it says as chat log deltas."""
        yield {"role": "assistant"}
        with llm_error_handler():
            if stream:
                async with aclosing(
                    async_stream_completion(client, params, extra_body)
                ) as chunks:
                    async for chunk in chunks:
                        for delta in self._chunk(_object(chunk)):
                            yield delta
                        if self.looping or self.ran_away or self.ran_off:
                            # Stop reading: the server stops writing.
                            break
            else:
                for delta in self._completion(
                    _object(await async_complete(client, params, extra_body))
                ):
                    yield delta
            for delta in self._finish():
                yield delta
        for delta in self._release_calls():
            yield delta
        for delta in self._unrunnable_deltas():
            yield delta

    def _chunk(self, chunk: dict[str, Any]) -> list[Delta]:
        self._note_counts(chunk)
        if (choice := _first_choice(chunk)) is None:
            return []
        deltas: list[Delta] = []
        if isinstance(delta := choice.get("delta"), dict):
            deltas.extend(self._said(_reasoning(delta), _text(delta.get("content"))))
            for tool_call in delta.get("tool_calls") or ():
                if isinstance(tool_call, dict):
                    self._add_partial(tool_call)
        if finish_reason := _text(choice.get("finish_reason")):
            self.finish_reason = finish_reason
            # Some servers flush calls with `stop` or `length`: take them
            # whatever the reason.
            deltas.extend(self._flush_partials())
        return deltas

    def _completion(self, completion: dict[str, Any]) -> list[Delta]:
        self._note_counts(completion)
        if (choice := _first_choice(completion)) is None:
            return []
        self.finish_reason = _text(choice.get("finish_reason")) or None
        message = choice.get("message")
        if not isinstance(message, dict):
            return []
        deltas = self._said(_reasoning(message), _text(message.get("content")))
        for tool_call in message.get("tool_calls") or ():
            if isinstance(tool_call, dict) and isinstance(
                function := tool_call.get("function"), dict
            ):
                self._partial[len(self._partial)] = _PartialCall(
                    _text(tool_call.get("id")),
                    _text(function.get("name")),
                    _text(function.get("arguments")),
                )
        deltas.extend(self._flush_partials())
        return deltas

    def _note_counts(self, answer: dict[str, Any]) -> None:
        """Keep what the server says it evaluated (`usage`; llama.cpp's `timings`)."""
        if isinstance(usage := answer.get("usage"), dict):
            self.usage = usage
        if isinstance(timings := answer.get("timings"), dict):
            self.timings = timings

    def _said(self, reasoning: str, content: str) -> list[Delta]:
        deltas: list[Delta] = []
        if reasoning:
            self.thinking += reasoning
            deltas.append({"thinking_content": reasoning})
        if content:
            deltas.extend(self._filtered(self._filter.feed(content)))
        return deltas

    def _finish(self) -> list[Delta]:
        """End of the reply: flush held text and unfinished calls."""
        deltas = self._filtered(self._filter.finish())
        rest = self._spoken.finish() if self._spoken is not None else ""
        rest = self._runaway.feed(rest) + self._runaway.finish()
        if self._runaway.cut and self.cut_note:
            before = self.text + rest
            gap = "" if not before or before[-1].isspace() else " "
            rest = f"{rest}{gap}{self.cut_note}"
        if rest:
            self.text += rest
            deltas.append({"content": rest})
        deltas.extend(self._flush_partials())
        return deltas

    def _unrunnable_deltas(self) -> list[Delta]:
        """Return the calls that could not run, then their `Error: …` results.

        They are external calls of the assistant message, answered right
        after it, so the model reads what went wrong and can retry. A reply
        that only repeated earlier calls drops them: a reply cut off while
        repeating a call is no new attempt.
        """
        pending, self._unrunnable_calls = self._unrunnable_calls, []
        if not pending or (self.repeats and self.calls == len(pending)):
            self.calls -= len(pending)
            return []
        deltas: list[Delta] = [{"tool_calls": [call for call, _, _ in pending]}]
        deltas.extend(
            ToolResultContentDeltaDict(
                role="tool_result",
                tool_call_id=call.id,
                tool_name=call.tool_name,
                result=CallResult.not_run(error, outcome),
            )
            for call, error, outcome in pending
        )
        return deltas

    def _filtered(self, out: FilterOutput) -> list[Delta]:
        deltas: list[Delta] = []
        if out.thinking:
            self.thinking += out.thinking
            self.held += out.held
            self._echoes.update(
                line.strip(" ,[]")
                for line in out.held.splitlines()
                if line.strip(" ,[]")
            )
            deltas.append({"thinking_content": out.thinking})
        self.repaired += out.repaired
        self.ran_off = self.ran_off or out.stopped
        spoken = out.text
        if spoken and self._spoken is not None:
            spoken = self._spoken.feed(spoken)
        if spoken:
            spoken = self._runaway.feed(spoken)
        if spoken:
            self.text += spoken
            deltas.append({"content": spoken})
        for call in out.calls:
            deltas.extend(self._call(call.name, dict(call.arguments), ""))
        for problem in out.problems:
            # Markup that could not be read: no call in the chat log (a small
            # model copies the calls it sees there); the turn asks again
            # (`Withheld.UNREADABLE`).
            if not self.run_calls or self.more_of is not None:
                self.dropped += 1
            else:
                self.unreadable.append(problem)
        return deltas

    def _add_partial(self, tool_call: dict[str, Any]) -> None:
        index = tool_call.get("index")
        index = index if isinstance(index, int) else 0
        call_id = _text(tool_call.get("id"))
        slot = self._slots.get(index)
        partial = self._partial.get(slot) if slot is not None else None
        if partial is None or (
            # Some servers (Ollama) send every call whole with index 0: a new
            # id on a call that already has a name starts the next call.
            call_id and partial.id and partial.name and call_id != partial.id
        ):
            slot = len(self._partial)
            self._slots[index] = slot
            partial = self._partial[slot] = _PartialCall()
        if call_id:
            partial.id = call_id
        if isinstance(function := tool_call.get("function"), dict):
            partial.name += _text(function.get("name"))
            partial.arguments += _text(function.get("arguments"))

    def _flush_partials(self) -> list[Delta]:
        deltas: list[Delta] = []
        for index in sorted(self._partial):
            partial = self._partial[index]
            name = partial.name
            try:
                arguments = json.loads(partial.arguments) if partial.arguments else {}
            except (json.JSONDecodeError, RecursionError) as err:
                reason = err.msg if isinstance(err, json.JSONDecodeError) else str(err)
                error = f"Error: invalid JSON arguments for tool '{name}': {reason}"
                deltas.extend(
                    self._unrunnable(name or UNREADABLE_CALL, {}, error, partial.id)
                )
                continue
            if not isinstance(arguments, dict):
                error = f"Error: arguments for tool '{name}' must be a JSON object"
                deltas.extend(self._unrunnable(name, {}, error, partial.id))
                continue
            deltas.extend(self._call(name, arguments, partial.id))
        self._partial.clear()
        self._slots.clear()
        return deltas

    def _release_calls(self) -> list[Delta]:
        """The reply is complete: run its calls within the rules."""
        runnable, self._runnable = self._runnable, []
        if self.rules.unasked_changes:
            runnable = self._without_unasked_changes(runnable)
        if self.trusted_ids is not None:
            runnable = self._without_untrusted_ids(runnable)
        if self.call_budget is not None and len(runnable) > self.call_budget:
            for call in runnable[self.call_budget :]:
                self._refuse(call, over_budget_error(self.call_limit))
            self.over_budget = len(runnable) - self.call_budget
            runnable = runnable[: self.call_budget]
        self.ran = len(runnable)
        self.released = [call.tool_name for call in runnable]
        return [{"tool_calls": runnable}] if runnable else []

    def _without_unasked_changes(
        self, runnable: list[llm.ToolInput]
    ) -> list[llm.ToolInput]:
        """The reply's calls without those that change something nobody asked
        for: the 0.5B model answered "What is 2 plus 2?" with a call to every
        tool."""
        # A question asks for no change at all: "Is the bed light on?" drew
        # HassTurnOn ("on" is a word of turning on).
        acting = asks_for_action(self.question)
        asked = {
            c.tool_name
            for c in runnable
            if acting and asks_for(c.tool_name, self.question)
        }
        kept = []
        for call in runnable:
            if call.tool_name in asked or call.tool_name in self.read_only:
                kept.append(call)
            else:
                self._refuse(call, UNASKED_ERROR)
                self.unasked += 1
        return kept

    def _without_untrusted_ids(
        self, runnable: list[llm.ToolInput]
    ) -> list[llm.ToolInput]:
        """The reply's calls without changes whose opaque id was read from
        no result and said by no one; under `Rules.reads_first` the
        collection is read instead, once."""
        assert self.trusted_ids is not None
        kept: list[llm.ToolInput] = []
        reads: list[llm.ToolInput] = []
        for call in runnable:
            unknown = guessed_ids(call.tool_args, self.trusted_ids, self.question)
            if call.tool_name in self.read_only or not unknown:
                kept.append(call)
                continue
            key, value = next(iter(unknown.items()))
            lister = self.listers.get(call.tool_name)
            self._refuse(call, untrusted_id_error(value, lister))
            self.untrusted += 1
            if lister is None or not self.rules.reads_first:
                continue
            self.lookups.append(
                Lookup(call.tool_name, dict(call.tool_args), key, lister)
            )
            read = call_key(lister, {})
            if read not in self.seen_calls and not any(
                r.tool_name == lister for r in (*kept, *reads)
            ):
                self.seen_calls.add(read)
                reads.append(
                    llm.ToolInput(tool_name=lister, tool_args={}, id=new_call_id())
                )
        return kept + reads

    def _refuse(self, call: llm.ToolInput, error: str) -> None:
        """A call that will not run: answered with `error` (not a repeat)."""
        self.seen_calls.discard(call_key(call.tool_name, call.tool_args))
        external = llm.ToolInput(
            tool_name=call.tool_name,
            tool_args=call.tool_args,
            id=call.id,
            external=True,
        )
        self._unrunnable_calls.append((external, error, CallOutcome.REFUSED))

    def _call(self, name: str, arguments: dict[str, Any], call_id: str) -> list[Delta]:
        if not self.run_calls:
            self.dropped += 1
            return []
        resolved = self._filter.names.resolve(name)
        if resolved is None:
            error = f"Error: unknown tool '{name}'"
            return self._unrunnable(name or UNREADABLE_CALL, arguments, error, call_id)
        if self.rules.invented_places:
            kept = without_invented_places(
                resolved, arguments, self.places, self.question
            )
            self.invented_places += len(arguments) - len(kept)
            arguments = kept
        if self.rules.invented_filters and resolved in self.read_only:
            kept = without_invented_filters(
                arguments, self.tool_schemas.get(resolved, {}), self.question
            )
            self.invented_filters += len(arguments) - len(kept)
            arguments = kept
        key = call_key(resolved, arguments)
        if key in self.seen_calls:
            # Small models often repeat a call after its result: running it
            # again only loops, so the turn moves on to the answer.
            self._repeated[key] += 1
            return []
        if self.more_of is not None and not self.more_of.allows(resolved, arguments):
            self.dropped += 1
            return []
        if self.data_calls is not None and self.data_calls.copied(resolved, arguments):
            self.copied_from_results += 1
            return self._unrunnable(
                resolved, arguments, COPIED_CALL_ERROR, call_id, CallOutcome.REFUSED
            )
        self.seen_calls.add(key)
        self.calls += 1
        self._runnable.append(
            llm.ToolInput(
                tool_name=resolved, tool_args=arguments, id=call_id or new_call_id()
            )
        )
        return []

    def _unrunnable(
        self,
        name: str,
        arguments: dict[str, Any],
        error: str,
        call_id: str = "",
        outcome: CallOutcome = CallOutcome.NOT_A_CALL,
    ) -> list[Delta]:
        if not self.run_calls or self.more_of is not None:
            self.dropped += 1
            return []
        self.calls += 1
        tool_input = llm.ToolInput(
            tool_name=name,
            tool_args=arguments,
            id=call_id or new_call_id(),
            external=True,
        )
        self._unrunnable_calls.append((tool_input, error, outcome))
        return []
