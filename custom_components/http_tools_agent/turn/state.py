"""What the rounds of one turn share, and the request each round sends.

A request carries the chat log as messages (`messages`), the agent's
examples at the end of the system prompt, the history that fits the
server's context (`context_fit`), `tool_choice` (`required` only on the
first round: after it the model must be free to answer), and the agent's
extra body with its thinking switch. Under the small-model rules
(`small/rules.py`) the request after results asks for the answer (`Ask`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from homeassistant.components import conversation
from openai.types.chat import (
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.completion_create_params import CompletionCreateParamsBase

from ..agent_options import AgentOptions, ToolChoice, request_extra, thinking_fields
from ..engine.textcalls import ToolNames
from ..server.info import ServerInfo
from ..server.profiles import Evidence, Profile, ProfileChoice
from ..small.rules import (
    PLAIN,
    SMALL_RULES,
    MoreOf,
    Rules,
    answer_nudge,
    texts_of,
)
from .calls import DataCalls, trusted_ids
from .changes import Actions, turn_actions
from .context_fit import ContextWindow, answer_reserve, request_chars
from .examples import examples_text
from .history import HISTORY_PROFILE, SMALL_HISTORY, shape_history
from .honesty import (
    SentenceCheck,
    Withheld,
    asks_for_action,
    claims_action,
    echoes_instruction,
    makes_up_result,
    narrates_call,
    tool_names_pattern,
)
from .messages import ChatTools, chat_messages, tool_result_text
from .prompt import MessageNotes
from .reply import CompletionStream


def _with_instruction(
    message: ChatCompletionMessageParam, instruction: str
) -> ChatCompletionMessageParam:
    """The message with the agent's instruction after its text (the user's
    question or the last tool result: every chat template takes those)."""
    content = message.get("content")
    if message["role"] == "user" and isinstance(content, str):
        return ChatCompletionUserMessageParam(
            role="user", content=f"{content}\n\n{instruction}"
        )
    if message["role"] == "tool" and isinstance(content, str):
        return ChatCompletionToolMessageParam(
            role="tool",
            tool_call_id=message["tool_call_id"],
            content=f"{content}\n\n{instruction}",
        )
    return message


def this_turn(
    chat_log: conversation.ChatLog,
) -> tuple[str, list[conversation.Content]]:
    """This turn's user message, and what came after it (in order)."""
    contents = chat_log.content
    for index in range(len(contents) - 1, -1, -1):
        if isinstance(user := contents[index], conversation.UserContent):
            return user.content, contents[index + 1 :]
    return "", list(contents)


class Ask(Enum):
    """What a request asks for."""

    ROUND = "round"  # the model's choice: calls or an answer
    # Small models, after a round's results: the answer, or more calls of a
    # tool the turn used for what the user named and the results leave out
    # (`MoreOf`).
    ANSWER = "answer"
    CLOSING = "closing"  # the answer; no call runs (`tool_choice: none`)
    # Once more after a reply that was not spoken (`turn/honesty.py`): it narrated
    # a call, claimed an action no tool did, or restated the instruction.
    RETRY = "retry"


# What the request after a withheld reply says (on its last message).
RETRY_NUDGES = {
    Withheld.NARRATION: (
        "You described a tool call instead of making it. If the request needs "
        "a tool, call it now; otherwise answer in plain words."
    ),
    Withheld.CLAIM: (
        "Nothing has been done yet: no tool that does it ran. Call the tool "
        "now, or say in plain words that you cannot."
    ),
    Withheld.INSTRUCTION: "Answer the user in plain words.",
    Withheld.NOT_SPEECH: "Answer the user in plain words, not JSON.",
    Withheld.UNREADABLE: (
        "Your tool call could not be read: it was not valid JSON. Write the "
        "call again as one valid JSON object, or answer in plain words."
    ),
    Withheld.RESULT: (
        "No tool ran: do not make up a result. Call the tool that gives it "
        "now, or say in plain words that you cannot."
    ),
}


def turn_rules(options: AgentOptions, profile: ProfileChoice) -> Rules:
    """The small-model rules a turn applies: its profile's, with the agent's
    `chain_calls` choice over the answer request."""
    rules = SMALL_RULES if profile.small else PLAIN
    if options.chain_calls is not None:
        rules = replace(rules, answer_request=not options.chain_calls)
    return rules


@dataclass(slots=True)
class Request:
    """One round's request: typed params and the agent's extra fields."""

    params: CompletionCreateParamsBase
    extra_body: dict[str, Any]

    @property
    def chars(self) -> int:
        """The size of messages and tools, to calibrate the token estimate
        (only when the server reports tokens: serialising is not free)."""
        return request_chars(self.params["messages"], self.params.get("tools", []))


