"""One reply of the model (streamed or not) -> chat log deltas.

Text goes through the engine's text-call filter (call markup and thinking
never reach the speaker), loses its markdown, emoji and URLs
(`turn/spoken_text.py`), then the sentence checks (`turn/honesty.py`) and
the runaway guard (`turn/runaway.py`); structured `tool_calls` deltas are
assembled by index (`turn/structured_calls.py`). Every call, text or
structured, goes to the call gate (`turn/calls.py`) as it is recognised;
when the reply ends the gate releases the calls that run, and answers the
refused ones with an `Error: …` result, so the model reads what went wrong
and can retry.
Afterwards the object tells what the reply held: `text`, `calls`, `empty`,
`withheld`, `finish_reason`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncGenerator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from homeassistant.components.conversation import (
    AssistantContentDeltaDict,
    ToolResultContentDeltaDict,
)
from homeassistant.helpers import llm
import openai
from openai.types.chat.completion_create_params import CompletionCreateParamsBase

from ..engine.textcalls import FilterOutput, TextCallFilter, ToolNames
from ..server.client import async_complete, async_stream_completion
from ..server.errors import MalformedResponse, llm_error_handler
from ..tools.call_result import CallResult
from .calls import Asked, Lookup, ReplyCalls
from .honesty import SpokenCheck, Withheld
from .runaway import RunawayGuard
from .spoken_text import SpokenText
from .structured_calls import StructuredCalls, text_of

type Delta = AssistantContentDeltaDict | ToolResultContentDeltaDict

# A reply that repeats one answered call this often is looping: small models
# (Qwen2.5-0.5B on llama-server) write it until `max_tokens`, 25 s on a CPU.
LOOP_REPEATS = 2


def _object(value: object) -> dict[str, Any]:
    """A JSON object of the server's answer; anything else is malformed."""
    if not isinstance(value, dict):
        raise MalformedResponse
    return value


def _reasoning(message: dict[str, Any]) -> str:
    """Reasoning text, from the fields servers use for it."""
    return text_of(message.get("reasoning_content")) or text_of(
        message.get("reasoning")
    )


def _first_choice(answer: dict[str, Any]) -> dict[str, Any] | None:
    """The answer's choice 0 (servers asked for one may still send others)."""
    for choice in answer.get("choices") or ():
        if isinstance(choice, dict) and choice.get("index", 0) in (0, None):
            return choice
    return None


