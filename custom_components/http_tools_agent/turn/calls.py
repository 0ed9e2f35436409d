"""The call gate: every call of a turn passes it once, in one order.

As a reply streams in, each call it makes (`CallGate.reply` gives the
reply its `ReplyCalls`) goes through, in this order:

1. **resolve**: the name written to an offered tool (`engine.textcalls`
   `ToolNames`); none: not a call (`Error: unknown tool '…'`);
2. **the small profile's argument guards** (`small/guards.py`): a place the
   house does not have, a reading call's filter nobody asked for, left out;
3. **repeat**: a call identical to one answered in this turn does not run
   again until a call that changes something ran (small models repeat a
   call after its result); it is dropped, not answered;
4. **what the request may run**: on the closing request nothing, on the
   request for the answer only more of a tool the turn used
   (`small/answer.py` `MoreOf`); the others are dropped;
5. **copied from a result**: a call written in a tool's result is data,
   never a request (`data_calls.DataCalls`), refused.

When the reply ends, the calls to run are released (`ReplyCalls.release`),
again in order: the small profile's **unasked changes** (a change nobody
asked for, and any change for a question), **ids nothing vouches for** (an
id of a change no result showed and no one said, `engine.lookup`), the
calls that **wait for the user's yes** (`engine/confirm.py`: the first is
held, `turn/hold.py`, any other refused), then the turn's **budget** (at
most `max_calls_per_turn` calls). A guard refuses
before the budget, so a refused call costs no place. A refused call is
answered with an `Error: …` result the model reads, carrying its
`CallOutcome`; a dropped one gets nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
import json
import secrets
import string
from typing import Any

from homeassistant.components import conversation
from homeassistant.helpers import llm

from ..engine.arguments import check_arguments, compile_validator, unwrap_schema_form
from ..engine.confirm import Confirmation
from ..engine.lookup import guessed_ids, ids_in_text
from ..engine.textcalls import ToolNames
from ..small.answer import MoreOf
from ..small.guards import (
    UNASKED_ERROR,
    asks_for,
    without_invented_filters,
    without_invented_places,
)
from ..small.rules import PLAIN, Rules
from ..tools.call_result import RESULT_KEY, CallOutcome
from .data_calls import COPIED_CALL_ERROR, DataCalls
from .honesty import asks_for_action, is_question

_ID_CHARS = string.ascii_letters + string.digits

# What the model reads of a call the gate does not run: each says it did
# not run and what to do instead, so the model can go on.


def over_budget_error(limit: int) -> str:
    """What the model reads for a call over the turn's limit."""
    return (
        f"Error: not run: this turn already made {limit} tool calls, the limit. "
        "Answer with the results you have."
    )


# What the model reads of a held call: it did not run, the agent asks.
HELD_TEXT = (
    "Not run yet: the user is asked to confirm this call; it runs after their yes."
)
NO_ONE_TO_ASK_ERROR = (
    "Error: not run: this call needs the user's confirmation, and no one "
    "can be asked here. Say that it needs a yes through the conversation agent."
)
ONE_HELD_ERROR = (
    "Error: not run: another call already waits for the user's confirmation."
)


def untrusted_id_error(value: str, lister: str | None) -> str:
    """What the model reads for a change whose id it read nowhere."""
    then = (
        f"Call {lister} to find the item's id, then use it."
        if lister
        else "Use an id a tool's result gave."
    )
    return f"Error: not run: the id '{value}' was not read from any result. {then}"


def new_call_id() -> str:
    """An id for a call the server sent without one (text calls).

    Nine letters and digits: Mistral's chat templates refuse any other id.
    """
    return "".join(secrets.choice(_ID_CHARS) for _ in range(9))


def call_key(name: str, arguments: Mapping[str, Any]) -> str:
    """Identify a call by tool and arguments (to spot a repeated call)."""
    try:
        return name + json.dumps(arguments, sort_keys=True, default=str)
    except ValueError, RecursionError:
        return f"{name}#{id(arguments)}"  # pathological arguments: never equal


