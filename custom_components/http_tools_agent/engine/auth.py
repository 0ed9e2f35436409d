"""HTTP authentication of a tool's request: basic and digest.

``"auth": {"type": "basic" | "digest", "username": "...", "password":
"{secret:pw}"}``: fixed text and ``{secret:name}`` only, never an argument (the
model must not choose credentials). aiohttp does the work: ``encode_basic_auth`` for
basic (the ``Authorization`` header), ``DigestAuthMiddleware`` (RFC 7616: MD5, SHA-256, SHA-512, their
``-sess`` forms, qop ``auth`` and ``auth-int``) for digest, given to this one
request (a per-request middleware), so Home Assistant's shared session is
never changed. The password, and for basic the encoded header, join the
request's secret values: no text ever shows them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp
from aiohttp import ClientSession
from aiohttp.client_middlewares import ClientMiddlewareType

AUTH_TYPES = ("basic", "digest")
AUTH_FIELDS = ("type", "username", "password")

type AuthType = Literal["basic", "digest"]


@dataclass(frozen=True, slots=True)
class Auth:
    """What a definition says: the type and the two templates."""

    type: AuthType
    username: str
    password: str

    def as_dict(self) -> dict[str, Any]:
        """Back to the file format."""
        return {"type": self.type, "username": self.username, "password": self.password}


@dataclass(frozen=True, slots=True)
class Credentials:
    """An :class:`Auth` with its secrets filled in, for one request."""

    type: AuthType
    username: str
    password: str

    def basic(self) -> str | None:
        """The ``Authorization`` value of a basic request (UTF-8, RFC 7617's
        charset)."""
        if self.type != "basic":
            return None
        return aiohttp.encode_basic_auth(self.username, self.password, "utf-8")

    def digest(self) -> aiohttp.DigestAuthMiddleware | None:
        """A middleware for the requests of one call (it keeps the nonce the
        server gave, so a redirect on the same host is answered at once)."""
        if self.type != "digest":
            return None
        return aiohttp.DigestAuthMiddleware(self.username, self.password)

    def hidden(self) -> tuple[str, ...]:
        """Values no text may show: the password and basic's header value."""
        values = [self.password]
        if (header := self.basic()) is not None:
            values += [header, header.removeprefix("Basic ")]
        return tuple(values)


def session_middlewares(session: ClientSession) -> tuple[ClientMiddlewareType, ...]:
    """The middlewares a session runs for every request.

    A per-request ``middlewares=`` replaces the session's; Home Assistant's
    session has its own (the check of redirects to loopback), which must
    still run. aiohttp keeps them in ``_middlewares`` without a public name.
    """
    found: Any = getattr(session, "_middlewares", ())
    return tuple(found) if isinstance(found, Sequence) else ()


def request_options(
    session: ClientSession, credentials: Credentials | None
) -> Mapping[str, Any]:
    """The keyword arguments ``session.request`` takes for ``credentials``
    (basic: none, its header is in :func:`auth_headers`)."""
    if credentials is None or (digest := credentials.digest()) is None:
        return {}
    return {"middlewares": (*session_middlewares(session), digest)}


def auth_headers(
    headers: Mapping[str, str], credentials: Credentials | None
) -> dict[str, str]:
    """``headers`` with basic's ``Authorization`` (it replaces one the tool
    wrote: the ``auth`` field says what the server gets)."""
    out = dict(headers)
    if credentials is None or (header := credentials.basic()) is None:
        return out
    out = {key: value for key, value in out.items() if key.lower() != "authorization"}
    out["Authorization"] = header
    return out
