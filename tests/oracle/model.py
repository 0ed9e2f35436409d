"""The oracle: a scripted model that is right, for P9.

It reads each request as a model does (the question, the calls of the turn
and their results, the tools offered, `tool_choice`) and answers the way a
correct model would, following its scenario (`scenarios.py`): the calls of
the next round, computed from the results it was given (the id of the item
a list returned, the coordinates a geocode found), or, when the rounds are
done or calls are not allowed, its answer from the results. It writes calls
as structured `tool_calls` (the SSE vLLM and OpenAI send) or as text in one
of the text-call formats.

It also keeps the score: after a reply with calls, the next request must
carry every one of them with a result that is not the agent's refusal
(`Error: not run…`): each call the oracle makes runs, in its round.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
import json
from typing import Any

from aiohttp import web

from custom_components.http_tools_agent.small.answer import ANSWER_NUDGE
from custom_components.http_tools_agent.turn.calls import HELD_TEXT
from custom_components.http_tools_agent.turn.tool_search import FIND_TOOLS
from tests.servers import FakeLLMServer, Reply, text_stream, tool_calls_stream

# What the agent answers instead of running a call (`calls`,
# `rules`): a refusal, not a result.
REFUSED = "Error: not run"
# A call held for the user's yes (`turn/calls.py`): it runs after the yes.
HELD = HELD_TEXT
# What the user says when the agent asks before a call (`run.py`): no turn
# of the scenario, the answer to the agent's question.
YES = "Yes."


@dataclass(frozen=True, slots=True)
class Call:
    """One call: the tool's short name and its arguments."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)

    def key(self) -> str:
        """Identify the call (tool and arguments)."""
        return self.name + json.dumps(self.arguments, sort_keys=True)


@dataclass(slots=True)
class Results:
    """What the model was given: every call of the conversation with its
    result, oldest first."""

    pairs: list[tuple[Call, str]]

    def of(self, name: str) -> list[str]:
        """The results of a tool's calls."""
        return [result for call, result in self.pairs if call.name == name]

    def last(self, name: str) -> str:
        """The last result of a tool ("" when it was not called)."""
        found = self.of(name)
        return found[-1] if found else ""

    def json(self, name: str) -> Any:
        """The last result of a tool, as JSON (None when it is not)."""
        try:
            return json.loads(self.last(name))
        except ValueError:
            return None

    def item_id(self, name: str) -> str:
        """The id of the item called `name` in the last list read ("" when
        no list holds it)."""
        for result in reversed(self.of("list_items")):
            try:
                items = json.loads(result)
            except ValueError:
                continue
            for item in items if isinstance(items, list) else ():
                if isinstance(item, dict) and item.get("name") == name:
                    return str(item["id"])
        return ""

    def item(self, name: str) -> dict[str, Any]:
        """The item called `name` in the last list read ({} when none)."""
        for result in reversed(self.of("list_items")):
            try:
                items = json.loads(result)
            except ValueError:
                continue
            for item in items if isinstance(items, list) else ():
                if isinstance(item, dict) and item.get("name") == name:
                    return item
        return {}


type Plan = Callable[[Results], Sequence[Call]]
type Answer = Callable[[Results], str]


@dataclass(frozen=True, slots=True)
class Step:
    """One user turn: the question, the calls of each round, the answer."""

    user: str
    rounds: Sequence[Plan] = ()
    answer: Answer = lambda _results: "Done."


@dataclass(slots=True)
class Seen:
    """What the oracle checks of one reply with calls."""

    turn: int
    round: int
    calls: list[Call]
    ran: bool | None = None  # None: no request came after it


def _py(value: object) -> str:
    """A value as a Python literal (what pythonic calls hold)."""
    return repr(value)


def _gemma(value: object) -> str:
    """A value in Gemma 4's argument syntax."""
    if isinstance(value, str):
        return f'<|"|>{value}<|"|>'
    if isinstance(value, dict):
        return "{" + ",".join(f"{k}:{_gemma(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_gemma(v) for v in value) + "]"
    return json.dumps(value)


