"""Home Assistant chat log content -> typed OpenAI chat-completions params."""

from __future__ import annotations

from collections.abc import Callable, Iterable
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

from .llm_api import RESULT_KEY, HttpTool

type ToolSchemas = dict[str, dict[str, Any]]


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


def chat_tools(
    llm_api: llm.APIInstance,
) -> tuple[list[ChatCompletionFunctionToolParam], ToolSchemas]:
    """Return the `tools` array and each tool's parameters schema by name."""
    tools: list[ChatCompletionFunctionToolParam] = []
    schemas: ToolSchemas = {}
    for tool in llm_api.tools:
        schema = tool_json_schema(tool, llm_api.custom_serializer)
        schemas[tool.name] = schema
        function = FunctionDefinition(name=tool.name, parameters=schema)
        if tool.description:
            function["description"] = tool.description
        tools.append(
            ChatCompletionFunctionToolParam(type="function", function=function)
        )
    return tools, schemas


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


def chat_message(content: conversation.Content) -> ChatCompletionMessageParam | None:
    """Convert one piece of chat log content to a message."""
    if isinstance(content, conversation.ToolResultContent):
        return ChatCompletionToolMessageParam(
            role="tool",
            tool_call_id=content.tool_call_id,
            content=tool_result_text(content.result),
        )
    if isinstance(content, conversation.SystemContent):
        return system_message(content.content)
    if isinstance(content, conversation.UserContent):
        return ChatCompletionUserMessageParam(role="user", content=content.content)
    if not content.content and not content.tool_calls:
        # A round that produced nothing usable; servers reject empty turns.
        return None
    message = ChatCompletionAssistantMessageParam(
        role="assistant", content=content.content or ""
    )
    if content.tool_calls:
        message["tool_calls"] = [
            ChatCompletionMessageFunctionToolCallParam(
                id=call.id,
                type="function",
                function=Function(
                    name=call.tool_name, arguments=json_dumps(call.tool_args)
                ),
            )
            for call in content.tool_calls
        ]
    return message


def chat_messages(
    contents: Iterable[conversation.Content],
) -> list[ChatCompletionMessageParam]:
    """Convert chat log content, leaving out what carries nothing."""
    return [m for c in contents if (m := chat_message(c)) is not None]
