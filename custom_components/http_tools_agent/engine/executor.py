"""Run a tool call with aiohttp and turn the outcome into text for the model.

:func:`run_tool` never raises (except :class:`asyncio.CancelledError`): every
failure becomes one of these error texts (docs/tool-format.md, "What the
model receives")::

    Error: invalid HTTP method '<method>' for tool '<name>'
    Error: HTTP <status> — <body>
    Error: tool request failed: <error>
    Error: step '<step>' failed: <one of the above>

plus the argument and secret errors of :mod:`.requests` and
``Error: host '<host>' is not allowed for tool '<name>'`` when a host policy
refuses the request. Finding the tool a call names is the caller's business
(and so is ``Error: unknown tool``). It runs a composite tool's steps in
order (:mod:`.steps`), reads each body by its content type and shapes the
answer (:mod:`.responses`), renders the tool's own sentence (:mod:`.speech`),
bounds the time, the bytes read and the text returned, follows redirects on
the same host only, and never lets a header value into an error text nor a
secret into any text (a server that echoes a secret back has it replaced by
``***``). The rules are in ``docs/tool-format.md`` ("What the model
receives").
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
import math
import time
from typing import Any

import aiohttp
from yarl import URL

from .bodies import Body, BodyKind, error_page_summary, read_body
from .definitions import ToolDefinition
from .fields import http_method
from .hosts import HostPolicy
from .paths import MISSING
from .requests import (
    RequestBuildError,
    build_request,
    check_arguments_present,
)
from .shapes import apply_shape, nothing_at, shaped_text
from .speech import render_speech
from .steps import Step, step_failed
from .transport import Limits, Response, send

DEFAULT_TIMEOUT = 15.0
DEFAULT_MAX_CHARS = 2000
DEFAULT_MAX_BYTES = 1_048_576
TRUNCATION_SUFFIX = "… [truncated]"
_MIN_SECRET_LENGTH = 3


class Outcome(StrEnum):
    """What became of one request: callers decide by this, never by the
    wording of `ToolRunResult.text`."""

    DONE = "done"  # the service answered with a 2xx status
    HTTP_ERROR = "http_error"  # it answered with another status
    UNREACHABLE = "unreachable"  # no answer: connection, TLS, timeout
    # Nothing was sent: the arguments or the request are invalid, or the
    # host policy does not allow its host.
    NOT_SENT = "not_sent"


@dataclass(frozen=True, slots=True)
class ToolRunResult:
    """Outcome of one tool call."""

    tool: str
    text: str
    ok: bool
    method: str | None
    status: int | None
    truncated: bool
    duration: float
    error: str | None
    bytes_read: int = 0
    outcome: Outcome = Outcome.NOT_SENT
    # The tool's own sentence (its `speech` over the shaped result), when it
    # has one and every field it names was there; None: let the model answer.
    speech: str | None = None
    # The media type of the body the text comes from (`image/jpeg`...).
    content_type: str | None = None
    # The step of a composite tool that failed.
    step: str | None = None


def truncate(text: str, max_chars: int) -> tuple[str, bool]:
    """Cut ``text`` to ``max_chars`` characters, suffix included."""
    if len(text) <= max_chars:
        return text, False
    keep = max(max_chars - len(TRUNCATION_SUFFIX), 0)
    return text[:keep] + TRUNCATION_SUFFIX, True


def _mark_truncated(text: str, max_chars: int) -> str:
    """Add the suffix to ``text`` (already short enough), keeping the limit."""
    keep = max(min(len(text), max_chars - len(TRUNCATION_SUFFIX)), 0)
    return text[:keep] + TRUNCATION_SUFFIX


def _format_seconds(seconds: float) -> str:
    return f"{seconds:g}"


def _scrub(
    message: str, headers: Mapping[str, str], secrets: tuple[str, ...] = ()
) -> str:
    """Remove every header value and secret from ``message``."""
    return _hide(message, (*headers.values(), *secrets))


def _hide(text: str, values: tuple[str, ...]) -> str:
    """Replace each of ``values`` (longest first) in ``text`` with ``***``."""
    for value in sorted(values, key=len, reverse=True):
        if len(value) >= _MIN_SECRET_LENGTH:
            text = text.replace(value, "***")
    return text


def _describe(err: BaseException) -> str:
    text = str(err).strip()
    if isinstance(err, aiohttp.ClientConnectorCertificateError):
        cert = err.certificate_error
        why = getattr(cert, "verify_message", None) or str(cert)
        return (
            f"the TLS certificate of {err.host}:{err.port} is not trusted ({why}); "
            'for a device with its own certificate, set "verify_ssl": false '
            "on the tool"
        )
    if isinstance(err, aiohttp.InvalidURL):
        return f"invalid URL {text}".strip()
    if isinstance(err, aiohttp.NonHttpUrlClientError):
        return f"not an http or https URL {text}".strip()
    return text or type(err).__name__


@dataclass(slots=True)
class _Failure(Exception):
    """A step that failed: what the model reads, and how it ended."""

    text: str
    reason: str
    outcome: Outcome
    status: int | None = None
    method: str | None = None
    capped: bool = False
    content_type: str | None = None


@dataclass(slots=True)
class _Call:
    """What one call's steps gave so far."""

    # Each step's JSON (MISSING: none), for the later steps' references.
    earlier: dict[str, Any]
    # Each step's JSON or text, for a shape over the steps.
    document: dict[str, Any]
    secrets: list[str]
    bytes_read: int = 0


