"""The steps of one call, in order: each built, checked against the host
policy, sent and read (:func:`send_step`), the tool's login reused from its
:class:`~.sessions.SessionStore` or made and kept, and the steps after it run
again once, after a new login, when one of them is refused (401, 403). A
request that may be repeated is sent again when the server is busy or drops
the connection (:mod:`.retries`). The access tokens of the sign-ins the
steps name (oauth2) are asked for once, before the first step.
:mod:`.executor` turns the last answer into the model's text; every failure
here is a :class:`StepFailure` with the text a single request would give.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
import math
from typing import Any

import aiohttp
from yarl import URL

from .auth import SignInUnavailable, TokenSource
from .bodies import Body, BodyKind, error_page_summary, read_body
from .definitions import ToolDefinition
from .fields import http_method
from .hosts import HostPolicy
from .paths import MISSING
from .rendering import MissingStepValue
from .requests import PreparedRequest, RequestBuildError, build_request
from .retries import (
    BUSY_STATUSES,
    RETRY_DELAYS,
    dropped,
    pause,
    repeatable,
    retry_after,
)
from .session_field import REFUSED_STATUSES
from .sessions import KeptLogin, SessionStore, login_key, new_jar
from .steps import Step, login_refused, login_step
from .transport import Limits, Response, send

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
    # Not sent: the user must sign in (again) to the service the tool's
    # oauth2 sign-in names.
    SIGNED_OUT = "signed_out"


def scrub(
    message: str, headers: Mapping[str, str], secrets: tuple[str, ...] = ()
) -> str:
    """Remove every header value and secret from ``message``."""
    return hide(message, (*headers.values(), *secrets))


def hide(text: str, values: tuple[str, ...]) -> str:
    """Replace each of ``values`` (longest first) in ``text`` with ``***``."""
    for value in sorted(values, key=len, reverse=True):
        if len(value) >= _MIN_SECRET_LENGTH:
            text = text.replace(value, "***")
    return text


def describe(err: BaseException) -> str:
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
class StepFailure(Exception):
    """A step that failed: what the model reads, and how it ended."""

    text: str
    reason: str
    outcome: Outcome
    status: int | None = None
    method: str | None = None
    capped: bool = False
    content_type: str | None = None
    # The step could not be built from what the earlier steps gave: their
    # answers are still worth reading.
    unbuilt: bool = False


@dataclass(slots=True)
class Call:
    """One call under way: what it runs with, and what its steps gave."""

    client: aiohttp.ClientSession
    definition: ToolDefinition
    arguments: Mapping[str, Any]
    # The caller's secrets, by name.
    secret_map: Mapping[str, str] | None
    hosts: HostPolicy | None
    seconds: float
    limits: Limits
    sessions: SessionStore | None = None
    # Each step's JSON (MISSING: none), its headers and cookies (`header:x`,
    # `cookie:x`), for the later steps' references.
    earlier: dict[str, Any] = field(default_factory=dict)
    # Each step's JSON or text, for a shape over the steps (never a login's).
    document: dict[str, Any] = field(default_factory=dict)
    # The values no text may show.
    secrets: list[str] = field(default_factory=list)
    bytes_read: int = 0
    # A JSON answer was cut at the byte cap (no shape can read it).
    cut_json: bool = False
    # The cookies the steps set, sent by the later ones (a kept login's jar
    # once it is reused).
    jar: aiohttp.CookieJar = field(default_factory=new_jar)
    # When the call's time is up (the event loop's clock; None: no bound),
    # the pauses between tries of a busy request, and how many were made.
    deadline: float | None = None
    retry_delays: tuple[float, ...] = RETRY_DELAYS
    retries: int = 0
    # Where the sign-ins' access tokens come from, and those this call got.
    token_source: TokenSource | None = None
    tokens: dict[str, str] = field(default_factory=dict)
    # The last request sent (a paged tool's next page is sent as it was).
    sent: PreparedRequest | None = None

    @property
    def hidden(self) -> frozenset[str]:
        """The steps whose values are secrets: the login."""
        return frozenset(s.name for s in self.definition.steps if s.session)

    @property
    def verify_ssl(self) -> bool:
        """Whether TLS certificates are checked."""
        return self.definition.verify_ssl is not False


def prepare(call: Call, step: Step) -> PreparedRequest:
    """Build a step's request and check its host; raise :class:`StepFailure`."""
    method = http_method(step.method)
    definition = call.definition
    try:
        prepared = build_request(
            definition,
            call.arguments,
            call.secret_map,
            step=step,
            earlier=call.earlier,
            hidden=call.hidden,
            tokens=call.tokens,
        )
    except MissingStepValue as err:
        reason = f"step '{step.name}' was not sent: step '{err.source}' {err.what}"
        raise StepFailure(
            f"Error: {reason}", reason, Outcome.NOT_SENT, method=method, unbuilt=True
        ) from None
    except RequestBuildError as err:
        raise StepFailure(
            err.text, err.reason, Outcome.NOT_SENT, method=method
        ) from None
    except Exception as err:  # a definition built by hand
        reason = f"cannot build the request: {type(err).__name__}"
        raise StepFailure(
            f"Error: tool request failed: {reason}",
            reason,
            Outcome.NOT_SENT,
            method=method,
        ) from None
    call.secrets.extend(prepared.secret_values)
    hosts = call.hosts
    if hosts is not None and not hosts.allows(host := URL(prepared.url).host):
        reason = f"host '{host}' is not allowed"
        raise StepFailure(
            f"Error: {reason} for tool '{definition.name}'",
            reason,
            Outcome.NOT_SENT,
            method=method,
        )
    return prepared


