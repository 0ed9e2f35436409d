"""Run a tool call with aiohttp and turn the outcome into text for the model.

:func:`run_tool` never raises (except :class:`asyncio.CancelledError`): every
failure becomes one of these error texts (docs/tool-format.md, "What the
model receives")::

    Error: invalid HTTP method '<method>' for tool '<name>'
    Error: HTTP <status> — <body>
    Error: tool request failed: <error>
    Error: step '<step>' failed: <one of the above>
    Error: step '<step>' was not sent: step '<earlier>' gave no '<path>'. What ...

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
from functools import partial
import math
import time
from typing import Any

import aiohttp

from .auth import TokenSource
from .bodies import Body, BodyKind, Picture, size_words
from .call_steps import Call, Outcome, StepFailure, hide, run_steps
from .definitions import ToolDefinition
from .fields import http_method
from .hosts import HostPolicy
from .pages import Paged, first_items, paged_answer, read_pages
from .paths import MISSING
from .requests import RequestBuildError, check_arguments_present
from .retries import RETRY_DELAYS
from .sessions import SessionStore
from .shapes import ResponseShape, nothing_at, shape_answer, shaped_text
from .speech import render_speech
from .steps import Step, step_failed
from .stream_shape import StreamShaper
from .transport import Limits, Response

__all__ = ["Outcome", "ToolRunResult", "run_tool", "truncate"]

DEFAULT_TIMEOUT = 15.0
DEFAULT_MAX_CHARS = 2000
DEFAULT_MAX_BYTES = 1_048_576
TRUNCATION_SUFFIX = "… [truncated]"


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
    # How many requests were sent again after a busy answer (429, 503) or a
    # dropped connection (`engine/retries.py`).
    retries: int = 0
    # The answer's image, whole (JPEG or PNG, within the byte cap), when
    # the run was asked to keep pictures: `text` still describes it.
    picture: Picture | None = None


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


def too_large(why: str, max_bytes: int) -> str:
    """The one line a model reads of an answer it cannot be given shaped."""
    return (
        f"Error: the answer is too large to shape (more than "
        f"{size_words(max_bytes)}): {why}"
    )


def _answer(
    definition: ToolDefinition,
    body: Body,
    response: Response,
    call: Call,
    time_zone: str | None,
    paged: Paged | None = None,
) -> tuple[str, str | None, bool]:
    """(what the model reads, the tool's own sentence, whether it has the
    answer) of a call that ran."""
    if paged is not None:
        kept, text = paged_answer(paged)
        # A sentence over part of the list would say it as the whole: the
        # model (or the read-out) says where it stopped.
        said = definition.speech if paged.whole else None
        return text, render_speech(said, kept) if said else None, True
    shape = definition.response
    status = response.status
    streamed = response.streamed
    if shape is not None and isinstance(streamed, StreamShaper):
        answer = streamed.answer()
        if answer is None:
            why = streamed.failure or "it could not be read"
            return too_large(why, call.limits.whole), None, False
        shaped, text = answer
        speech = render_speech(definition.speech, shaped) if definition.speech else None
        return text, speech, True
    if shape is not None and call.cut_json:
        why = (
            "a shape over several steps reads each answer whole"
            if definition.steps
            else "a paged tool reads each page whole"
            if definition.pages
            else "it was cut at the byte cap"
        )
        return too_large(why, call.limits.whole), None, False
    value: Any = body.value if body.value is not MISSING else body.text
    text = body.text if body.kind is not BodyKind.EMPTY else f"HTTP {status}"
    if shape is not None:
        source: Any = call.document if definition.steps else body.value
        if source is not MISSING:
            answer = shape_answer(source, shape, time_zone)
            if answer is None:
                return nothing_at(shape, body), None, True
            value, text = answer
    speech = render_speech(definition.speech, value) if definition.speech else None
    return text, speech, True


def _before(
    definition: ToolDefinition, document: dict[str, Any], time_zone: str | None
) -> str:
    """What the steps that ran gave, shaped when the shape finds any of it
    (a search's documents are not lost to the step after it)."""
    if definition.response is not None:
        answer = shape_answer(document, definition.response, time_zone)
        if answer is not None and answer[0] not in ({}, []):
            return answer[1]
    return shaped_text(document)


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
    sessions: SessionStore | None = None,
    retry_delays: tuple[float, ...] = RETRY_DELAYS,
    pictures: bool = False,
    tokens: TokenSource | None = None,
) -> ToolRunResult:
    """Run ``definition`` with ``arguments``; every failure becomes text.

    ``secrets`` fill the definition's ``{secret:name}`` references; ``hosts``
    (default: any host) limits the hosts the request may reach;
    ``max_chars`` bounds the text unless the tool's ``response`` sets its
    own; ``time_zone`` is where a shape's times are said when it names none
    (default UTC); ``sessions`` keeps the tool's login for the calls after
    this one (None: a login step runs on every call); ``retry_delays`` are
    the pauses before each new try of a request that may be repeated (its
    count is how many new tries at most); ``pictures``: a JPEG or PNG answer
    read whole (at most ``max_bytes``) comes back as the result's
    ``picture`` too, for a model that reads images; ``tokens`` gives the
    access token of each sign-in an oauth2 ``auth`` names (None: none is
    set up).
    """
    started = time.monotonic()
    shape = definition.response
    if shape is not None and shape.max_chars is not None:
        max_chars = shape.max_chars
    max_chars = max(int(max_chars), 1)
    seconds = definition.timeout if definition.timeout is not None else timeout
    if (
        not isinstance(seconds, (int, float))
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
        seconds = DEFAULT_TIMEOUT
    text_limit = max(min(int(max_bytes), 4 * max_chars + 16), 0)
    overflow = None
    # A page is read whole: the next page's link may follow its list.
    if shape is not None and not definition.steps and definition.pages is None:
        overflow = partial(StreamShaper, shape, time_zone)
    limits = Limits(
        text_limit,
        max(int(max_bytes), 0),
        shaped=shape is not None or bool(definition.steps) or bool(definition.pages),
        overflow=overflow,
        pictures=pictures,
    )
    call = Call(
        session,
        definition,
        arguments,
        secrets,
        hosts,
        seconds,
        limits,
        sessions,
        deadline=asyncio.get_running_loop().time() + seconds,
        retry_delays=tuple(retry_delays),
        token_source=tokens,
    )

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
        picture: Picture | None = None,
    ) -> ToolRunResult:
        hidden = tuple(call.secrets)
        text = hide(text, hidden)
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
            speech=hide(speech, hidden) if speech else None,
            content_type=content_type,
            step=step,
            retries=call.retries,
            picture=picture,
        )

    steps = definition.requests
    if definition.steps and isinstance(arguments, Mapping):
        try:
            check_arguments_present(definition, arguments)
        except RequestBuildError as err:
            return finish(
                err.text, method=http_method(steps[0].method), error=err.reason
            )
    current = steps[0]

    def starting(step: Step) -> None:
        nonlocal current
        current = step

    try:
        async with asyncio.timeout(seconds):
            response, body, method = await run_steps(call, starting)
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
    except StepFailure as failure:
        named = definition.steps and failure.text.startswith("Error: ")
        text = failure.text
        if named and not text.startswith("Error: step '"):
            text = step_failed(current.name, text)
        if failure.unbuilt and call.document:
            text += f". What the steps before it gave: {_before(definition, call.document, time_zone)}"
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
    paged = None
    if definition.pages is not None and not call.cut_json and call.sent is not None:
        items = first_items(body, shape or ResponseShape())
        if items is not None:
            paged = await read_pages(call, call.sent, response, body, items, time_zone)
    text, speech, whole = _answer(definition, body, response, call, time_zone, paged)
    return finish(
        text,
        ok=whole,
        error=None if whole else text.removeprefix("Error: "),
        outcome=Outcome.DONE,
        method=method,
        status=response.status,
        capped=whole and response.capped and body.kind is not BodyKind.BINARY,
        speech=speech,
        content_type=body.media_type or None,
        picture=body.picture if whole else None,
    )