async def _run_step(
    session: aiohttp.ClientSession,
    definition: ToolDefinition,
    step: Step,
    arguments: Mapping[str, Any],
    secrets: Mapping[str, str] | None,
    hosts: HostPolicy | None,
    call: _Call,
    seconds: float,
    limits: Limits,
) -> tuple[Response, Body, str]:
    """Send one step; raise :class:`_Failure` with the single request's text."""
    method = http_method(step.method)
    try:
        prepared = build_request(
            definition, arguments, secrets, step=step, earlier=call.earlier
        )
    except RequestBuildError as err:
        raise _Failure(err.text, err.reason, Outcome.NOT_SENT, method=method) from None
    except Exception as err:  # a definition built by hand
        reason = f"cannot build the request: {type(err).__name__}"
        raise _Failure(
            f"Error: tool request failed: {reason}",
            reason,
            Outcome.NOT_SENT,
            method=method,
        ) from None
    call.secrets.extend(prepared.secret_values)
    if hosts is not None and not hosts.allows(host := URL(prepared.url).host):
        reason = f"host '{host}' is not allowed"
        raise _Failure(
            f"Error: {reason} for tool '{definition.name}'",
            reason,
            Outcome.NOT_SENT,
            method=method,
        )
    try:
        response = await send(
            session, prepared, seconds, limits, definition.verify_ssl is not False
        )
    except TimeoutError:
        raise
    except Exception as err:  # never raise: the model gets text
        reason = _scrub(_describe(err), prepared.headers, tuple(call.secrets))
        raise _Failure(
            f"Error: tool request failed: {reason}",
            reason,
            Outcome.UNREACHABLE,
            method=method,
        ) from None
    call.bytes_read += response.counted
    # A server that echoes the request (httpbin...) must not hand the model
    # a secret.
    hidden = tuple(call.secrets)
    body = read_body(
        response.data,
        response.content_type,
        response.charset,
        complete=not response.capped,
        counted=response.counted,
        length=response.length,
        hide=lambda text: _hide(text, hidden),
    )
    status = response.status
    if not 200 <= status < 300:
        reason = f"HTTP {status}"
        if response.note:
            reason += f" ({response.note})"
        raise _Failure(
            f"Error: HTTP {status} \u2014 {_error_text(body)}",
            reason,
            Outcome.HTTP_ERROR,
            status=status,
            method=method,
            capped=response.capped and body.kind is not BodyKind.BINARY,
            content_type=body.media_type or None,
        )
    return response, body, method or step.method


def _error_text(body: Body) -> str:
    """What the model reads of an error's body: an HTML page summarised."""
    if body.kind is BodyKind.HTML:
        return error_page_summary(body.text)
    return body.text


def _answer(
    definition: ToolDefinition,
    body: Body,
    status: int,
    document: dict[str, Any],
    time_zone: str | None,
) -> tuple[str, str | None]:
    """(what the model reads, the tool's own sentence) of a call that ran."""
    shape = definition.response
    value: Any = body.value if body.value is not MISSING else body.text
    text = body.text if body.kind is not BodyKind.EMPTY else f"HTTP {status}"
    if shape is not None:
        source: Any = document if definition.steps else body.value
        if source is not MISSING:
            shaped = apply_shape(source, shape, time_zone)
            if shaped is MISSING:
                return nothing_at(shape, body), None
            value, text = shaped, shaped_text(shaped)
    speech = render_speech(definition.speech, value) if definition.speech else None
    return text, speech