async def send_step(
    call: Call, step: Step, prepared: PreparedRequest
) -> tuple[Response, Body, str]:
    """Send one step's request; raise :class:`StepFailure` with the single
    request's text."""
    method = http_method(step.method)
    again = repeatable(call.definition, prepared.method)
    call.sent = prepared
    tries = 0
    while True:
        tries += 1
        try:
            response = await send(
                call.client,
                prepared,
                call.seconds,
                call.limits,
                call.verify_ssl,
                call.jar,
            )
        except TimeoutError:
            raise
        except Exception as err:  # never raise: the model gets text
            if again and dropped(err) and await _wait(call, tries, None):
                continue
            reason = scrub(describe(err), prepared.headers, tuple(call.secrets))
            raise StepFailure(
                f"Error: tool request failed: {reason}",
                reason,
                Outcome.UNREACHABLE,
                method=method,
            ) from None
        call.bytes_read += response.counted
        # Cookies are credentials (a busy answer's too: the jar keeps them):
        # a server that echoes them must not show them.
        call.secrets.extend(response.cookies.values())
        if not (
            again
            and response.status in BUSY_STATUSES
            and await _wait(call, tries, retry_after(response.headers))
        ):
            break
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
        hide=lambda text: hide(text, hidden),
        pictures=call.limits.pictures,
    )
    status = response.status
    if (
        response.capped
        and body.value is MISSING
        and body.kind in (BodyKind.JSON, BodyKind.TEXT)
        and body.text.lstrip()[:1] in ("{", "[")
    ):
        call.cut_json = True
    if not 200 <= status < 300:
        reason = f"HTTP {status}"
        if response.note:
            reason += f" ({response.note})"
        raise StepFailure(
            f"Error: HTTP {status} \u2014 {error_text(body)}",
            reason,
            Outcome.HTTP_ERROR,
            status=status,
            method=method,
            capped=response.capped and body.kind is not BodyKind.BINARY,
            content_type=body.media_type or None,
        )
    return response, body, method or step.method


async def _wait(call: Call, tries: int, asked: float | None) -> bool:
    """Wait before trying again, if another try fits in the call's time
    (False: it does not, the answer stands)."""
    left = math.inf
    if call.deadline is not None:
        left = call.deadline - asyncio.get_running_loop().time()
    seconds = pause(tries, call.retry_delays, asked, left)
    if seconds is None:
        return False
    call.retries += 1
    await asyncio.sleep(seconds)
    return True


def _given(name: str, response: Response) -> dict[str, Any]:
    """What a step gave besides its body, as the renderer reads it."""
    return {
        f"header:{name}": {k.lower(): v for k, v in response.headers.items()},
        f"cookie:{name}": dict(response.cookies),
    }


def error_text(body: Body) -> str:
    """What the model reads of an error's body: an HTML page summarised."""
    if body.kind is BodyKind.HTML:
        return error_page_summary(body.text)
    return body.text


@dataclass(slots=True)
class Login:
    """The login a call uses: kept under `key`, reused or made now."""

    key: str
    kept: KeptLogin
    reused: bool


