"""The openai client of an entry, its completions and the checks of its server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping
from dataclasses import dataclass
import json
from typing import Any, cast

from homeassistant.const import CONF_API_KEY
from homeassistant.core import HomeAssistant
from homeassistant.helpers.httpx_client import get_async_client
import httpx
import httpx2
import openai
from openai.types.chat.completion_create_params import CompletionCreateParamsBase
from yarl import URL

from ..const import CONF_BASE_URL, PLACEHOLDER_API_KEY, SERVER_CHECK_TIMEOUT
from .errors import UNAVAILABLE_STATUSES

# A local model on a CPU can take a while; a voice user should not wait for
# ten minutes (the SDK default) before hearing an error.
LLM_REQUEST_TIMEOUT = 120.0
# After `[DONE]` only the end of the body should follow.
_AFTER_DONE_TIMEOUT = 1.0


def request_chars(messages: Iterable[Any], tools: Iterable[Any]) -> int:
    """The size of what the model reads as words, in characters (an image's
    base64 is no words: the server reads it as an image)."""
    words = [_without_images(message) for message in messages]
    return len(json.dumps([words, list(tools)], ensure_ascii=False))


def _without_images(message: Any) -> Any:
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, list):
        return message
    parts = [p for p in content if not (isinstance(p, Mapping) and "image_url" in p)]
    return {**message, "content": parts}


@dataclass(slots=True)
class Request:
    """One request: typed params and the agent's extra fields."""

    params: CompletionCreateParamsBase
    extra_body: dict[str, Any]
    # Images it carries: the server counts their tokens its own way, so such
    # a request does not calibrate the token estimate.
    images: int = 0

    @property
    def chars(self) -> int:
        """The size of messages and tools, to calibrate the token estimate
        (only when the server reports tokens: serialising is not free)."""
        return request_chars(self.params["messages"], self.params.get("tools", []))


class ServerCheckError(Exception):
    """The server cannot be used; `reason` is a config flow error key."""

    def __init__(self, reason: str) -> None:
        """Store the reason."""
        super().__init__(reason)
        self.reason = reason


async def async_create_client(
    hass: HomeAssistant, data: Mapping[str, Any]
) -> openai.AsyncOpenAI:
    """Create the OpenAI SDK client for an entry's server."""
    client = openai.AsyncOpenAI(
        api_key=data.get(CONF_API_KEY) or PLACEHOLDER_API_KEY,
        base_url=data[CONF_BASE_URL],
        timeout=LLM_REQUEST_TIMEOUT,
        # One retry covers a dropped keep-alive connection; more would keep a
        # voice user waiting on a server that is down.
        max_retries=1,
        # HA's shared client is an httpx client the SDK drives as its own.
        http_client=cast(Any, get_async_client(hass)),
    )
    # Reads platform details from disk once; keep that off the event loop.
    await hass.async_add_executor_job(client.platform_headers)
    return client


async def async_list_models(
    client: openai.AsyncOpenAI, seconds: float = SERVER_CHECK_TIMEOUT
) -> list[str]:
    """List the server's model ids, raising ServerCheckError with a reason."""
    return [str(model["id"]) for model in await async_model_entries(client, seconds)]


async def async_model_entries(
    client: openai.AsyncOpenAI, seconds: float = SERVER_CHECK_TIMEOUT
) -> list[dict[str, Any]]:
    """The server's model list as it sent it (with fields beyond the
    standard, e.g. vLLM's `max_model_len`); ServerCheckError with a reason."""
    try:
        page = await client.with_options(timeout=seconds, max_retries=0).models.list()
        models = [model.to_dict() async for model in page]
    except openai.AuthenticationError as err:
        raise ServerCheckError("invalid_auth") from err
    except openai.PermissionDeniedError as err:
        raise ServerCheckError("invalid_auth") from err
    except openai.APIConnectionError as err:
        raise ServerCheckError("cannot_connect") from err
    except openai.APIStatusError as err:
        if err.status_code in UNAVAILABLE_STATUSES:
            # Up, but not ready (llama.cpp loading its model) or behind a
            # gateway whose backend is down.
            raise ServerCheckError("cannot_connect") from err
        # 404 and friends: something answers, but not the OpenAI API.
        raise ServerCheckError("not_openai_compatible") from err
    except openai.APIResponseValidationError as err:
        raise ServerCheckError("not_openai_compatible") from err
    except (ValueError, TypeError, AttributeError, httpx.HTTPError) as err:
        raise ServerCheckError("not_openai_compatible") from err
    return [m for m in models if isinstance(m.get("id"), str)]