async def run_tool(
    session: aiohttp.ClientSession,
    definition: ToolDefinition,
    arguments: Mapping[str, Any],
    *,
    timeout: float = DEFAULT_TIMEOUT,  # noqa: ASYNC109  (public interface)
    max_chars: int = DEFAULT_MAX_CHARS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    secrets: Mapping[str, str] | None = None,
    hosts: HostPolicy | None = None,
    time_zone: str | None = None,
) -> ToolRunResult:
    """Run ``definition`` with ``arguments``; every failure becomes text.

    ``secrets`` fill the definition's ``{secret:name}`` references; ``hosts``
    (default: any host) limits the hosts the request may reach;
    ``max_chars`` bounds the text unless the tool's ``response`` sets its
    own; ``time_zone`` is where a shape's times are said when it names none
    (default UTC).
    """
    started = time.monotonic()
    shape = definition.response
    if shape is not None and shape.max_chars is not None:
        max_chars = shape.max_chars
    max_chars = max(int(max_chars), 1)
    call = _Call({}, {}, [])

    def finish(
        text: str,
        *,
        error: str | None,
        outcome: Outcome = Outcome.NOT_SENT,
        method: str | None = None,
        status: int | None = None,
        ok: bool = False,
        capped: bool = False,
        speech: str | None = None,
        content_type: str | None = None,
        step: str | None = None,
    ) -> ToolRunResult:
        hidden = tuple(call.secrets)
        text = _hide(text, hidden)
        shown, truncated = truncate(text, max_chars)
        if capped and not truncated:
            shown, truncated = _mark_truncated(text, max_chars), True
        return ToolRunResult(
            tool=definition.name,
            text=shown,
            ok=ok,
            method=method,
            status=status,
            truncated=truncated,
            duration=time.monotonic() - started,
            error=error,
            bytes_read=call.bytes_read,
            outcome=outcome,
            speech=_hide(speech, hidden) if speech else None,
            content_type=content_type,
            step=step,
        )

    # Reported with the outcome; build_request refuses an invalid one.
    method = http_method(definition.method)
    steps = definition.requests
    if definition.steps and isinstance(arguments, Mapping):
        try:
            check_arguments_present(definition, arguments)
        except RequestBuildError as err:
            return finish(
                err.text, method=http_method(steps[0].method), error=err.reason
            )

    seconds = definition.timeout if definition.timeout is not None else timeout
    if (
        not isinstance(seconds, (int, float))
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
        seconds = DEFAULT_TIMEOUT
    text_limit = max(min(int(max_bytes), 4 * max_chars + 16), 0)
    limits = Limits(
        text_limit,
        max(int(max_bytes), 0),
        shaped=shape is not None or bool(definition.steps),
    )
    current = steps[0]
    try:
        async with asyncio.timeout(seconds):
            for current in steps:
                response, body, method = await _run_step(
                    session,
                    definition,
                    current,
                    arguments,
                    secrets,
                    hosts,
                    call,
                    seconds,
                    limits,
                )
                call.earlier[current.name] = body.value
                call.document[current.name] = (
                    body.value if body.value is not MISSING else body.text
                )
    except TimeoutError:
        reason = f"timeout after {_format_seconds(seconds)} s"
        text = f"Error: tool request failed: {reason}"
        return finish(
            step_failed(current.name, text) if definition.steps else text,
            method=http_method(current.method),
            error=reason,
            outcome=Outcome.UNREACHABLE,
            step=current.name if definition.steps else None,
        )
    except _Failure as failure:
        named = definition.steps and failure.text.startswith("Error: ")
        text = failure.text
        if named and not text.startswith("Error: step '"):
            text = step_failed(current.name, text)
        return finish(
            text,
            method=failure.method,
            status=failure.status,
            error=failure.reason,
            outcome=failure.outcome,
            capped=failure.capped,
            content_type=failure.content_type,
            step=current.name if definition.steps else None,
        )
    text, speech = _answer(definition, body, response.status, call.document, time_zone)
    return finish(
        text,
        ok=True,
        error=None,
        outcome=Outcome.DONE,
        method=method,
        status=response.status,
        capped=response.capped and body.kind is not BodyKind.BINARY,
        speech=speech,
        content_type=body.media_type or None,
    )
