"""What the rounds of one turn share, owned by one object (`Turn`).

The loop (`turn/loop.py`) asks the turn for each reply to read and each
request to send; the turn changes its own state through its methods (a
retry, a context learned, an ending the agent says itself), and its call
gate (`turn/calls.py`) keeps which calls ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from homeassistant.components import conversation
from openai.types.chat import ChatCompletionFunctionToolParam

from ..agent_options import AgentOptions
from ..const import HISTORY_PROFILE
from ..engine.speakable import ReadOutWords
from ..engine.textcalls import ToolNames
from ..lexicon import LEXICONS
from ..server.client import Request
from ..server.errors import ContextOverflow
from ..server.info import ServerInfo
from ..server.profiles import Evidence, Profile, ProfileChoice
from ..server.thinking import OpenThinking
from ..small.answer import MoreOf, texts_of
from ..small.rules import PLAIN, Rules
from .calls import Asked, CallGate, trusted_ids
from .changes import Actions, turn_actions
from .checks import sentence_check
from .context_fit import ContextWindow
from .data_calls import DataCalls
from .honesty import Withheld
from .intent_speech import IntentSpeech
from .messages import ChatTools, this_turn, tool_result_text
from .outcomes import own_speech
from .prompt import MessageNotes
from .reply import Reply
from .request import Ask, build_request
from .sensitive import Sensitive
from .tool_search import ToolSearch

_ASKED = {Ask.ROUND: Asked.RUN, Ask.RETRY: Asked.RUN, Ask.ANSWER: Asked.ANSWER}


@dataclass(slots=True)
class Turn:
    """What the rounds of one turn share."""

    options: AgentOptions
    chat_log: conversation.ChatLog
    notes: MessageNotes
    server: ServerInfo = field(default_factory=ServerInfo)
    context: ContextWindow = field(default_factory=ContextWindow)
    open_thinking: OpenThinking = field(default_factory=OpenThinking)
    profile: ProfileChoice = field(
        default_factory=lambda: ProfileChoice(Profile.CAPABLE, Evidence.UNKNOWN)
    )
    rules: Rules = PLAIN
    offered: ChatTools = field(default_factory=ChatTools)
    # Over the threshold, which HTTP tools the requests show
    # (`turn/tool_search.py`); None: all of them.
    search: ToolSearch | None = None
    # The house's area and floor names and aliases, lower-cased.
    places: frozenset[str] = frozenset()
    # What ends a reply cut for running away (`turn/runaway.py`), and the
    # language the agent speaks in (the user's: `lexicon.guess_language`).
    cut_note: str = ""
    language: str | None = None
    # An AI task's turn: its answer is data, kept as the model wrote it
    # (a conversation's is spoken: `turn/spoken_text.py`); the images the
    # question carries (data URLs of its attachments).
    data: bool = False
    images: tuple[str, ...] = ()
    # An AI task's structure as a JSON schema: the request that calls no
    # tool asks the server for JSON that fits it (`turn/request.py`).
    structure: dict[str, Any] | None = None
    # The device that asked (a satellite): a held call belongs to it.
    device_id: str | None = None
    # The request this turn answers when the user's words of this turn are
    # only a yes to a held call (`turn/hold.py`): the checks read it.
    confirmed_request: str | None = None
    # Assist's intents that wait for the user's yes (`turn/sensitive.py`).
    sensitive: Sensitive | None = None
    # The model reads images: a tool's image goes with the next request
    # (`turn/request.py`).
    pictures: bool = False
    # The turn ends with the agent's question: the conversation continues.
    asked: bool = False
    # Rounds asked so far (the closing request not counted).
    round: int = 0
    # A context error was met: the history was fitted ...
    refitted: bool = False
    # ... and the server did not say its size: every earlier turn is left out;
    # a second error: this turn's results were cut too (`turn/context_fit.py`).
    drop_history: bool = False
    trimmed: bool = False
    # Why a reply of this turn was asked again (`Ask.RETRY`, once a turn).
    retried: Withheld | None = None
    # Replies of this turn whose call markup could not be read.
    unreadable: int = 0
    # The turn ended on a narration, a claim or a made-up result: the agent
    # says nothing was done.
    nothing_done: bool = False
    # What the agent says itself to end the turn (a spoken message key and
    # its placeholders): set when no model round can help (a change of an
    # item the collection does not hold).
    verdict: tuple[str, dict[str, str]] | None = None
    # What Home Assistant's agent says of Assist's intents in the turn's
    # language, once an intent's result is in (`turn/intent_speech.py`).
    intent_speech: IntentSpeech | None = None

    names: ToolNames = field(init=False)
    data_calls: DataCalls = field(init=False)
    gate: CallGate = field(init=False)

    def __post_init__(self) -> None:
        """Index the tools' names once; read the calls written in the
        conversation's tool results; open the turn's call gate."""
        self.names = ToolNames(self.offered.schemas)
        self.data_calls = DataCalls(self.offered.schemas)
        self._read_results()
        self.gate = CallGate(
            self.names,
            self.offered.schemas,
            self.offered.read_only,
            self.question,
            self.options.max_calls_per_turn,
            rules=self.rules,
            data_calls=self.data_calls,
            places=self.places,
            listers=self.offered.listers,
            confirm=self.offered.confirm,
            asking=self.offered.asking(self.options.confirm_other_tools),
            sensitive=self.sensitive,
            can_ask=not self.data,
        )

    @property
    def tools(self) -> list[ChatCompletionFunctionToolParam]:
        """The `tools` array of the next request: every tool offered, or
        those the turn's search shows."""
        if (search := self.search) is None:
            return self.offered.tools
        return [t for t in self.offered.tools if search.visible(t["function"]["name"])]

    @property
    def schemas(self) -> dict[str, dict[str, Any]]:
        """Each offered tool's parameters schema, by name."""
        return self.offered.schemas

    @property
    def question(self) -> str:
        """The user's words of this turn (for a yes: the request it
        confirms)."""
        if self.confirmed_request is not None:
            return self.confirmed_request
        return this_turn(self.chat_log)[0]

    @property
    def since_question(self) -> list[conversation.Content]:
        """What came after the question, in order."""
        return this_turn(self.chat_log)[1]

    @property
    def history_mode(self) -> str:
        """What the model is sent of earlier turns (`turn/request.py`)."""
        if self.options.history != HISTORY_PROFILE:
            return self.options.history
        return self.rules.history

    @property
    def read_out_words(self) -> ReadOutWords:
        """The words a read-out of results is said with, in the turn's
        language (English when the agent has none of that language's)."""
        base = (self.language or "en").split("-")[0].lower()
        return (LEXICONS.get(base) or LEXICONS["en"]).read_out

    def own_speech(self, content: conversation.ToolResultContent) -> str | None:
        """The sentence a call that succeeded says of itself: its tool's
        `speech`, or what Home Assistant's agent says of its intent."""
        if (sentence := own_speech(content)) is not None:
            return sentence
        if self.intent_speech is not None:
            return self.intent_speech.sentence(content)
        return None

    def actions(self) -> Actions:
        """What this turn's calls that change something did (`turn/changes.py`)."""
        return turn_actions(self.since_question, self.offered.read_only)

    def reply(self, ask: Ask = Ask.ROUND) -> Reply:
        """A new reply to read; on the closing request its calls never run."""
        self._read_results()
        asked = _ASKED.get(ask, Asked.NONE) if self.tools else Asked.NONE
        calls = self.gate.reply(
            asked,
            more_of=self._more_of() if ask is Ask.ANSWER else None,
            trusted=trusted_ids(self.chat_log.content) if self.tools else None,
        )
        return Reply(
            calls,
            self.names,
            spoken_check=sentence_check(self),
            cut_note=self.cut_note,
            data=self.data,
            think_open=self.open_thinking.holds(self.server.kind, self.options.model),
        )

    def request(self, ask: Ask = Ask.ROUND) -> Request:
        """The request `ask` sends now (`turn/request.py`)."""
        return build_request(self, ask)

    def after_reply(self, reply: Reply) -> None:
        """What a reply leaves for the rest of the turn."""
        self.unreadable += bool(reply.unreadable)
        if reply.unopened_think:
            self.open_thinking.learn(self.options.model)

    def next_round(self) -> None:
        """A round's calls ran: the next request is a new round."""
        self.round += 1

    def retry(self, reason: Withheld) -> None:
        """The next request asks again, saying why (once a turn)."""
        self.retried = reason

    def settle(self, reason: Withheld) -> None:
        """A reply was not spoken and is not asked again: after a narration,
        a claim or a made-up result, nothing was done."""
        self.nothing_done = reason in (
            Withheld.NARRATION,
            Withheld.CLAIM,
            Withheld.RESULT,
        )

    def learn_context(self, overflow: ContextOverflow, chars: int) -> None:
        """The request did not fit the server's context: the next one leaves
        out the history that does not fit (all of it when the server did not
        say its size). Tried once per turn."""
        self.refitted = True
        if overflow.n_ctx:
            self.context.learned_n_ctx = overflow.n_ctx
            self.context.calibrate(chars, overflow.prompt_tokens)
        else:
            self.drop_history = True

    def trim(self) -> bool:
        """A request with the history fitted still did not fit: the next one
        cuts this turn's long results and, with results in, offers no tools
        (the model answers from them). False when there is nothing to cut:
        the turn ends in the agent's sentence."""
        if self.trimmed or not any(
            isinstance(content, conversation.ToolResultContent)
            for content in self.since_question
        ):
            return False
        self.trimmed = self.drop_history = True
        return True

    def end(self, key: str, placeholders: dict[str, str] | None = None) -> None:
        """End the turn with the agent's own words (`turn/say.py`)."""
        self.verdict = (key, placeholders or {})

    def go_on(self) -> None:
        """What would have ended the turn no longer does (a lookup found the
        item after all)."""
        self.verdict = None

    def _read_results(self) -> None:
        """Calls written in tool results are data (`data_calls.DataCalls`)."""
        if not self.offered.tools:
            return
        for content in self.chat_log.content:
            if isinstance(content, conversation.ToolResultContent):
                self.data_calls.add(
                    content.tool_call_id, tool_result_text(content.result)
                )

    def _more_of(self) -> MoreOf:
        """The tools this turn called with their text arguments, and the
        words of its user message."""
        asked: dict[str, set[str]] = {}
        for content in self.since_question:
            if isinstance(content, conversation.AssistantContent):
                for call in content.tool_calls or ():
                    texts = texts_of(call.tool_args)
                    asked.setdefault(call.tool_name, set()).update(texts)
        return MoreOf(
            {name: frozenset(texts) for name, texts in asked.items()},
            self.question.lower(),
        )
