"""Sending one prepared request with aiohttp: redirects followed by hand
(the same host only, at most ``MAX_REDIRECTS``), the body read up to what
its content type needs (a binary body only counted), basic and digest
credentials applied (:mod:`.auth`), the cookies of a call's jar sent and
the ones each answer sets kept in it (aiohttp's `CookieJar`: domain, path,
expiry). :mod:`.executor` turns what comes back into the model's text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from .auth import auth_headers, request_options
from .bodies import is_binary_type, media_type, read_whole
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


@dataclass(frozen=True, slots=True)
class Limits:
    """How many bytes of a body are kept."""

    text: int  # a text body the model reads as it is: what the limit shows
    whole: int  # a body read whole (JSON, HTML, shaped, a step's): the cap
    shaped: bool  # every body but a binary one is read whole

    def plan(self, content_type: str | None) -> tuple[int, bool]:
        """(bytes to read, whether to keep them) for a body of that type."""
        kind = media_type(content_type)
        if is_binary_type(kind):
            return self.whole, False
        if self.shaped or read_whole(kind):
            return self.whole, True
        return self.text, True


async def read_body_bytes(
    response: aiohttp.ClientResponse, limit: int, keep: bool = True
) -> tuple[bytes, bool, int]:
    """Read at most ``limit`` bytes (kept, or only counted); report whether
    more was available and how many were read."""
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
    if capped:
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
            data, capped, total = await read_body_bytes(response, limit, keep)
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
            )