def trusted_ids(contents: Sequence[conversation.Content]) -> frozenset[str]:
    """The ids a change may use: those a tool's result in this conversation
    showed, and those the user said (`engine.lookup`)."""
    found: set[str] = set()
    for content in contents:
        if isinstance(content, conversation.ToolResultContent):
            text = content.result.data.get(RESULT_KEY)
            found |= ids_in_text(
                text
                if isinstance(text, str)
                else json.dumps(content.result.data, default=str)
            )
        elif isinstance(content, conversation.UserContent):
            found |= ids_in_text(content.content)
    return frozenset(found)


class Asked(Enum):
    """What a request lets its reply's calls do."""

    RUN = "run"  # a round: every call may run
    ANSWER = "answer"  # the request for the answer: only `MoreOf` calls
    NONE = "none"  # the closing request: recognised, never run


@dataclass(frozen=True, slots=True)
class Refusal:
    """A call answered without running it: what the model reads, and what
    became of it."""

    call: llm.ToolInput
    error: str
    outcome: CallOutcome


@dataclass(frozen=True, slots=True)
class Lookup:
    """A change refused for an id nobody read, whose collection is read
    first (`Rules.reads_first`): the agent then changes the item the user's
    words name (`turn/loop.py`)."""

    tool: str
    arguments: dict[str, Any]
    key: str  # the argument that holds the id
    lister: str  # the tool that lists the collection


@dataclass(slots=True)
class CallGate:
    """The gate of one turn: what it offered, what ran, what is answered."""

    names: ToolNames
    schemas: Mapping[str, Mapping[str, Any]]
    read_only: frozenset[str]
    question: str
    limit: int
    rules: Rules = PLAIN
    data_calls: DataCalls | None = None
    # The house's area and floor names and aliases, lower-cased.
    places: frozenset[str] = frozenset()
    # For a tool that changes an item of a collection, the tool listing it.
    listers: Mapping[str, str] = field(default_factory=dict)
    # The HTTP tools whose calls wait for the user's yes, and the call held.
    confirm: Mapping[str, Confirmation] = field(default_factory=dict)
    # The other APIs' tools whose calls wait (an MCP server's destructive
    # tool: `ChatTools.asking`).
    asking: frozenset[str] = frozenset()
    # Other calls that wait (Assist's intents on locks: `turn/sensitive.py`).
    sensitive: Callable[[llm.ToolInput], bool] | None = None
    # False: no one to ask (an AI task): such calls are refused instead.
    can_ask: bool = True
    held: llm.ToolInput | None = None
    # Calls answered this turn (`call_key`): not run again.
    seen: set[str] = field(default_factory=set)
    ran: int = 0  # calls released to run this turn
    changed: bool = False  # a call that changes something ran

    def reply(
        self,
        asked: Asked = Asked.RUN,
        *,
        more_of: MoreOf | None = None,
        trusted: frozenset[str] | None = None,
    ) -> ReplyCalls:
        """The gate for one reply (`trusted`: the ids a change may use; None:
        not checked)."""
        return ReplyCalls(self, asked, more_of, trusted)

    def released(self, calls: Sequence[llm.ToolInput]) -> None:
        """Calls were released to run: a change makes earlier reads no
        repeats any more (reading again may show it)."""
        self.ran += len(calls)
        if any(call.tool_name not in self.read_only for call in calls):
            self.changed = True
            reads = tuple(f"{name}{{" for name in self.read_only)
            self.seen = {key for key in self.seen if not key.startswith(reads)}

    def waits(self, call: llm.ToolInput) -> bool:
        """Whether `call` waits for the user's yes: an HTTP tool's own
        `confirm`, another API's tool by what it says it does, or one of
        Assist's intents on a lock."""
        return (
            call.tool_name in self.confirm
            or call.tool_name in self.asking
            or (self.sensitive is not None and self.sensitive(call))
        )

    def mark_run(self, call: llm.ToolInput) -> None:
        """A call the agent makes itself (`turn/loop.py`, a lookup's change)."""
        self.seen.add(call_key(call.tool_name, call.tool_args))
        self.released([call])