async def async_connect(
    hass: HomeAssistant, data: Mapping[str, Any]
) -> openai.AsyncOpenAI:
    """Return the client for entry data; ServerCheckError when its URL is unusable."""
    try:
        url = URL(data[CONF_BASE_URL])
        valid = url.scheme in ("http", "https") and bool(url.host)
    except ValueError:
        valid = False
    if not valid:
        raise ServerCheckError("invalid_url")
    try:
        return await async_create_client(hass, data)
    except (ValueError, httpx.InvalidURL, httpx2.InvalidURL) as err:
        # What yarl accepts, the SDK's URL parser may still refuse.
        raise ServerCheckError("invalid_url") from err


async def async_check_server(hass: HomeAssistant, data: Mapping[str, Any]) -> list[str]:
    """Connect with entry data and list the models."""
    return await async_list_models(await async_connect(hass, data))


async def async_check_server_entries(
    hass: HomeAssistant, data: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """Connect with entry data and return the model list as sent."""
    return await async_model_entries(await async_connect(hass, data))


async def _server_sent_data(lines: AsyncIterator[str]) -> AsyncGenerator[str]:
    """The `data` of each server-sent event (the SSE format, as the SDK reads it)."""
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield "\n".join(data)
                data = []
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value.removeprefix(" "))


async def async_stream_completion(
    client: openai.AsyncOpenAI,
    params: CompletionCreateParamsBase,
    extra_body: Mapping[str, Any] | None = None,
) -> AsyncGenerator[Any]:
    """Stream a chat completion; yield each chunk as decoded JSON.

    The SDK sends the request (its `post`, with its retries, timeout and
    status errors); `params` are already what the server reads (built from
    JSON), so the SDK's per-request transform of the typed params, a third
    of a turn's own CPU time with six tools offered, is left out. The events
    are read here to the end of the body (the SDK stops at `[DONE]`, which
    makes its HTTP client drop the connection), so the next request reuses
    the connection: no new TCP (or TLS) handshake per round. An `error`
    event raises `openai.APIError`; text that is not JSON raises
    `json.JSONDecodeError`. `extra_body`: fields merged into the request's
    JSON (the agent's own).
    """
    # Cast to its HTTP response type, the SDK hands back the response unread.
    response = cast(
        httpx2.Response,
        await client.post(
            "/chat/completions",
            cast_to=httpx2.Response,
            body={**params, "stream": True, **(extra_body or {})},
            stream=True,
            stream_cls=openai.AsyncStream[httpx2.Response],
        ),
    )
    try:
        done = False
        try:
            async with asyncio.timeout(None) as deadline:
                async for data in _server_sent_data(response.aiter_lines()):
                    if done:
                        continue
                    if data.startswith("[DONE]"):
                        done = True
                        loop = asyncio.get_running_loop()
                        deadline.reschedule(loop.time() + _AFTER_DONE_TIMEOUT)
                        continue
                    chunk = json.loads(data)
                    if isinstance(chunk, dict) and (error := chunk.get("error")):
                        message = (
                            error.get("message") if isinstance(error, dict) else None
                        )
                        raise openai.APIError(
                            message=str(message or error),
                            request=response.request,
                            body=error,
                        )
                    yield chunk
        except TimeoutError:
            if not done:
                raise
            # A body left open after `[DONE]`: the connection is closed.
    finally:
        await response.aclose()


async def async_complete(
    client: openai.AsyncOpenAI,
    params: CompletionCreateParamsBase,
    extra_body: Mapping[str, Any] | None = None,
) -> Any:
    """Ask for a whole chat completion; return it as decoded JSON."""
    response = await client.chat.completions.with_raw_response.create(
        **params, stream=False, extra_body=dict(extra_body) if extra_body else None
    )
    return json.loads(response.text)
