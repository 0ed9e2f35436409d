"""Home Assistant chat log content -> OpenAI chat-completions request parts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from homeassistant.components import conversation
from homeassistant.helpers import llm
from homeassistant.helpers.json import json_dumps
import probatio

from .llm_api import RESULT_KEY, HttpTool


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


def openai_tools(
    llm_api: llm.APIInstance,
) -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """Return the OpenAI `tools` array and each tool's schema by name."""
    tools: list[dict[str, Any]] = []
    schemas: dict[str, dict[str, Any]] = {}
    for tool in llm_api.tools:
        schema = tool_json_schema(tool, llm_api.custom_serializer)
        schemas[tool.name] = schema
        function: dict[str, Any] = {"name": tool.name, "parameters": schema}
        if tool.description:
            function["description"] = tool.description
        tools.append({"type": "function", "function": function})
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


def to_openai_message(content: conversation.Content) -> dict[str, Any] | None:
    """Convert one piece of chat log content to an OpenAI message."""
    if isinstance(content, conversation.ToolResultContent):
        return {
            "role": "tool",
            "tool_call_id": content.tool_call_id,
            "content": tool_result_text(content.result),
        }
    if isinstance(content, conversation.SystemContent):
        return {"role": "system", "content": content.content}
    if isinstance(content, conversation.UserContent):
        return {"role": "user", "content": content.content}
    if not content.content and not content.tool_calls:
        # A round that produced nothing usable; servers reject empty turns.
        return None
    message: dict[str, Any] = {"role": "assistant", "content": content.content or ""}
    if content.tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.tool_name,
                    "arguments": json_dumps(call.tool_args),
                },
            }
            for call in content.tool_calls
        ]
    return message


def to_openai_messages(chat_log: conversation.ChatLog) -> list[dict[str, Any]]:
    """Convert the whole chat log."""
    return [m for c in chat_log.content if (m := to_openai_message(c)) is not None]
