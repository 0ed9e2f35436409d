"""HTTP authentication of a tool's request: basic, digest and OAuth2.

``"auth": {"type": "basic" | "digest", "username": "...", "password":
"{secret:pw}"}``: fixed text and ``{secret:name}`` only, never an argument (the
model must not choose credentials). ``{"type": "oauth2", "sign_in": "spotify"}``
sends ``Authorization: Bearer <token>`` with the access token of a sign-in
the caller holds (:class:`TokenSource`: Home Assistant's OAuth2 session,
refreshed before use); the engine never sees a refresh token. aiohttp does the work: ``encode_basic_auth`` for
basic (the ``Authorization`` header), ``DigestAuthMiddleware`` (RFC 7616: MD5, SHA-256, SHA-512, their
``-sess`` forms, qop ``auth`` and ``auth-int``) for digest, given to this one
request (a per-request middleware), so Home Assistant's shared session is
never changed. The password, and for basic the encoded header, join the
request's secret values: no text ever shows them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import aiohttp
from aiohttp import ClientSession
from aiohttp.client_middlewares import ClientMiddlewareType

AUTH_TYPES = ("basic", "digest", "oauth2")
AUTH_FIELDS = ("type", "username", "password", "sign_in")

type AuthType = Literal["basic", "digest", "oauth2"]

# What a caller gives for ``oauth2``: the access token of the sign-in named,
# valid now, or :class:`SignInUnavailable`.
type TokenSource = Callable[[str], Awaitable[str]]


class SignInUnavailable(Exception):
    """No token for a sign-in. ``text`` is what the model reads;
    ``sign_in_again``: the user must act (not set up, or the provider
    refused to renew it), else its provider did not answer."""

    def __init__(self, text: str, reason: str, *, sign_in_again: bool) -> None:
        super().__init__(reason)
        self.text = text
        self.reason = reason
        self.sign_in_again = sign_in_again


@dataclass(frozen=True, slots=True)
class Auth:
    """What a definition says: the type and the two templates (basic,
    digest), or the sign-in whose token is sent (oauth2)."""

    type: AuthType
    username: str = ""
    password: str = ""
    sign_in: str = ""

    def as_dict(self) -> dict[str, Any]:
        """Back to the file format."""
        if self.type == "oauth2":
            return {"type": self.type, "sign_in": self.sign_in}
        return {"type": self.type, "username": self.username, "password": self.password}


@dataclass(frozen=True, slots=True)
class Credentials:
    """An :class:`Auth` with its secrets filled in, for one request
    (``password`` holds oauth2's access token)."""

    type: AuthType
    username: str
    password: str

    def header(self) -> str | None:
        """The ``Authorization`` value basic and oauth2 send."""
        if self.type == "oauth2":
            return f"Bearer {self.password}"
        return self.basic()

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
        """Values no text may show: the password or token and the header
        value made of it."""
        values = [self.password]
        if (header := self.header()) is not None:
            values += [header, header.partition(" ")[2]]
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
    """``headers`` with basic's or oauth2's ``Authorization`` (it replaces
    one the tool wrote: the ``auth`` field says what the server gets)."""
    out = dict(headers)
    if credentials is None or (header := credentials.header()) is None:
        return out
    out = {key: value for key, value in out.items() if key.lower() != "authorization"}
    out["Authorization"] = header
    return out