def write_calls(calls: Sequence[Call], fmt: str) -> str:
    """The calls as a model writes them in text (each family's format:
    `tests/fixtures/families/families.json`)."""
    if fmt == "pythonic":  # Llama 3.2, Gemma 3, LFM2 without its markers
        return (
            "["
            + ", ".join(
                f"{_short(c.name)}("
                + ", ".join(f"{k}={_py(v)}" for k, v in c.arguments.items())
                + ")"
                for c in calls
            )
            + "]"
        )
    if fmt == "mistral":
        return "".join(
            f"[TOOL_CALLS]{c.name}[ARGS]{json.dumps(c.arguments)}" for c in calls
        )
    if fmt == "gemma4":
        return "".join(
            f"<|tool_call>call:{_short(c.name)}{_gemma(c.arguments)}<tool_call|>"
            for c in calls
        )
    if fmt == "harmony":
        return "".join(
            "<|start|>assistant<|channel|>commentary "
            f"to=functions.{c.name} <|constrain|>json<|message|>"
            f"{json.dumps(c.arguments)}<|call|>"
            for c in calls
        )
    if fmt == "hermes":
        return "\n".join(
            "<tool_call>\n"
            + json.dumps({"name": c.name, "arguments": c.arguments})
            + "\n</tool_call>"
            for c in calls
        )
    if fmt == "qwen-xml":
        blocks = []
        for c in calls:
            params = "".join(
                f"<parameter={k}>\n"
                f"{v if isinstance(v, str) else json.dumps(v)}\n</parameter>\n"
                for k, v in c.arguments.items()
            )
            blocks.append(
                f"<tool_call>\n<function={c.name}>\n{params}</function>\n</tool_call>"
            )
        return "\n".join(blocks)
    return "\n".join(
        json.dumps({"name": c.name, "arguments": c.arguments}) for c in calls
    )


def _without_nudge(text: str) -> str:
    """A result without the small-model rules' instruction riding on it."""
    if text.endswith(ANSWER_NUDGE):
        return text.rpartition("\n\n")[0]
    return text


def _searches(calls: list[Call], offered: list[str]) -> list[Call]:
    """A search for each tool of `calls` not offered, when a search is
    (`turn/tool_search.py`), by the words of the tool's name."""
    if FIND_TOOLS not in offered:
        return []
    shown = {_short(name) for name in offered}
    missing = dict.fromkeys(c.name for c in calls if c.name not in shown)
    return [Call(FIND_TOOLS, {"query": name.replace("_", " ")}) for name in missing]


def _short(name: str) -> str:
    """A namespaced tool's own name (`http-tools__get_weather`)."""
    return name.rpartition("__")[2]


