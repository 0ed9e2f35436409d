"""An OAuth2 provider on 127.0.0.1: the authorization server (authorize and
token endpoints, RFC 6749's authorization code grant and refresh) and the
API its tokens open, as Spotify's and Google's work.

The authorize endpoint answers as a provider does once the user allowed
access: a redirect to the `redirect_uri` with a code and the state. The
token endpoint checks the client's id and secret, the code and its
redirect URI, and the refresh token; the API answers only the access token
in force (a refreshed one replaces it).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count
from typing import Any

from aiohttp import web
from yarl import URL

from dev.loopback import RecordingServer

CLIENT_ID = "hta-client-id"
CLIENT_SECRET = "hta-client-secret-0123"
# The events Google's calendar API lists for "tomorrow" (its documented shape).
EVENTS = {
    "kind": "calendar#events",
    "summary": "Family",
    "timeZone": "Europe/Rome",
    "items": [
        {
            "kind": "calendar#event",
            "id": "a1",
            "status": "confirmed",
            "summary": "Dentist",
            "start": {"dateTime": "2026-12-04T09:30:00+01:00"},
            "end": {"dateTime": "2026-12-04T10:00:00+01:00"},
        },
        {
            "kind": "calendar#event",
            "id": "b2",
            "status": "confirmed",
            "summary": "Piano lesson",
            "start": {"dateTime": "2026-12-04T17:00:00+01:00"},
            "end": {"dateTime": "2026-12-04T18:00:00+01:00"},
        },
    ],
}


@dataclass
class OAuthProvider(RecordingServer):
    """The provider; `refuse_refresh` makes it refuse a refresh token
    (revoked: the user must sign in again), `token_status` answer every
    token request with that status."""

    expires_in: int = 3600
    refuse_refresh: bool = False
    # A status every token request gets instead (503: the service is down).
    token_status: int | None = None
    access_token: str | None = None
    refresh_token: str | None = None
    codes: dict[str, str] = field(default_factory=dict)  # code -> redirect_uri
    # What each token request asked for (`grant_type`s in order).
    grants: list[str] = field(default_factory=list)
    _serial: count[int] = field(default_factory=lambda: count(1))

    def routes(self, app: web.Application) -> None:
        """The authorization server and the API."""
        app.router.add_get("/authorize", self._authorize)
        app.router.add_post("/token", self._token)
        app.router.add_post("/v1/me/player/next", self._next)
        app.router.add_get("/calendar/v3/calendars/primary/events", self._events)

    async def _authorize(self, request: web.Request) -> web.StreamResponse:
        query = request.query
        if query.get("response_type") != "code" or query.get("client_id") != CLIENT_ID:
            return web.json_response({"error": "invalid_request"}, status=400)
        code = f"code-{next(self._serial)}"
        self.codes[code] = query["redirect_uri"]
        back = URL(query["redirect_uri"]).update_query(
            {"code": code, "state": query["state"]}
        )
        raise web.HTTPFound(str(back))

    def _issue(self, refresh: bool) -> dict[str, Any]:
        serial = next(self._serial)
        self.access_token = f"access-{serial}-abcdef"
        if refresh:
            self.refresh_token = f"refresh-{serial}-ghijkl"
        return {
            "access_token": self.access_token,
            "token_type": "Bearer",
            "expires_in": self.expires_in,
            "refresh_token": self.refresh_token,
            "scope": "user-modify-playback-state",
        }

    async def _token(self, request: web.Request) -> web.StreamResponse:
        form = await request.post()
        grant = str(form.get("grant_type"))
        self.grants.append(grant)
        if self.token_status is not None:
            return web.json_response({"error": "unavailable"}, status=self.token_status)
        if (
            form.get("client_id") != CLIENT_ID
            or form.get("client_secret") != CLIENT_SECRET
        ):
            return web.json_response({"error": "invalid_client"}, status=401)
        if grant == "authorization_code":
            code = str(form.get("code"))
            if self.codes.pop(code, None) != form.get("redirect_uri"):
                return web.json_response({"error": "invalid_grant"}, status=400)
            return web.json_response(self._issue(refresh=True))
        if grant == "refresh_token":
            if self.refuse_refresh or form.get("refresh_token") != self.refresh_token:
                return web.json_response(
                    {
                        "error": "invalid_grant",
                        "error_description": "Refresh token revoked",
                    },
                    status=400,
                )
            return web.json_response(self._issue(refresh=False))
        return web.json_response({"error": "unsupported_grant_type"}, status=400)

    def _bearer_ok(self, request: web.Request) -> bool:
        return (
            self.access_token is not None
            and request.headers.get("Authorization") == f"Bearer {self.access_token}"
        )

    async def _next(self, request: web.Request) -> web.StreamResponse:
        """Spotify's "skip to next": 204, no body."""
        if not self._bearer_ok(request):
            return web.json_response(
                {"error": {"status": 401, "message": "Invalid access token"}},
                status=401,
            )
        return web.Response(status=204)

    async def _events(self, request: web.Request) -> web.StreamResponse:
        """Google Calendar's events list."""
        if not self._bearer_ok(request):
            return web.json_response(
                {"error": {"code": 401, "message": "Invalid Credentials"}}, status=401
            )
        return web.json_response(EVENTS)
