"""Run a tool call with aiohttp and turn the outcome into text for the model.

:func:`run_tool` never raises (except :class:`asyncio.CancelledError`): every
failure becomes one of the guide's error texts (section 6)::

    Error: invalid HTTP method '<method>' for tool '<name>'
    Error: HTTP <status> — <body>
    Error: tool request failed: <error>

plus the argument and secret errors of :mod:`.requests` and
``Error: host '<host>' is not allowed for tool '<name>'`` when a host policy
refuses the request. Finding the tool a call names is the caller's business
(and so is ``Error: unknown tool``). It bounds the time, the bytes read and
the text returned, follows redirects on the same host only, and never lets a
header value into an error text nor a secret into any text (a server that
echoes a secret back has it replaced by ``***``). The rules are in
``docs/tool-format.md`` ("What the model receives").
"""

from __future__ import annotations

import asyncio
import codecs
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
import math
import time
from typing import Any

import aiohttp
from yarl import URL

from .definitions import ToolDefinition
from .fields import http_method
from .hosts import HostPolicy
from .requests import PreparedRequest, RequestBuildError, build_request

DEFAULT_TIMEOUT = 15.0
DEFAULT_MAX_CHARS = 2000
DEFAULT_MAX_BYTES = 1_048_576
TRUNCATION_SUFFIX = "… [truncated]"
MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_READ_CHUNK = 65_536
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


def _same_host(source: URL, target: URL) -> bool:
    if target.scheme not in ("http", "https") or not target.host or not source.host:
        return False
    if target.host.lower() != source.host.lower():
        return False
    if source.scheme == "https" and target.scheme == "http":
        return False
    return target.port == source.port or source.scheme != target.scheme


@dataclass(slots=True)
class _Response:
    status: int
    data: bytes
    capped: bool
    charset: str | None
    note: str | None


async def _read_body(
    response: aiohttp.ClientResponse, limit: int
) -> tuple[bytes, bool]:
    """Read at most ``limit`` bytes; report whether more was available."""
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        chunk = await response.content.read(min(_READ_CHUNK, limit + 1 - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    capped = total > limit
    data = b"".join(chunks)
    if capped:
        data = data[:limit]
        response.close()
    return data, capped


async def _send(
    session: aiohttp.ClientSession,
    prepared: PreparedRequest,
    seconds: float,
    limit: int,
    verify_ssl: bool,
) -> _Response:
    url = URL(prepared.url, encoded=True)
    method = prepared.method
    headers = dict(prepared.headers)
    body = prepared.body()
    client_timeout = aiohttp.ClientTimeout(total=seconds)
    hops = 0
    while True:
        async with session.request(
            method,
            url,
            headers=headers,
            data=body,
            allow_redirects=False,
            timeout=client_timeout,
            # True keeps the session's own verification; False accepts any
            # certificate (a LAN device's self-signed one).
            ssl=verify_ssl,
        ) as response:
            note: str | None = None
            location = response.headers.get("Location")
            if response.status in REDIRECT_STATUSES and location:
                target = url.join(URL(location)).with_fragment(None)
                if hops >= MAX_REDIRECTS:
                    note = f"more than {MAX_REDIRECTS} redirects"
                elif not _same_host(url, target):
                    note = "redirect to another host not followed"
                else:
                    hops += 1
                    if (response.status == 303 and method != "HEAD") or (
                        response.status in (301, 302) and method == "POST"
                    ):
                        method, body = "GET", None
                        headers = {
                            key: value
                            for key, value in headers.items()
                            if key.lower() != "content-type"
                        }
                    url = target
                    continue
            data, capped = await _read_body(response, limit)
            return _Response(response.status, data, capped, response.charset, note)


def _decode(data: bytes, charset: str | None, final: bool) -> str:
    """Decode with the declared charset when it is a text encoding, else UTF-8.

    The server names the charset: `base64`, `zlib` or `rot13` are codecs too,
    and must never turn a response into an exception.
    """
    encoding = "utf-8"
    if charset:
        try:
            info = codecs.lookup(charset)
        except LookupError:
            pass
        else:
            if getattr(info, "_is_text_encoding", True):
                encoding = info.name
    try:
        decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        return decoder.decode(data, final=final)
    except UnicodeError, TypeError, ValueError, AssertionError:
        return codecs.getincrementaldecoder("utf-8")(errors="replace").decode(
            data, final=final
        )


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
) -> ToolRunResult:
    """Run ``definition`` with ``arguments``; every failure becomes text.

    ``secrets`` fill the definition's ``{secret:name}`` references; ``hosts``
    (default: any host) limits the hosts the request may reach.
    """
    started = time.monotonic()
    max_chars = max(int(max_chars), 1)

    def finish(
        text: str,
        *,
        error: str | None,
        outcome: Outcome = Outcome.NOT_SENT,
        method: str | None = None,
        status: int | None = None,
        ok: bool = False,
        capped: bool = False,
        bytes_read: int = 0,
    ) -> ToolRunResult:
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
            bytes_read=bytes_read,
            outcome=outcome,
        )

    # Reported with the outcome; build_request refuses an invalid one.
    method = http_method(definition.method)
    try:
        prepared = build_request(definition, arguments, secrets)
    except RequestBuildError as err:
        return finish(err.text, method=method, error=err.reason)
    except Exception as err:  # a definition built by hand
        reason = f"cannot build the request: {type(err).__name__}"
        return finish(
            f"Error: tool request failed: {reason}", method=method, error=reason
        )

    if hosts is not None and not hosts.allows(host := URL(prepared.url).host):
        reason = f"host '{host}' is not allowed"
        return finish(
            f"Error: {reason} for tool '{definition.name}'",
            method=method,
            error=reason,
        )

    seconds = definition.timeout if definition.timeout is not None else timeout
    if (
        not isinstance(seconds, (int, float))
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
        seconds = DEFAULT_TIMEOUT
    limit = max(min(int(max_bytes), 4 * max_chars + 16), 0)
    try:
        async with asyncio.timeout(seconds):
            response = await _send(
                session, prepared, seconds, limit, definition.verify_ssl is not False
            )
    except TimeoutError:
        reason = f"timeout after {_format_seconds(seconds)} s"
        return finish(
            f"Error: tool request failed: {reason}",
            method=method,
            error=reason,
            outcome=Outcome.UNREACHABLE,
        )
    except Exception as err:  # never raise: the model gets text
        reason = _scrub(_describe(err), prepared.headers, prepared.secret_values)
        return finish(
            f"Error: tool request failed: {reason}",
            method=method,
            error=reason,
            outcome=Outcome.UNREACHABLE,
        )

    body = _decode(response.data, response.charset, final=not response.capped)
    # A server that echoes the request (httpbin...) must not hand the model
    # a secret.
    body = _hide(body, prepared.secret_values)
    status = response.status
    common: dict[str, Any] = {
        "method": method,
        "status": status,
        "capped": response.capped,
        "bytes_read": len(response.data),
    }
    if 200 <= status < 300:
        text = body if body.strip() else f"HTTP {status}"
        return finish(text, ok=True, error=None, outcome=Outcome.DONE, **common)
    reason = f"HTTP {status}"
    if response.note:
        reason += f" ({response.note})"
    return finish(
        f"Error: HTTP {status} — {body}",
        error=reason,
        outcome=Outcome.HTTP_ERROR,
        **common,
    )