@dataclass
class OracleModel(FakeLLMServer):
    """An OpenAI-compatible server whose model is the oracle of a scenario.

    `fmt`: `structured` (tool_calls), `hermes`, `qwen-xml` or `bare-json`.
    """

    steps: Sequence[Step] = ()
    fmt: str = "structured"
    seen: list[Seen] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    # Rounds emitted, per (conversation, turn).
    _progress: dict[tuple[str, int], int] = field(default_factory=dict)
    # The turn of the latest request and how many rounds its step plans.
    _asked: tuple[tuple[str, int], int] | None = None

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body: dict[str, Any] = await request.json()
        self.add(self.reply_to(body))
        return await super()._chat(request)  # aiohttp keeps the body read

    def reply_to(self, body: dict[str, Any]) -> Reply:
        """What the oracle says to one request."""
        messages: list[dict[str, Any]] = body.get("messages", [])
        offered = [t["function"]["name"] for t in body.get("tools") or ()]
        turn = (
            sum(1 for m in messages if m["role"] == "user" and m["content"] != YES) - 1
        )
        pairs, this_turn = _calls_and_results(messages)
        self._score(this_turn, pairs)
        step = self.steps[min(turn, len(self.steps) - 1)]
        key = (str(body.get("user")), turn)
        done = self._progress.get(key, 0)
        self._asked = (key, len(step.rounds))
        results = Results([(c, r) for c, r in pairs if not r.startswith(REFUSED)])
        try:
            if body.get("tool_choice") != "none" and done < len(step.rounds):
                calls = list(step.rounds[done](results))
                if searches := _searches(calls, offered):
                    # The tools it means are not offered, a search is: it
                    # searches first, then calls them (the same round).
                    return self._calls(searches, offered)
                self._progress[key] = done + 1
                if calls:
                    self.seen.append(Seen(turn, done, calls))
                    return self._calls(calls, offered)
            answer = step.answer(results)
        except KeyError, IndexError, TypeError, ValueError, AttributeError:
            # A result it needed never came: a model that is right says so.
            answer = "I could not finish that."
        self.answers.append(answer)
        middle = len(answer) // 2
        return text_stream(answer[:middle], answer[middle:])

    def score_turn(self, messages: list[dict[str, Any]]) -> None:
        """Score the calls of the turn's last reply from the conversation as
        the agent keeps it: when the agent answered from their results
        itself, no request came after them to tell."""
        pairs, this_turn = _calls_and_results(messages)
        self._score(this_turn, pairs)
        if self._asked is not None:
            (key, rounds), self._asked = self._asked, None
            if (done := self._progress.get(key, 0)) < rounds:
                # The turn ended while the oracle still meant to call: those
                # calls never ran.
                self.seen.append(Seen(key[1], done, [], ran=False))

    def _score(
        self,
        this_turn: list[tuple[Call, str | None]],
        pairs: list[tuple[Call, str]],
    ) -> None:
        """Did the calls of the oracle's last reply run? A call held for the
        user's yes runs in the turn of the yes: its calls are scored on the
        request after it, the others with their results of the turn before."""
        if not self.seen or self.seen[-1].ran is not None:
            return
        last = self.seen[-1]
        if any(result == HELD for _, result in pairs) and not any(
            result is not None for _, result in this_turn
        ):
            return  # the agent asked; the yes is still to come
        results = {
            call.key(): result
            for call, result in (*pairs, *this_turn)
            if result is not None and result != HELD
        }
        last.ran = all(
            call.key() in results and not results[call.key()].startswith(REFUSED)
            for call in last.calls
        )

    def _calls(self, calls: list[Call], offered: list[str]) -> Reply:
        if self.fmt != "structured":
            return text_stream(write_calls(calls, self.fmt))
        full = {_short(name): name for name in offered}
        return tool_calls_stream(
            *((full.get(c.name, c.name), c.arguments) for c in calls)
        )

    @property
    def every_call_ran(self) -> bool:
        """Whether every call the oracle made ran, in its round."""
        return all(seen.ran for seen in self.seen)


def _calls_and_results(
    messages: list[dict[str, Any]],
) -> tuple[list[tuple[Call, str]], list[tuple[Call, str | None]]]:
    """Every call of the conversation with its result, and this turn's calls
    (with their results, None when none came)."""
    calls: dict[str, Call] = {}
    order: list[str] = []
    results: dict[str, str] = {}
    turn_start = 0
    for message in messages:
        if message["role"] == "user":
            turn_start = len(order)
        for tool_call in message.get("tool_calls") or ():
            function = tool_call["function"]
            calls[tool_call["id"]] = Call(
                _short(function["name"]), json.loads(function["arguments"] or "{}")
            )
            order.append(tool_call["id"])
        if message["role"] == "tool":
            results[message["tool_call_id"]] = _without_nudge(str(message["content"]))
    pairs = [(calls[i], results[i]) for i in order if i in results]
    this_turn = [(calls[i], results.get(i)) for i in order[turn_start:]]
    return pairs, this_turn
