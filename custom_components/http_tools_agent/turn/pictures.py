"""A tool's image, given to a model that reads images.

A chat-completions tool message carries text only (OpenAI's API and the
servers' chat templates), so the images of a round's results go in one
user message after them: words naming the tool, then each image as an
`image_url` part with a data URL (`data:image/jpeg;base64,…`), the way core's
OpenAI and OpenRouter integrations send attachments. Only the request that
answers those results carries them: once the model has replied (the chat
log no longer ends with them), later requests and turns read the result's
description (`image/jpeg, 48 KB`) as a model that cannot see does.
"""

from __future__ import annotations

from collections.abc import Sequence

from homeassistant.components import conversation
from openai.types.chat import (
    ChatCompletionContentPartImageParam,
    ChatCompletionContentPartParam,
    ChatCompletionContentPartTextParam,
    ChatCompletionUserMessageParam,
)
from openai.types.chat.chat_completion_content_part_image_param import ImageURL

from ..engine.bodies import Picture
from ..tools.call_result import CallResult


def image_part(url: str) -> ChatCompletionContentPartImageParam:
    """An image content part (`url`: a data URL or an address)."""
    return ChatCompletionContentPartImageParam(
        type="image_url", image_url=ImageURL(url=url)
    )


def fresh_pictures(
    contents: Sequence[conversation.Content],
) -> list[tuple[str, Picture]]:
    """(tool name, picture) of the results the chat log ends with: the round
    the next request answers."""
    found: list[tuple[str, Picture]] = []
    for content in reversed(contents):
        if not isinstance(content, conversation.ToolResultContent):
            break
        result = content.result
        if isinstance(result, CallResult) and result.picture is not None:
            found.append((content.tool_name, result.picture))
    return found[::-1]


def pictures_message(
    pictures: Sequence[tuple[str, Picture]],
) -> ChatCompletionUserMessageParam:
    """The user message that shows the model the round's images, each after
    the words that say which tool's result it is."""
    parts: list[ChatCompletionContentPartParam] = []
    for tool, picture in pictures:
        parts.append(
            ChatCompletionContentPartTextParam(
                type="text", text=f"The image the tool {tool} returned:"
            )
        )
        parts.append(image_part(picture.data_url()))
    return ChatCompletionUserMessageParam(role="user", content=parts)
