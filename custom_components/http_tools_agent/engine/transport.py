"""Sending one prepared request with aiohttp: redirects followed by hand
(the same host only, at most ``MAX_REDIRECTS``), the body read up to what
its content type needs (a binary body only counted; a shaped JSON answer
past the cap handed on as it streams, :mod:`.stream_shape`), basic and digest
credentials applied (:mod:`.auth`), the cookies of a call's jar sent and
the ones each answer sets kept in it (aiohttp's `CookieJar`: domain, path,
expiry). :mod:`.executor` turns what comes back into the model's text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from .auth import auth_headers, request_options
from .bodies import (
    PICTURE_TYPES,
    is_binary_type,
    is_json_type,
    is_untyped,
    media_type,
    read_whole,
)
from .requests import PreparedRequest

MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_READ_CHUNK = 65_536
# Kept of a binary body that is only counted: enough to tell its type.
SNIFF_BYTES = 64


def same_host(source: URL, target: URL) -> bool:
    if target.scheme not in ("http", "https") or not target.host or not source.host:
        return False
    if target.host.lower() != source.host.lower():
        return False
    if source.scheme == "https" and target.scheme == "http":
        return False
    return target.port == source.port or source.scheme != target.scheme


class Overflow(Protocol):
    """What reads a JSON answer past the byte cap as it streams (a shape
    over a list, :class:`~.stream_shape.StreamShaper`)."""

    def feed(self, data: bytes) -> bool:
        """More of the answer; True once nothing more is needed."""

    def close(self) -> None:
        """The answer ended."""


@dataclass(slots=True)
class Response:
    status: int
    data: bytes
    capped: bool
    charset: str | None
    note: str | None
    content_type: str | None = None
    # Bytes read (a binary body's are counted, not kept).
    counted: int = 0
    # The declared Content-Length.
    length: int | None = None
    headers: Mapping[str, str] = field(
        default_factory=lambda: CIMultiDictProxy(CIMultiDict())
    )
    # The cookies the answer set (name -> value).
    cookies: dict[str, str] = field(default_factory=dict)
    # What read a JSON answer larger than the cap as it streamed.
    streamed: Overflow | None = None


@dataclass(frozen=True, slots=True)
class Limits:
    """How many bytes of a body are kept."""

    text: int  # a text body the model reads as it is: what the limit shows
    whole: int  # a body read whole (JSON, HTML, shaped, a step's): the cap
    shaped: bool  # every body but a binary one is read whole
    # A 2xx JSON answer over `whole` goes on streaming into this (given the
    # charset) instead of being cut.
    overflow: Callable[[str | None], Overflow] | None = None
    # A JPEG or PNG is kept (up to `whole`) for a model that reads images.
    pictures: bool = False

    def plan(self, content_type: str | None) -> tuple[int, bool]:
        """(bytes to read, whether to keep them) for a body of that type."""
        kind = media_type(content_type)
        if is_binary_type(kind):
            return self.whole, self.pictures and kind in PICTURE_TYPES
        if self.pictures and is_untyped(kind):
            # Frigate's `latest.jpg` comes untyped: read whole, it may be
            # a picture once sniffed.
            return self.whole, True
        if self.shaped or read_whole(kind):
            return self.whole, True
        return self.text, True


async def read_body_bytes(
    response: aiohttp.ClientResponse, limit: int, keep: bool = True, cut: bool = True
) -> tuple[bytes, bool, int]:
    """Read at most ``limit`` bytes (kept, or only counted); report whether
    more was available and how many were read. ``cut`` False: past the
    limit, every byte read is given and the answer stays open."""
    chunks: list[bytes] = []
    total = 0
    while total <= limit:
        chunk = await response.content.read(min(_READ_CHUNK, limit + 1 - total))
        if not chunk:
            break
        if keep or total < SNIFF_BYTES:
            chunks.append(chunk)
        total += len(chunk)
    capped = total > limit
    data = b"".join(chunks)
    if capped and cut:
        data = data[:limit]
        total = limit
        response.close()
    return data, capped, total


async def send(
    session: aiohttp.ClientSession,
    prepared: PreparedRequest,
    seconds: float,
    limits: Limits,
    verify_ssl: bool,
    jar: aiohttp.CookieJar | None = None,
) -> Response:
    url = URL(prepared.url, encoded=True)
    method = prepared.method
    headers = auth_headers(prepared.headers, prepared.auth)
    body = prepared.body()
    client_timeout = aiohttp.ClientTimeout(total=seconds)
    # Once per call: a digest middleware keeps the server's nonce across
    # the redirects it follows.
    options = request_options(session, prepared.auth)
    hops = 0
    while True:
        cookies = jar.filter_cookies(url) if jar is not None else None
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
            cookies=cookies or None,
            **options,
        ) as response:
            if jar is not None:
                jar.update_cookies(response.cookies, response.url)
            note: str | None = None
            location = response.headers.get("Location")
            if response.status in REDIRECT_STATUSES and location:
                target = url.join(URL(location)).with_fragment(None)
                if hops >= MAX_REDIRECTS:
                    note = f"more than {MAX_REDIRECTS} redirects"
                elif not same_host(url, target):
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
            content_type = response.headers.get("Content-Type")
            limit, keep = limits.plan(content_type)
            streams = (
                limits.overflow is not None
                and 200 <= response.status < 300
                and is_json_type(media_type(content_type))
            )
            data, capped, total = await read_body_bytes(
                response, limit, keep, cut=not streams
            )
            streamed = None
            if capped and streams and limits.overflow is not None:
                streamed = limits.overflow(response.charset)
                total = await _stream_on(response, data, streamed)
                data, capped = b"", False
            return Response(
                response.status,
                data,
                capped,
                response.charset,
                note,
                content_type,
                total,
                response.content_length,
                response.headers,
                {name: morsel.value for name, morsel in response.cookies.items()},
                streamed,
            )


async def _stream_on(
    response: aiohttp.ClientResponse, start: bytes, sink: Overflow
) -> int:
    """Give ``sink`` what was read, then the rest as it arrives (a chunk at a
    time: memory holds one); hang up once it needs no more. The bytes read."""
    total = len(start)
    done = False
    for at in range(0, len(start), _READ_CHUNK):
        if done := sink.feed(start[at : at + _READ_CHUNK]):
            break
    del start
    while not done:
        chunk = await response.content.read(_READ_CHUNK)
        if not chunk:
            break
        total += len(chunk)
        done = sink.feed(chunk)
    if done:
        response.close()
    else:
        sink.close()
    return total