@dataclass(slots=True)
class Turn:
    """What the rounds of one turn share."""

    options: AgentOptions
    chat_log: conversation.ChatLog
    notes: MessageNotes
    server: ServerInfo = field(default_factory=ServerInfo)
    context: ContextWindow = field(default_factory=ContextWindow)
    profile: ProfileChoice = field(
        default_factory=lambda: ProfileChoice(Profile.CAPABLE, Evidence.UNKNOWN)
    )
    rules: Rules = PLAIN
    offered: ChatTools = field(default_factory=ChatTools)
    # Calls answered this turn (`calls.call_key`): not run again.
    seen_calls: set[str] = field(default_factory=set)
    # Rounds asked so far (the closing request not counted).
    round: int = 0
    # Calls this turn ran (the cap counts them).
    calls_run: int = 0
    # A context error was met (a second one is not retried) ...
    refitted: bool = False
    # ... and the server did not say its size: every earlier turn is left out.
    drop_history: bool = False
    # A tool that changes something ran this turn (not only reads).
    changed: bool = False
    # The house's area and floor names and aliases, lower-cased.
    places: frozenset[str] = frozenset()
    # Why a reply of this turn was asked again (`Ask.RETRY`, once a turn).
    retried: Withheld | None = None
    # Replies of this turn whose call markup could not be read.
    unreadable: int = 0
    # What the agent says itself to end the turn (a spoken message key and
    # its placeholders): set when no model round can help (a change of an
    # item the collection does not hold).
    verdict: tuple[str, dict[str, str]] | None = None
    # The turn ended on a narration, a claim or a made-up result: the agent
    # says nothing was done.
    nothing_done: bool = False
    # What ends a reply cut for running away (`turn/runaway.py`), in the user's
    # language.
    cut_note: str = ""

    data_calls: DataCalls = field(init=False)
    names: ToolNames = field(init=False)

    def __post_init__(self) -> None:
        """Index the tools' names once; read the calls written in the
        conversation's tool results."""
        self.names = ToolNames(self.offered.schemas)
        self.data_calls = DataCalls(self.offered.schemas)
        self._read_results()

    @property
    def tools(self) -> list[ChatCompletionFunctionToolParam]:
        """The `tools` array of the requests."""
        return self.offered.tools

    @property
    def schemas(self) -> dict[str, dict[str, Any]]:
        """Each offered tool's parameters schema, by name."""
        return self.offered.schemas

    def _read_results(self) -> None:
        """Calls written in tool results are data (`calls.DataCalls`)."""
        if not self.offered.tools:
            return
        for content in self.chat_log.content:
            if isinstance(content, conversation.ToolResultContent):
                self.data_calls.add(
                    content.tool_call_id, tool_result_text(content.result)
                )

    def actions(self) -> Actions:
        """What this turn's calls that change something did (`turn/changes.py`)."""
        return turn_actions(this_turn(self.chat_log)[1], self.offered.read_only)

    def sentence_check(self) -> SentenceCheck | None:
        """What each sentence of the next reply is checked for before it is
        spoken (`turn/honesty.py`), or None. A claim that something was done is
        not spoken when nothing was: a small model's, and any model's once
        an action failed."""
        narration = bool(self.tools) and not self.calls_run
        acts = self.actions()
        question = this_turn(self.chat_log)[0]
        claims = (
            (self.rules.claims_need_calls or bool(acts.failed))
            and not acts.done
            and asks_for_action(question)
        )
        instruction = bool(self.seen_calls) and self.rules.answer_request
        results = self.rules.results_need_calls and narration
        if not (narration or claims or instruction):
            return None
        names = tool_names_pattern(self.schemas) if narration else None
        earlier = self._earlier_results() if results else []
        # Asked for an action, an earlier answer said again is none.
        answered = (
            self._earlier_answers() if results and asks_for_action(question) else ""
        )
        domains = (
            [
                f"{tool['function']['name']}: {tool['function'].get('description', '')}"
                for tool in self.tools
                if tool["function"]["name"] in self.offered.read_only
            ]
            if results
            else []
        )

        def check(sentence: str) -> Withheld | None:
            if narration and narrates_call(sentence, names):
                return Withheld.NARRATION
            if claims and claims_action(sentence):
                return Withheld.CLAIM
            if instruction and echoes_instruction(sentence):
                return Withheld.INSTRUCTION
            if results and makes_up_result(sentence, question, earlier, domains):
                return Withheld.RESULT
            if answered and " ".join(sentence.lower().split()) in answered:
                return Withheld.RESULT
            return None

        return check

    @property
    def history_mode(self) -> str:
        """What the model is sent of earlier turns (`turn/history.py`)."""
        if self.options.history != HISTORY_PROFILE:
            return self.options.history
        return SMALL_HISTORY if self.profile.small else "all"

    def _earlier_results(self) -> list[tuple[str, str]]:
        """Each earlier turn's question with each of its tools' results and
        the answers it got (a model copies either's form)."""
        found: list[tuple[str, str]] = []
        question = ""
        for content in self.chat_log.content:
            if isinstance(content, conversation.UserContent):
                question = content.content
            elif isinstance(content, conversation.ToolResultContent):
                found.append((question, tool_result_text(content.result)))
            elif isinstance(content, conversation.AssistantContent) and content.content:
                found.append((question, content.content))
        return found

    def _earlier_answers(self) -> str:
        """The earlier turns' answers, as words (lower-cased)."""
        since = len(this_turn(self.chat_log)[1]) + 1
        return " ".join(
            " ".join(content.content.lower().split())
            for content in self.chat_log.content[:-since]
            if isinstance(content, conversation.AssistantContent) and content.content
        )

    def reply(self, ask: Ask = Ask.ROUND) -> CompletionStream:
        """A new reply to read; on the closing request its calls never run."""
        self._read_results()
        return CompletionStream(
            self.schemas,
            self.seen_calls,
            run_calls=bool(self.tools) and ask is not Ask.CLOSING,
            call_budget=max(self.options.max_calls_per_turn - self.calls_run, 0),
            call_limit=self.options.max_calls_per_turn,
            rules=self.rules,
            data_calls=self.data_calls,
            more_of=self._more_of() if ask is Ask.ANSWER else None,
            sentence_check=self.sentence_check(),
            question=this_turn(self.chat_log)[0],
            read_only=self.offered.read_only,
            places=self.places,
            names=self.names,
            cut_note=self.cut_note,
            trusted_ids=trusted_ids(self.chat_log.content) if self.tools else None,
            listers=self.offered.listers,
        )

    def after_round(self, reply: CompletionStream) -> None:
        """A call that changed something ran: reading again may show the
        change, so earlier reads are no repeats any more."""
        if any(name not in self.offered.read_only for name in reply.released):
            self.changed = True
            self.seen_calls -= {
                key
                for key in self.seen_calls
                if any(key.startswith(f"{name}{{") for name in self.offered.read_only)
            }

    def _more_of(self) -> MoreOf:
        """The tools this turn called with their text arguments, and the
        words of its user message."""
        question, since = this_turn(self.chat_log)
        asked: dict[str, set[str]] = {}
        for content in since:
            if isinstance(content, conversation.AssistantContent):
                for call in content.tool_calls or ():
                    texts = texts_of(call.tool_args)
                    asked.setdefault(call.tool_name, set()).update(texts)
        return MoreOf(
            {name: frozenset(texts) for name, texts in asked.items()},
            question.lower(),
        )

    def tool_choice(self, ask: Ask = Ask.ROUND) -> ToolChoice:
        """`none` to close; `required` on the first round only."""
        if ask is Ask.CLOSING:
            return "none"
        if self.options.tool_choice == "required" and self.round > 0:
            return "auto"
        return self.options.tool_choice

    def request(self, ask: Ask = Ask.ROUND) -> Request:
        """The request of one round."""
        messages = shape_history(
            chat_messages(self.chat_log.content, self.notes.note),
            self.history_mode,
            self.options.history_turns,
        )
        self._add_examples(messages)
        last = messages[-1]
        if (
            ask is Ask.ANSWER
            and self.rules.answer_request
            and self.seen_calls
            and last["role"] == "tool"
        ):
            # Small models: the instruction to answer, with the question
            # again. In the result itself: Mistral's and Qwen 3.5's templates
            # refuse a system message there, and Mistral's a user message
            # after a result.
            nudge = answer_nudge(this_turn(self.chat_log)[0])
            messages[-1] = ChatCompletionToolMessageParam(
                role="tool",
                tool_call_id=last["tool_call_id"],
                content=f"{last['content']}\n\n{nudge}",
            )
        if ask is Ask.RETRY and self.retried is not None:
            messages[-1] = _with_instruction(messages[-1], RETRY_NUDGES[self.retried])
        messages = self._fit(messages)
        params = CompletionCreateParamsBase(
            model=self.options.model,
            messages=messages,
            temperature=self.options.temperature,
            max_tokens=self.options.max_tokens,
            user=self.chat_log.conversation_id,
        )
        if self.tools:
            params["tools"] = self.tools
            params["tool_choice"] = self.tool_choice(ask)
        extra = request_extra(
            self.options.extra_body,
            thinking_fields(self.options.thinking, self.server.kind),
        )
        return Request(params, extra)

    def _add_examples(self, messages: list[ChatCompletionMessageParam]) -> None:
        """The agent's examples end the system prompt (its stable part)."""
        text = examples_text(
            self.options.examples, self.options.custom_examples, self.schemas
        )
        first = messages[0] if messages else None
        if text and first is not None and first["role"] == "system":
            content = first.get("content")
            if isinstance(content, str):
                messages[0] = ChatCompletionSystemMessageParam(
                    role="system", content=f"{content}\n\n{text}"
                )

    def _fit(
        self, messages: list[ChatCompletionMessageParam]
    ) -> list[ChatCompletionMessageParam]:
        """Leave the oldest turns out when the context is known to be short."""
        n_ctx = (
            self.context.learned_n_ctx or self.server.model(self.options.model).context
        )
        if n_ctx is None and not self.drop_history:
            return messages
        budget = n_ctx - answer_reserve(n_ctx, self.options.max_tokens) if n_ctx else 0
        return self.context.fit(
            self.chat_log.conversation_id,
            messages,
            self.tools,
            budget,
            drop_all=self.drop_history,
        )
