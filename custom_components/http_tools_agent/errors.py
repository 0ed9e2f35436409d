"""LLM server failures -> translated Home Assistant errors (spoken to the user)."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
import json

from homeassistant.exceptions import HomeAssistantError
import httpx
import httpx2
import openai

from .const import DOMAIN, LOGGER

# Longest server message we repeat to the user.
MAX_MESSAGE_CHARS = 300


def server_message(err: openai.APIStatusError) -> str:
    """Return the server's own error message, without the request details."""
    try:
        body = err.response.json()
    except ValueError:
        body = None
    message = ""
    if isinstance(body, dict):
        error = body.get("error", body)
        if isinstance(error, dict):
            message = str(error.get("message") or "")
        elif isinstance(error, str):
            message = error
        elif isinstance(body.get("detail"), str):
            message = body["detail"]
    if not message:
        message = err.response.text or err.message
    return message.strip()[:MAX_MESSAGE_CHARS]


class MalformedResponse(Exception):
    """The server answered, but not with chat-completion objects."""


def _error(key: str, **placeholders: str) -> HomeAssistantError:
    return HomeAssistantError(
        translation_domain=DOMAIN,
        translation_key=key,
        translation_placeholders=placeholders,
    )


@contextmanager
def llm_error_handler() -> Generator[None]:
    """Turn any failure talking to the LLM server into a readable error."""
    try:
        yield
    except openai.APITimeoutError as err:
        LOGGER.warning("LLM server timed out: %s", err)
        raise _error("timeout") from err
    except openai.APIConnectionError as err:
        LOGGER.warning("Cannot reach the LLM server: %s", err)
        raise _error("cannot_connect", message=str(err.__cause__ or err)) from err
    except openai.AuthenticationError as err:
        LOGGER.warning("LLM server refused the API key (HTTP %s)", err.status_code)
        raise _error("invalid_auth") from err
    except openai.APIStatusError as err:
        message = server_message(err)
        LOGGER.warning("LLM server error HTTP %s: %s", err.status_code, message)
        raise _error(
            "server_error", status=str(err.status_code), message=message
        ) from err
    except openai.OpenAIError as err:
        # Includes an error event inside a stream.
        LOGGER.warning("LLM server error: %s", err)
        raise _error(
            "server_error", status="-", message=str(err)[:MAX_MESSAGE_CHARS]
        ) from err
    except (httpx.HTTPError, httpx2.HTTPError) as err:
        # The SDK does not wrap errors raised while a stream is being read.
        LOGGER.warning("LLM stream interrupted: %r", err)
        raise _error("stream_interrupted") from err
    except (json.JSONDecodeError, UnicodeDecodeError, MalformedResponse) as err:
        LOGGER.warning("LLM server sent malformed data: %s", err)
        raise _error("malformed_response") from err
