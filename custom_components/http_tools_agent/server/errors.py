"""LLM server failures -> translated Home Assistant errors.

During a turn the error is spoken; its class tells the agent what it means
for the server: gone (`ServerUnavailableError`: the agents show unavailable)
or refusing the key (`ServerAuthError`: re-authentication starts). At setup,
`raise_setup_error` gives the entry's state and the reason shown with it.
"""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
import json
import logging
import re
from typing import Any, NoReturn

from homeassistant.exceptions import (
    ConfigEntryAuthFailed,
    ConfigEntryError,
    ConfigEntryNotReady,
    HomeAssistantError,
)
import httpx
import httpx2
import openai

from ..const import DOMAIN, LOGGER

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
        # A page or a traceback, not a message: its first line says enough
        # (aiohttp's "500 Internal Server Error"), the rest is not speech.
        text = err.response.text or err.message
        message = next((line for line in text.splitlines() if line.strip()), "")
    return message.strip()[:MAX_MESSAGE_CHARS]


# Gateway statuses: the server (or the proxy before it) says it is not
# there right now, e.g. llama.cpp's 503 while it loads the model.
UNAVAILABLE_STATUSES = frozenset({502, 503, 504})


class MalformedResponse(Exception):
    """The server answered, but not with chat-completion objects."""


class ServerUnavailableError(HomeAssistantError):
    """The LLM server cannot be reached: down, timing out, or a gateway says so."""


class ServerAuthError(HomeAssistantError):
    """The LLM server refused the API key."""


# Context errors: llama.cpp (`exceed_context_size_error` with `n_ctx`),
# OpenAI, vLLM and llama-cpp-python ("maximum context length is N tokens").
_CONTEXT_RE = re.compile(
    r"maximum context length is (?P<ctx>\d+)"
    r"|exceeds the available context size \((?P<ctx2>\d+) tokens\)"
    r"|context window of (?P<ctx3>\d+)"
    r"|context_length_exceeded",
)
# The prompt's tokens, as each server words it (best first).
_PROMPT_RES = (
    re.compile(r"(\d+) in the messages"),
    re.compile(r"request \((\d+) tokens\)"),
    re.compile(r"messages resulted in (\d+) tokens"),
)


@dataclass(frozen=True, slots=True)
class ContextOverflow:
    """What a server's context error says (None: it does not say)."""

    n_ctx: int | None
    prompt_tokens: int | None


def context_overflow(message: str, body: object) -> ContextOverflow | None:
    """Read a server's error as a context overflow, or None when it is not."""
    error = body.get("error", body) if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("type") == "exceed_context_size_error":
        n_ctx, prompt = error.get("n_ctx"), error.get("n_prompt_tokens")
        return ContextOverflow(
            n_ctx if isinstance(n_ctx, int) else None,
            prompt if isinstance(prompt, int) else None,
        )
    if isinstance(error, dict) and error.get("code") == "context_length_exceeded":
        message = f"{message} context_length_exceeded"
    match = _CONTEXT_RE.search(message)
    if match is None:
        return None
    found = match.group("ctx") or match.group("ctx2") or match.group("ctx3")
    counts = (m.group(1) for r in _PROMPT_RES if (m := r.search(message)))
    count = next(counts, None)
    return ContextOverflow(int(found) if found else None, int(count) if count else None)


class ContextOverflowError(HomeAssistantError):
    """The request was longer than the server's context (`overflow` says
    what the server told of it); spoken as the server's error when it stays."""

    def __init__(self, overflow: ContextOverflow, **kwargs: Any) -> None:
        """Keep what the server said."""
        super().__init__(**kwargs)
        self.overflow = overflow


def _error(
    key: str, cls: type[HomeAssistantError] = HomeAssistantError, **placeholders: str
) -> HomeAssistantError:
    return cls(
        translation_domain=DOMAIN,
        translation_key=key,
        translation_placeholders=placeholders,
    )


def raise_setup_error(reason: str, url: str) -> NoReturn:
    """Raise what setting up an entry raises when its server check fails.

    `reason` is a `ServerCheckError` reason. A refused key starts
    re-authentication; a URL that can never work is a permanent error;
    anything else is retried by Home Assistant with a growing delay.
    """
    placeholders = {"url": url}
    if reason == "invalid_auth":
        raise ConfigEntryAuthFailed(
            translation_domain=DOMAIN,
            translation_key="setup_invalid_auth",
            translation_placeholders=placeholders,
        )
    if reason == "invalid_url":
        raise ConfigEntryError(
            translation_domain=DOMAIN,
            translation_key="setup_invalid_url",
            translation_placeholders=placeholders,
        )
    raise ConfigEntryNotReady(
        translation_domain=DOMAIN,
        translation_key="setup_not_openai_compatible"
        if reason == "not_openai_compatible"
        else "setup_cannot_connect",
        translation_placeholders=placeholders,
    )


@contextmanager
def llm_error_handler() -> Generator[None]:
    """Turn any failure talking to the LLM server into a readable error."""
    try:
        yield
    # A server that is gone or refuses the key is logged once by the agent
    # (availability, re-authentication), not at every turn.
    except openai.APITimeoutError as err:
        LOGGER.debug("LLM server timed out: %s", err)
        raise _error("timeout", ServerUnavailableError) from err
    except openai.APIConnectionError as err:
        LOGGER.debug("Cannot reach the LLM server: %s", err)
        raise _error(
            "cannot_connect", ServerUnavailableError, message=str(err.__cause__ or err)
        ) from err
    except openai.AuthenticationError as err:
        LOGGER.debug("LLM server refused the API key (HTTP %s)", err.status_code)
        raise _error("invalid_auth", ServerAuthError) from err
    except openai.APIStatusError as err:
        message = server_message(err)
        if err.status_code in (400, 413) and (
            overflow := context_overflow(message, err.body)
        ):
            LOGGER.debug("LLM server context exceeded: %s", message)
            raise ContextOverflowError(
                overflow,
                translation_domain=DOMAIN,
                translation_key="server_error",
                translation_placeholders={
                    "status": str(err.status_code),
                    "message": message,
                },
            ) from err
        unavailable = err.status_code in UNAVAILABLE_STATUSES
        LOGGER.log(
            logging.DEBUG if unavailable else logging.WARNING,
            "LLM server error HTTP %s: %s",
            err.status_code,
            message,
        )
        raise _error(
            "server_error",
            ServerUnavailableError if unavailable else HomeAssistantError,
            status=str(err.status_code),
            message=message,
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