@dataclass(slots=True)
class ReplyCalls:
    """What the gate decided for one reply's calls."""

    gate: CallGate
    asked: Asked
    more_of: MoreOf | None
    trusted: frozenset[str] | None
    pending: list[llm.ToolInput] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)
    lookups: list[Lookup] = field(default_factory=list)
    # Calls the reply made that the gate saw (run, refused or pending).
    calls: int = 0
    # How often each answered call came back in this reply.
    repeated: Counter[str] = field(default_factory=Counter)
    # What the guards did, for the diagnostics' quirks.
    counts: Counter[str] = field(default_factory=Counter)

    @property
    def dropped(self) -> int:
        """Calls recognised but not run: on the closing request, or not
        more of what the user asked on the request for the answer."""
        return self.counts["dropped"]

    def offer(self, name: str, arguments: dict[str, Any], call_id: str) -> None:
        """One call of the reply, as it is recognised (steps 1-5)."""
        gate = self.gate
        if self.asked is Asked.NONE:
            self.counts["dropped"] += 1
            return
        resolved = gate.names.resolve(name)
        if resolved is None:
            self.unreadable(name, arguments, f"Error: unknown tool '{name}'", call_id)
            return
        # The real arguments when the model wrote the schema's shape, so the
        # guards, the key and a held change's question see them.
        schema = gate.schemas.get(resolved)
        if schema is not None:
            arguments = dict(unwrap_schema_form(arguments, schema))
        arguments = self._guarded(resolved, arguments)
        key = call_key(resolved, arguments)
        if key in gate.seen:
            self.repeated[key] += 1
            return
        if self.more_of is not None and not self.more_of.allows(resolved, arguments):
            self.counts["dropped"] += 1
            return
        if gate.data_calls is not None and gate.data_calls.copied(resolved, arguments):
            self.counts["copied"] += 1
            self.calls += 1
            self._answer(resolved, arguments, call_id, COPIED_CALL_ERROR)
            return
        gate.seen.add(key)
        self.calls += 1
        self.pending.append(
            llm.ToolInput(
                tool_name=resolved, tool_args=arguments, id=call_id or new_call_id()
            )
        )

    def unreadable(
        self, name: str, arguments: dict[str, Any], error: str, call_id: str = ""
    ) -> None:
        """A call of no offered tool, or with arguments that do not decode:
        answered with `error` (when the request may run calls at all)."""
        if self.asked is not Asked.RUN:
            self.counts["dropped"] += 1
            return
        self.calls += 1
        self._answer(
            name or "invalid_tool_call",
            arguments,
            call_id,
            error,
            CallOutcome.NOT_A_CALL,
        )

    def release(self) -> list[llm.ToolInput]:
        """The reply is complete: the calls that run (after the reply-level
        guards and the budget); the others are in `refused`."""
        gate = self.gate
        pending, self.pending = self.pending, []
        if gate.rules.unasked_changes or gate.rules.questions_change_nothing:
            pending = self._without_unasked_changes(pending)
        if self.trusted is not None:
            pending = self._without_guessed_ids(pending)
        pending = self._without_held(pending)
        room = max(gate.limit - gate.ran, 0)
        for call in pending[room:]:
            self._refuse(call, over_budget_error(gate.limit))
            self.counts["over_budget"] += 1
        runnable = pending[:room]
        gate.released(runnable)
        return runnable

    def _guarded(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """Step 2: the small profile's argument guards."""
        gate = self.gate
        kept = arguments
        if gate.rules.invented_places:
            kept = without_invented_places(name, kept, gate.places, gate.question)
            self.counts["invented_places"] += len(arguments) - len(kept)
        if gate.rules.invented_filters and name in gate.read_only:
            before = len(kept)
            kept = without_invented_filters(
                kept, gate.schemas.get(name, {}), gate.question
            )
            self.counts["invented_filters"] += before - len(kept)
        return kept

    def _without_unasked_changes(
        self, pending: list[llm.ToolInput]
    ) -> list[llm.ToolInput]:
        """The reply's calls without the changes nobody asked for
        (`Rules.unasked_changes`: the 0.5B model answered "What is 2 plus
        2?" with a call to every tool) and without any change when the
        request is a question (`Rules.questions_change_nothing`)."""
        gate = self.gate
        rules = gate.rules
        question = rules.questions_change_nothing and is_question(gate.question)
        acting = not question and (
            not rules.unasked_changes or asks_for_action(gate.question)
        )
        kept = []
        for call in pending:
            asked = acting and (
                not rules.unasked_changes or asks_for(call.tool_name, gate.question)
            )
            if asked or call.tool_name in gate.read_only:
                kept.append(call)
            else:
                self._refuse(call, UNASKED_ERROR)
                self.counts["unasked"] += 1
        return kept

    def _without_guessed_ids(self, pending: list[llm.ToolInput]) -> list[llm.ToolInput]:
        """The reply's calls without changes whose id nothing vouches for;
        under `Rules.reads_first` the collection is read instead, once."""
        gate = self.gate
        assert self.trusted is not None
        kept: list[llm.ToolInput] = []
        reads: list[llm.ToolInput] = []
        for call in pending:
            guessed = guessed_ids(call.tool_args, self.trusted, gate.question)
            if call.tool_name in gate.read_only or not guessed:
                kept.append(call)
                continue
            key, value = next(iter(guessed.items()))
            lister = gate.listers.get(call.tool_name)
            self._refuse(call, untrusted_id_error(value, lister))
            self.counts["untrusted"] += 1
            if lister is None or not gate.rules.reads_first:
                continue
            self.lookups.append(
                Lookup(call.tool_name, dict(call.tool_args), key, lister)
            )
            read = call_key(lister, {})
            if read not in gate.seen and not any(
                r.tool_name == lister for r in (*kept, *reads)
            ):
                gate.seen.add(read)
                reads.append(
                    llm.ToolInput(tool_name=lister, tool_args={}, id=new_call_id())
                )
        return kept + reads

    def _without_held(self, pending: list[llm.ToolInput]) -> list[llm.ToolInput]:
        """The reply's calls without those that wait for the user's yes: the
        first is held (the agent asks about it), any other refused; one
        question at a time."""
        gate = self.gate
        kept: list[llm.ToolInput] = []
        for call in pending:
            if not gate.waits(call):
                kept.append(call)
            elif not gate.can_ask:
                self._refuse(call, NO_ONE_TO_ASK_ERROR)
            elif (error := self._invalid(call)) is not None:
                # Never a question about a call that cannot run ("Should I
                # delete item: id ?"): the model reads what the tool would say.
                self._refuse(call, error)
            elif gate.held is None:
                gate.held = call
                self.counts["held"] += 1
                self._answer(
                    call.tool_name,
                    call.tool_args,
                    call.id,
                    HELD_TEXT,
                    CallOutcome.HELD,
                )
            else:
                self._refuse(call, ONE_HELD_ERROR)
        return kept

    def _invalid(self, call: llm.ToolInput) -> str | None:
        """The error an HTTP tool's argument check gives `call`, else None
        (Home Assistant checks an intent's own arguments)."""
        schema = self.gate.schemas.get(call.tool_name)
        if call.tool_name not in self.gate.confirm or schema is None:
            return None
        checked = check_arguments(
            call.tool_name, schema, compile_validator(schema), call.tool_args
        )
        return checked.error

    def _refuse(self, call: llm.ToolInput, error: str) -> None:
        """A pending call that will not run: answered with `error`."""
        self.gate.seen.discard(call_key(call.tool_name, call.tool_args))
        self._answer(call.tool_name, call.tool_args, call.id, error)

    def _answer(
        self,
        name: str,
        arguments: dict[str, Any],
        call_id: str,
        error: str,
        outcome: CallOutcome = CallOutcome.REFUSED,
    ) -> None:
        external = llm.ToolInput(
            tool_name=name,
            tool_args=arguments,
            id=call_id or new_call_id(),
            external=True,
        )
        self.refused.append(Refusal(external, error, outcome))
