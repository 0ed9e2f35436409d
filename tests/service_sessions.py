"""Logins as services check them, for `tests.service_cases.ServiceServer`.

A login route (`Login`) takes a JSON body whose members must be exactly the
account's, and gives a fresh session id: in its JSON answer (Pi-hole v6's
`POST /api/auth`: `session.sid`) or as a cookie (Frigate's `POST
/api/login`: `frigate_token`); a wrong one gets the service's refusal. A
guarded route (`Guard`) answers only a live session, read where the service
reads it (`X-FTL-SID`, the `sid` parameter, the cookie, a bearer token),
else the service's 401. The server counts logins and logouts, and
`expire()` ends every session as the service does when they time out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import json
import secrets
from typing import Any

from aiohttp import web


@dataclass(frozen=True, slots=True)
class Refusal:
    """What the service answers a login or a session it does not take."""

    status: int = 401
    body: bytes = b""
    content_type: str | None = None

    def response(self) -> web.Response:
        """The answer."""
        headers = {"Content-Type": self.content_type} if self.content_type else {}
        return web.Response(status=self.status, body=self.body, headers=headers)


@dataclass(frozen=True, slots=True)
class Login:
    """A route that logs in."""

    # The JSON members the body must hold, exactly.
    account: dict[str, str]
    # Where the session id goes: `body:session.sid` or `cookie:frigate_token`.
    issue: str
    refused: Refusal = Refusal()
    # The verb on the same path that ends the session (Pi-hole's DELETE).
    logout: str | None = None
    # How the session id is read by the logout.
    read: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Guard:
    """A route that answers a live session only."""

    # `header:X-FTL-SID`, `query:sid`, `cookie:frigate_token`, `bearer`.
    read: tuple[str, ...]
    refused: Refusal = Refusal()


def _token(kind: str) -> str:
    if kind.startswith("cookie:"):
        # A JWT's shape: three base64url parts.
        return ".".join(secrets.token_urlsafe(n) for n in (27, 60, 32))
    return secrets.token_urlsafe(16)


def _set(document: Any, path: str, value: str) -> None:
    *heads, last = path.split(".")
    for head in heads:
        document = document[head]
    document[last] = value


@dataclass(slots=True)
class Sessions:
    """The live sessions of one server, and what was asked of them."""

    live: set[str] = field(default_factory=set)
    logins: int = 0
    refused_logins: int = 0
    logouts: int = 0

    def expire(self) -> None:
        """Every session times out."""
        self.live.clear()

    def read(self, read: tuple[str, ...], request: web.Request) -> str | None:
        """The live session the request carries, or None."""
        for where in read:
            kind, _, name = where.partition(":")
            if kind == "header":
                value = request.headers.get(name)
            elif kind == "query":
                value = request.query.get(name)
            elif kind == "cookie":
                value = request.cookies.get(name)
            else:
                header = request.headers.get("Authorization", "")
                value = header.removeprefix("Bearer ") if header else None
            if value in self.live:
                return value
        return None

    def log_in(
        self, login: Login, request: web.Request, body: bytes, answer: bytes
    ) -> web.Response:
        """Check the account, give a session (`answer`: the login's JSON)."""
        if login.logout is not None and request.method == login.logout:
            token = self.read(login.read, request)
            if token is None:
                return login.refused.response()
            self.live.discard(token)
            self.logouts += 1
            return web.Response(status=204)
        try:
            sent = json.loads(body)
        except ValueError:
            sent = None
        if sent != login.account:
            self.refused_logins += 1
            return login.refused.response()
        self.logins += 1
        token = _token(login.issue)
        self.live.add(token)
        kind, _, where = login.issue.partition(":")
        if kind == "cookie":
            response = web.Response(status=200, body=answer)
            response.set_cookie(
                where, token, httponly=True, max_age=86400, samesite="lax"
            )
            return response
        document = json.loads(answer)
        _set(document, where, token)
        return web.json_response(document)


def refusal(raw: dict[str, Any] | None, read_file: Any) -> Refusal:
    """A case's `refused` (file, status, content type)."""
    if raw is None:
        return Refusal()
    return Refusal(
        raw.get("status", 401),
        read_file(raw["file"]) if raw.get("file") else b"",
        raw.get("content_type"),
    )


def login_of(raw: dict[str, Any] | None, read_file: Any, fill: Any) -> Login | None:
    """A case's `login`, its account's `{secret:name}` filled by `fill`."""
    if raw is None:
        return None
    return Login(
        {key: fill(value) for key, value in raw["account"].items()},
        raw["issue"],
        refusal(raw.get("refused"), read_file),
        raw.get("logout"),
        tuple(raw.get("read", ())),
    )


def guard_of(raw: dict[str, Any] | None, read_file: Any) -> Guard | None:
    """A case's `session`: where the route reads it, what it answers without."""
    if raw is None:
        return None
    return Guard(tuple(raw["read"]), refusal(raw.get("refused"), read_file))