async def _log_in(call: Call, step: Step) -> Login | None:
    """The tool's login: the kept one when its request is the same, else
    sent and kept (None: no store, the login runs as a plain step)."""
    store = call.sessions
    session = step.session
    if store is None or session is None:
        return None
    prepared = prepare(call, step)
    key = login_key(prepared, call.verify_ssl)
    async with store.lock(key):
        kept = await store.reuse(key)
        if kept is not None:
            call.earlier.update(kept.earlier)
            call.jar = kept.jar
            call.secrets.extend(kept.secrets())
            return Login(key, kept, reused=True)
        call.jar = new_jar()
        try:
            response, body, _ = await send_step(call, step, prepared)
        except StepFailure as failure:
            raise _refused(call, step, failure) from None
        earlier = {step.name: body.value, **_given(step.name, response)}
        call.earlier.update(earlier)
        kept = KeptLogin(
            earlier,
            call.jar,
            store.expiry(session.keep_seconds),
            logout=_logout(call, step),
            client=call.client,
            verify_ssl=call.verify_ssl,
        )
        call.secrets.extend(kept.secrets())
        store.keep(key, kept)
        return Login(key, kept, reused=False)


def _logout(call: Call, step: Step) -> PreparedRequest | None:
    """The login's logout, ready to send when the login is dropped."""
    session = step.session
    if session is None or session.logout is None:
        return None
    logout = session.logout
    request = Step(
        step.name,
        logout.url,
        logout.method,
        logout.headers,
        logout.body,
        logout.body_format,
    )
    try:
        prepared = build_request(
            call.definition,
            {},
            call.secret_map,
            step=request,
            earlier=call.earlier,
            hidden=call.hidden,
        )
    except Exception:  # then the session simply expires
        return None
    hosts = call.hosts
    if hosts is not None and not hosts.allows(URL(prepared.url).host):
        return None
    return prepared


async def _fetch_tokens(call: Call) -> None:
    """The access token of each sign-in the call's steps name, valid now
    (the source refreshes it); none sent when one is missing."""
    definition = call.definition
    for name in sorted(definition.sign_ins):
        try:
            if call.token_source is None:
                raise SignInUnavailable(
                    f"Error: tool '{definition.name}' needs the sign-in '{name}', "
                    "which is not set up",
                    "sign-in not set up",
                    sign_in_again=True,
                )
            token = await call.token_source(name)
        except SignInUnavailable as err:
            raise StepFailure(
                err.text,
                err.reason,
                Outcome.SIGNED_OUT if err.sign_in_again else Outcome.UNREACHABLE,
                method=http_method(definition.requests[0].method),
            ) from None
        call.tokens[name] = token
        call.secrets.extend((token, f"Bearer {token}"))


def _refused(call: Call, step: Step, failure: StepFailure) -> StepFailure:
    """A login the service refused says so, naming the tool and the step."""
    if failure.status not in REFUSED_STATUSES:
        return failure
    failure.text = login_refused(step.name, call.definition.name, failure.text)
    return failure


async def run_steps(
    call: Call, on_step: Callable[[Step], None]
) -> tuple[Response, Body, str]:
    """Run the call's steps in order; the last one's answer.

    A later step answered 401 or 403 after a reused login forgets it and
    runs again from the login, once. ``on_step`` is told each step as it
    starts (the executor names it when the call times out).
    """
    await _fetch_tokens(call)
    steps = call.definition.requests
    first = login_step(call.definition.steps)
    login: Login | None = None
    retried = False
    index = 0
    while True:
        step = steps[index]
        on_step(step)
        if index == first and (login := await _log_in(call, step)) is not None:
            index += 1
            continue
        try:
            answer = await send_step(call, step, prepare(call, step))
        except StepFailure as failure:
            if step.session is not None:  # no store: a plain step, named
                raise _refused(call, step, failure) from None
            if (
                login is not None
                and login.reused
                and not retried
                and first is not None
                and failure.status in REFUSED_STATUSES
                and call.sessions is not None
            ):
                # Once: the login made now is not reused.
                call.sessions.forget(login.key, login.kept)
                index, login, retried = first, None, True
                continue
            raise
        response, body, _ = answer
        call.earlier[step.name] = body.value
        call.earlier.update(_given(step.name, response))
        if step.session is None:
            call.document[step.name] = (
                body.value if body.value is not MISSING else body.text
            )
        index += 1
        if index == len(steps):
            return answer
