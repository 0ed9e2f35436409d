"""Home Assistant chat log content -> typed OpenAI chat-completions params."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from homeassistant.components import conversation
from homeassistant.helpers import llm
from homeassistant.helpers.json import json_dumps
from openai.types.chat import (
    ChatCompletionAssistantMessageParam,
    ChatCompletionFunctionToolParam,
    ChatCompletionMessageFunctionToolCallParam,
    ChatCompletionMessageParam,
    ChatCompletionSystemMessageParam,
    ChatCompletionToolMessageParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.chat_completion_message_function_tool_call_param import Function
from openai.types.shared_params import FunctionDefinition
import probatio
from slugify import slugify

from ..engine.confirm import AskOthers, Confirmation, Effect
from ..engine.definitions import ToolDefinition
from ..engine.lookup import lister_of
from ..tools.call_result import RESULT_KEY
from ..tools.llm_api import DateTimeTool, HttpTool, HttpToolsAPI

# Home Assistant's name test for a date-and-time tool (it then leaves its
# clock line out of the system prompt).
DATE_TIME_TOOL = DateTimeTool.name

type ToolSchemas = dict[str, dict[str, Any]]


@dataclass(frozen=True, slots=True)
class AgentWords:
    """Marks what the agent said itself (the `native` of its chat log
    content): never sent to the model as words the model wrote, which it
    would copy ("Done. The tool … returned …" became "Done. The tool
    delete_item called with id 3." with no call). Later requests carry
    `history` in its place (the turn's results as an answer), or, when it is
    None, leave the turn out if it made no call."""

    history: str | None = None


def tool_json_schema(
    tool: llm.Tool, custom_serializer: Callable[[Any], Any] | None
) -> dict[str, Any]:
    """Return the JSON Schema of a tool's parameters.

    HTTP tools keep the schema exactly as the user wrote it; other tools
    (Assist, scripts) are converted from their probatio schema.
    """
    inner = tool
    while isinstance(inner, llm.NamespacedTool):
        inner = inner.tool
    if isinstance(inner, HttpTool):
        return inner.definition.parameters
    schema: dict[str, Any] = probatio.to_openapi(
        tool.parameters, custom_serializer=custom_serializer, openapi_version="3.1.0"
    )
    return schema


@dataclass(frozen=True, slots=True)
class ChatTools:
    """The tools a turn offers: the `tools` array, each one's parameters
    schema by name, the names of those that only read, and for an HTTP tool
    that changes an item of a collection, the tool that lists it
    (`engine.lookup.lister_of`)."""

    tools: list[ChatCompletionFunctionToolParam] = field(default_factory=list)
    schemas: ToolSchemas = field(default_factory=dict)
    read_only: frozenset[str] = frozenset()
    listers: Mapping[str, str] = field(default_factory=dict)
    # The HTTP tools whose calls wait for the user's yes (`turn/hold.py`).
    confirm: Mapping[str, Confirmation] = field(default_factory=dict)
    # The tools of other LLM APIs (neither Assist's nor the HTTP tools: an
    # MCP server's), and what each says it does.
    others: Mapping[str, Effect] = field(default_factory=dict)
    # The HTTP tools' names as offered (what a tool search ranks).
    http: frozenset[str] = frozenset()

    def asking(self, mode: AskOthers) -> frozenset[str]:
        """The other APIs' tools whose calls wait for the user's yes."""
        return frozenset(
            name for name, effect in self.others.items() if mode.waits(effect)
        )


def _http_definition(tool: llm.Tool) -> ToolDefinition | None:
    inner = tool
    while isinstance(inner, llm.NamespacedTool):
        inner = inner.tool
    return inner.definition if isinstance(inner, HttpTool) else None


def _api_of(llm_api: llm.APIInstance) -> Callable[[llm.Tool], llm.API | None]:
    """Which of the selected APIs a tool comes from: with several, Home
    Assistant merges them and names each tool with its API's namespace (the
    API's name, slugified: `llm.MergedAPI`)."""
    api = llm_api.api
    if not isinstance(api, llm.MergedAPI):
        return lambda tool: api
    by_namespace = {slugify(each.name): each for each in api.llm_apis}
    return lambda tool: (
        by_namespace.get(tool.namespace)
        if isinstance(tool, llm.NamespacedTool)
        else None
    )


def _is_other(api: llm.API | None) -> bool:
    """Whether an API's tools ask by their annotations: not Assist's (its
    intents on locks ask by the agent's own setting, `turn/sensitive.py`),
    not the HTTP tools (each asks by its own `confirm`). A tool of no API
    found asks too: a destructive call never runs unasked by mistake."""
    return api is None or not (
        api.id == llm.LLM_API_ASSIST or isinstance(api, HttpToolsAPI)
    )


def chat_tools(llm_api: llm.APIInstance) -> ChatTools:
    """Return what the turn offers of the API's tools.

    With Assist and the HTTP tools both selected, each brings a date-and-time
    tool: the model gets the first one only.
    """
    tools: list[ChatCompletionFunctionToolParam] = []
    schemas: ToolSchemas = {}
    read_only: set[str] = set()
    http: dict[str, ToolDefinition] = {}
    others: dict[str, Effect] = {}
    api_of = _api_of(llm_api)
    clock = False
    for tool in llm_api.tools:
        if (definition := _http_definition(tool)) is not None:
            http[tool.name] = definition
        elif _is_other(api_of(tool)):
            others[tool.name] = Effect.of(
                read_only=tool.annotations.read_only,
                destructive=tool.annotations.destructive,
            )
        if tool.name.endswith(DATE_TIME_TOOL):
            if clock:
                continue
            clock = True
        schema = tool_json_schema(tool, llm_api.custom_serializer)
        schemas[tool.name] = schema
        if tool.annotations.read_only:
            read_only.add(tool.name)
        function = FunctionDefinition(name=tool.name, parameters=schema)
        if tool.description:
            function["description"] = tool.description
        tools.append(
            ChatCompletionFunctionToolParam(type="function", function=function)
        )
    offered_as = {definition.name: name for name, definition in http.items()}
    listers = {
        name: offered_as[lister.name]
        for name, definition in http.items()
        if name not in read_only
        and (lister := lister_of(definition, http.values())) is not None
    }
    confirm = {
        name: definition.confirmation
        for name, definition in http.items()
        if definition.needs_confirmation
    }
    return ChatTools(
        tools, schemas, frozenset(read_only), listers, confirm, others, frozenset(http)
    )


def this_turn(
    chat_log: conversation.ChatLog,
) -> tuple[str, list[conversation.Content]]:
    """This turn's user message, and what came after it (in order)."""
    contents = chat_log.content
    for index in range(len(contents) - 1, -1, -1):
        if isinstance(user := contents[index], conversation.UserContent):
            return user.content, contents[index + 1 :]
    return "", list(contents)


def tool_result_text(result: llm.ToolResult) -> str:
    """Return what the model reads for a tool result.

    An HTTP tool's result is the engine's text (or its `Error: …` text) as is;
    other tools' results are JSON, as Home Assistant's own agents send them.
    """
    data = result.data
    text = data.get(RESULT_KEY)
    if isinstance(text, str) and len(data) == 1:
        return text
    return json_dumps(data)


def system_message(text: str) -> ChatCompletionSystemMessageParam:
    """A system message."""
    return ChatCompletionSystemMessageParam(role="system", content=text)


def tool_message(
    content: conversation.ToolResultContent,
) -> ChatCompletionToolMessageParam:
    """A tool result message."""
    return ChatCompletionToolMessageParam(
        role="tool",
        tool_call_id=content.tool_call_id,
        content=tool_result_text(content.result),
    )


def _tool_call(call: llm.ToolInput) -> ChatCompletionMessageFunctionToolCallParam:
    return ChatCompletionMessageFunctionToolCallParam(
        id=call.id,
        type="function",
        function=Function(name=call.tool_name, arguments=json_dumps(call.tool_args)),
    )


def _assistant(
    text: str, calls: list[llm.ToolInput]
) -> ChatCompletionAssistantMessageParam:
    message = ChatCompletionAssistantMessageParam(role="assistant", content=text)
    if calls:
        message["tool_calls"] = [_tool_call(call) for call in calls]
    return message


def chat_messages(
    contents: Sequence[conversation.Content],
    note: Callable[[conversation.UserContent], str],
) -> list[ChatCompletionMessageParam]:
    """Convert chat log content, leaving out what carries nothing.

    Each user message gets its `note` (the prompt template's lines that use
    `now()`, rendered when it was asked: `prompt`), so the prompt's
    start stays the same from turn to turn. Several calls of one reply become
    one call per assistant message, each followed by its result: Llama 3's
    templates refuse more than one call in a message.
    """
    messages: list[ChatCompletionMessageParam] = []
    results = {
        c.tool_call_id: c
        for c in contents
        if isinstance(c, conversation.ToolResultContent)
    }
    answered: set[str] = set()
    for content in contents:
        if isinstance(content, conversation.SystemContent):
            messages.append(system_message(content.content))
        elif isinstance(content, conversation.UserContent):
            text = content.content
            if extra := note(content):
                text = f"{extra}\n\n{text}"
            messages.append(ChatCompletionUserMessageParam(role="user", content=text))
        elif isinstance(content, conversation.ToolResultContent):
            if content.tool_call_id not in answered:
                messages.append(tool_message(content))
        elif content.tool_calls and len(content.tool_calls) > 1:
            text = content.content or ""
            for call in content.tool_calls:
                messages.append(_assistant(text, [call]))
                text = ""
                if (result := results.get(call.id)) is not None:
                    messages.append(tool_message(result))
                    answered.add(call.id)
        elif isinstance(content.native, AgentWords):
            _add_agent_words(messages, content.native)
        elif content.content or content.tool_calls:
            # A reply that produced nothing is left out: servers reject it.
            messages.append(
                _assistant(content.content or "", list(content.tool_calls or ()))
            )
    return messages


def _add_agent_words(
    messages: list[ChatCompletionMessageParam], words: AgentWords
) -> None:
    """What stands for the agent's own words in a request (`AgentWords`)."""
    if words.history:
        messages.append(_assistant(words.history, []))
        return
    if messages and messages[-1]["role"] == "user":
        # A turn that made no call and got no answer of the model's: it
        # holds nothing to go on (and templates want user, assistant, user).
        messages.pop()