@dataclass(slots=True)
class Reply:
    """One model reply: asks the server, yields chat log deltas, remembers."""

    # What the gate decided for this reply's calls (`CallGate.reply`).
    gate: ReplyCalls
    # The offered tools' names, indexed once for the turn's replies.
    names: ToolNames
    # Checks each sentence before it is spoken (`turn/checks.py`); None: none.
    spoken_check: SpokenCheck | None = None
    # Said after a reply cut for running away, in the user's language.
    cut_note: str = ""
    # The reply is an AI task's data, not speech: its words are kept as the
    # model wrote them (markdown, JSON, any length).
    data: bool = False
    # The prompt opened `<think>` (`server/thinking.py`): the first words
    # are held as possible thinking.
    think_open: bool = False
    # A `</think>` closed thinking never opened, after words were released.
    unopened_think: bool = False
    text: str = ""
    thinking: str = ""
    # JSON the filter kept from speech (an echo of a result).
    held: str = ""
    finish_reason: str | None = None
    # What the server reported evaluating, when it says so.
    usage: dict[str, Any] | None = None
    timings: dict[str, Any] | None = None
    # Calls read from near-JSON (`engine/textcalls/repair.py`), and why
    # markup that was meant as a call could not be read.
    repaired: int = 0
    unreadable: list[str] = field(default_factory=list)
    # The reply ran off inside a call (longer than any call): read no further.
    ran_off: bool = False
    # The calls released to run, in order.
    released: list[llm.ToolInput] = field(default_factory=list)
    # How often each JSON object held from speech (an echoed result or
    # error) came back in this reply.
    _echoes: Counter[str] = field(default_factory=Counter)
    _filter: TextCallFilter = field(init=False)
    # Spoken words are written without markdown, emoji and URLs
    # (`turn/spoken_text.py`); None for data.
    speech: SpokenText | None = field(init=False)
    _runaway: RunawayGuard = field(default_factory=RunawayGuard)
    # Structured calls being assembled from the server's deltas.
    _structured: StructuredCalls = field(default_factory=StructuredCalls)

    def __post_init__(self) -> None:
        """Start the text filter for this reply; the gate resolves its calls'
        names the same way (HA namespaces merged APIs' tools,
        `http-tools__get_weather`; models drop the prefix)."""
        # A line-start JSON object that is no call is never speech: it
        # echoes a result, or is a model's idea of an answer
        # (`{"id": "1234567890", "qty": 2, …}` for "Add apples and pears").
        # A task's data may be a JSON object: it is the answer.
        self._filter = TextCallFilter(
            self.names, after_tool_results=not self.data, think_open=self.think_open
        )
        self.speech = None if self.data else SpokenText()

    @property
    def calls(self) -> int:
        """Calls the reply made (run, refused, or answered as unknown)."""
        return self.gate.calls

    @property
    def ran(self) -> int:
        """Calls released to run."""
        return len(self.released)

    @property
    def lookups(self) -> list[Lookup]:
        """Changes refused for an id nobody read, whose collection is read."""
        return self.gate.lookups

    @property
    def withheld(self) -> Withheld | None:
        """Why the reply's words (from some sentence on) were not spoken; a
        reply that was only JSON (an object that is no call is never
        speech) has none to speak."""
        if self.spoken_check is not None and self.spoken_check.reason is not None:
            return self.spoken_check.reason
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
        return self.gate.repeated.total()

    @property
    def looping(self) -> bool:
        """Whether the reply keeps repeating a call that was answered, or,
        asked for the answer, writes calls instead (none of them runs; Qwen2.5-
        0.5B listed twenty cities so for 30 s before falling silent, and
        recites the other tools after the one call it may make: on the
        request for the answer the first call that may not run ends it)."""
        dropped = self.gate.dropped
        if self.gate.asked is Asked.ANSWER and dropped:
            return not self.text.strip()
        if self.gate.asked is Asked.NONE and dropped >= LOOP_REPEATS:
            return not self.text.strip()
        if any(count >= LOOP_REPEATS for count in self._echoes.values()):
            # Writing a result or an error back again and again: Qwen2.5-0.5B
            # wrote an intent's error JSON until `max_tokens`, 60 s on a CPU.
            return True
        return any(count >= LOOP_REPEATS for count in self.gate.repeated.values())

    @property
    def empty(self) -> bool:
        """Return whether the reply held no words and no call.

        Thinking alone counts as empty: a thinking model behind a server
        whose parser does not match loses its answer or call on the
        streaming path. An echoed result, a repeated call or a call on the
        closing request is something: the server did not swallow the
        reply, so asking again would not help.
        """
        return (
            not self.text.strip()
            and not self.held.strip()
            and not self.calls
            and not self.repeats
            and not self.gate.dropped
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
        self.released = self.gate.release()
        if self.released:
            yield {"tool_calls": self.released}
        for delta in self._refused_deltas():
            yield delta

    def _chunk(self, chunk: dict[str, Any]) -> list[Delta]:
        self._note_counts(chunk)
        if (choice := _first_choice(chunk)) is None:
            return []
        deltas: list[Delta] = []
        if isinstance(delta := choice.get("delta"), dict):
            deltas.extend(self._said(_reasoning(delta), text_of(delta.get("content"))))
            for tool_call in delta.get("tool_calls") or ():
                if isinstance(tool_call, dict):
                    self._structured.add_delta(tool_call)
        if finish_reason := text_of(choice.get("finish_reason")):
            self.finish_reason = finish_reason
            # Some servers flush calls with `stop` or `length`: take them
            # whatever the reason.
            self._structured.flush(self.gate)
        return deltas

    def _completion(self, completion: dict[str, Any]) -> list[Delta]:
        self._note_counts(completion)
        if (choice := _first_choice(completion)) is None:
            return []
        self.finish_reason = text_of(choice.get("finish_reason")) or None
        message = choice.get("message")
        if not isinstance(message, dict):
            return []
        deltas = self._said(_reasoning(message), text_of(message.get("content")))
        for tool_call in message.get("tool_calls") or ():
            if isinstance(tool_call, dict):
                self._structured.add_whole(tool_call)
        self._structured.flush(self.gate)
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
        rest = self.speech.finish() if self.speech is not None else ""
        if self.spoken_check is not None:
            rest = self.spoken_check.feed(rest) if rest else ""
            rest += self.spoken_check.finish()
        if not self.data:
            rest = self._runaway.feed(rest) + self._runaway.finish()
        if self._runaway.cut and self.cut_note:
            before = self.text + rest
            gap = "" if not before or before[-1].isspace() else " "
            rest = f"{rest}{gap}{self.cut_note}"
        if rest:
            self.text += rest
            deltas.append({"content": rest})
        self._structured.flush(self.gate)
        return deltas

    def _refused_deltas(self) -> list[Delta]:
        """The calls that do not run, then their `Error: …` results.

        They are external calls of the assistant message, answered right
        after it, so the model reads what went wrong and can retry. A reply
        that only repeated earlier calls drops them: a reply cut off while
        repeating a call is no new attempt.
        """
        refused, self.gate.refused = self.gate.refused, []
        if not refused:
            return []
        if self.repeats and self.calls == len(refused) and not self.released:
            self.gate.calls -= len(refused)
            return []
        deltas: list[Delta] = [{"tool_calls": [r.call for r in refused]}]
        deltas.extend(
            ToolResultContentDeltaDict(
                role="tool_result",
                tool_call_id=r.call.id,
                tool_name=r.call.tool_name,
                result=CallResult.not_run(r.error, r.outcome),
            )
            for r in refused
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
        self.unopened_think = self.unopened_think or out.unopened_think
        spoken = out.text
        if spoken and self.speech is not None:
            spoken = self.speech.feed(spoken)
        if spoken and self.spoken_check is not None:
            spoken = self.spoken_check.feed(spoken)
        if spoken and not self.data:
            spoken = self._runaway.feed(spoken)
        if spoken:
            self.text += spoken
            deltas.append({"content": spoken})
        for call in out.calls:
            self.gate.offer(call.name, dict(call.arguments), "")
        for problem in out.problems:
            # Markup that could not be read: no call in the chat log (a small
            # model copies the calls it sees there); the turn asks again
            # (`Withheld.UNREADABLE`).
            if self.gate.asked is Asked.RUN:
                self.unreadable.append(problem)
            else:
                self.gate.counts["dropped"] += 1
        return deltas
