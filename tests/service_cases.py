"""Real services on loopback: their tools, their recorded or documented
answers, and a server that checks credentials as they do.

`tests/fixtures/services/<service>/` holds one service: `tools.json` (tools
written from its published API documents, URLs on the real host),
`cases.json` (a call each: the arguments, what the server answers and from
which fixture file, the request that must arrive, what the model reads and
the word a voice user needs), the fixture files and `SOURCE.md` (where the
API and each fixture come from). `ServiceServer` serves a case's routes on
127.0.0.1, asking for basic or digest credentials when a route says so
(digest as RFC 7616 describes it, SHA-256 and MD5, qop `auth`).

No Home Assistant: the engine tests and `bench/bench_services.py` use it.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from dataclasses import dataclass, field
import hashlib
import json
from pathlib import Path
import secrets
from typing import Any

from aiohttp import web
from multidict import CIMultiDict
from yarl import URL

from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinition,
    parse_tools,
)
from dev.loopback import LoopbackServer, Recorded
from tests.service_sessions import Guard, Login, Sessions, guard_of, login_of

SERVICES = Path(__file__).parent / "fixtures" / "services"


@dataclass(slots=True)
class Route:
    """What one path answers."""

    status: int = 200
    body: bytes = b""
    content_type: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    # Credentials the route asks for, as (user, password).
    basic: tuple[str, str] | None = None
    digest: tuple[str, str] | None = None
    digest_algorithm: str = "SHA-256"
    # The OAuth2 access token the route asks for (`Authorization: Bearer`).
    bearer: str | None = None
    # Only this method is answered (another gets 405).
    method: str | None = None
    # A login, or a route that needs the session it gives (`service_sessions`).
    login: Login | None = None
    guard: Guard | None = None


def _digest_fields(header: str) -> dict[str, str]:
    """The `key=value` pairs of a `Digest ...` Authorization header."""
    found: dict[str, str] = {}
    rest = header.removeprefix("Digest ").strip()
    while rest:
        key, _, rest = rest.partition("=")
        rest = rest.lstrip()
        if rest.startswith('"'):
            value, _, rest = rest[1:].partition('"')
        else:
            value, _, rest = rest.partition(",")
        found[key.strip().lstrip(",").strip()] = value
        rest = rest.lstrip(", ")
    return found


def _hash(algorithm: str, text: str) -> str:
    name = "sha256" if algorithm.upper().startswith("SHA-256") else "md5"
    return hashlib.new(name, text.encode()).hexdigest()


@dataclass
class ServiceServer(LoopbackServer):
    """Answers each path as its route says; records every request."""

    routes_by_path: dict[str, Route] = field(default_factory=dict)
    arrived: list[Recorded] = field(default_factory=list)
    realm: str = "shellyplus1pm-a8032ab12345"
    nonces: set[str] = field(default_factory=set)
    sessions: Sessions = field(default_factory=Sessions)

    def route(self, path: str, **kwargs: Any) -> None:
        """What `path` answers: the raw path, or the raw path and query
        (one page of a list), which comes first."""
        self.routes_by_path[path] = Route(**kwargs)

    def routes(self, app: web.Application) -> None:
        """Every method on every path."""
        app.router.add_route("*", "/{tail:.*}", self._handle)

    def _refused(self, route: Route, request: web.Request, body: bytes) -> bool:
        header = request.headers.get("Authorization", "")
        if route.basic is not None:
            user, password = route.basic
            token = base64.b64encode(f"{user}:{password}".encode()).decode()
            return header != f"Basic {token}"
        if route.digest is not None:
            return not self._digest_valid(route, request, header)
        if route.bearer is not None:
            return header != f"Bearer {route.bearer}"
        return False

    def _digest_valid(self, route: Route, request: web.Request, header: str) -> bool:
        if not header.startswith("Digest "):
            return False
        got = _digest_fields(header)
        user, password = route.digest or ("", "")
        if (
            got.get("username") != user
            or got.get("realm") != self.realm
            or got.get("nonce") not in self.nonces
            or got.get("uri") != request.raw_path
        ):
            return False
        algorithm = route.digest_algorithm
        ha1 = _hash(algorithm, f"{user}:{self.realm}:{password}")
        ha2 = _hash(algorithm, f"{request.method}:{got['uri']}")
        expected = _hash(
            algorithm,
            f"{ha1}:{got['nonce']}:{got.get('nc', '')}:{got.get('cnonce', '')}:"
            f"{got.get('qop', '')}:{ha2}",
        )
        return got.get("response") == expected

    def _challenge(self, route: Route) -> dict[str, str]:
        if route.bearer is not None:
            return {"WWW-Authenticate": 'Bearer error="invalid_token"'}
        if route.basic is not None:
            return {"WWW-Authenticate": f'Basic realm="{self.realm}"'}
        nonce = secrets.token_hex(16)
        self.nonces.add(nonce)
        return {
            "WWW-Authenticate": (
                f'Digest realm="{self.realm}", qop="auth", '
                f'algorithm={route.digest_algorithm}, nonce="{nonce}", '
                'opaque="5ccc069c403ebaf9f0171e9517f40e41"'
            )
        }

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        arrived = await Recorded.raw(request)
        self.arrived.append(arrived)
        body = arrived.body
        # A page of a list is its path and query (`/records?page=2`).
        route = self.routes_by_path.get(
            f"{arrived.path}?{arrived.query}"
        ) or self.routes_by_path.get(arrived.path)
        if route is None:
            return web.json_response({"error": "not found"}, status=404)
        if route.login is not None:
            return self.sessions.log_in(route.login, request, body, route.body)
        if route.method is not None and request.method != route.method:
            return web.Response(status=405)
        guard = route.guard
        if guard is not None and self.sessions.read(guard.read, request) is None:
            return guard.refused.response()
        if self._refused(route, request, body):
            return web.Response(status=401, headers=self._challenge(route))
        headers = CIMultiDict(route.headers)
        if route.content_type is not None:
            headers["Content-Type"] = route.content_type
        # No type given: aiohttp says application/octet-stream, as it does
        # for Home Assistant's own text answers (`/api/template`).
        return web.Response(status=route.status, body=route.body, headers=headers)


# ----------------------------------------------------------------- the cases


@dataclass(frozen=True, slots=True)
class Expected:
    """A request that must arrive."""

    target: str
    body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    absent_headers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Case:
    """One call of a service's tool."""

    service: str
    operation: str
    tool: str
    arguments: dict[str, Any]
    secrets: dict[str, str]
    routes: tuple[tuple[str, Route, str], ...]  # (path, route, fixture file)
    requests: tuple[Expected, ...]
    # What the model reads (None: only the needle is checked).
    reads: str | None
    # The word a voice user needs: it must be in what the model reads.
    needle: str
    # The tool's own sentence (None: not checked).
    speech: str | None = None
    ok: bool = True
    # What of the tool format the case uses (the docs' table).
    features: tuple[str, ...] = ()
    # The access token of each sign-in the tool names (oauth2).
    tokens: dict[str, str] = field(default_factory=dict)

    async def token(self, sign_in: str) -> str:
        """The engine's token source: the case's token of `sign_in`."""
        return self.tokens[sign_in]

    @property
    def name(self) -> str:
        """`service: operation`, a test id."""
        return f"{self.service}: {self.operation}"

    def raw_bodies(self) -> list[bytes]:
        """What each route answers, as the service sends it."""
        return [route.body for _, route, _ in self.routes]


def _secret_value(text: str, values: dict[str, str]) -> str:
    """`{secret:name}` in a case's credentials, filled from its secrets."""
    for name, value in values.items():
        text = text.replace(f"{{secret:{name}}}", value)
    return text


def _route(
    raw: dict[str, Any],
    folder: Path,
    values: dict[str, str],
    tokens: dict[str, str],
) -> Route:
    body = (folder / raw["file"]).read_bytes() if raw.get("file") else b""

    def read_file(name: str) -> bytes:
        return (folder / name).read_bytes()

    def fill(text: str) -> str:
        return _secret_value(text, values)

    def credentials(key: str) -> tuple[str, str] | None:
        pair = raw.get(key)
        if pair is None:
            return None
        return (_secret_value(pair[0], values), _secret_value(pair[1], values))

    return Route(
        status=raw.get("status", 200),
        body=body,
        content_type=raw.get("content_type"),
        headers=raw.get("headers", {}),
        basic=credentials("basic"),
        digest=credentials("digest"),
        bearer=tokens[raw["bearer"]] if "bearer" in raw else None,
        method=raw.get("method"),
        login=login_of(raw.get("login"), read_file, fill),
        guard=guard_of(raw.get("session"), read_file),
    )


def load_tools(service: str) -> list[dict[str, Any]]:
    """A service's `tools.json`, as written."""
    tools: list[dict[str, Any]] = json.loads(
        (SERVICES / service / "tools.json").read_text(encoding="utf-8")
    )
    return tools


def load_cases() -> list[Case]:
    """Every case of every service, in the folders' order."""
    cases: list[Case] = []
    for folder in sorted(p for p in SERVICES.iterdir() if p.is_dir()):
        for raw in json.loads((folder / "cases.json").read_text(encoding="utf-8")):
            values = raw.get("secrets", {})
            tokens = raw.get("tokens", {})
            cases.append(
                Case(
                    service=folder.name,
                    operation=raw["operation"],
                    tool=raw["tool"],
                    arguments=raw.get("arguments", {}),
                    secrets=values,
                    routes=tuple(
                        (
                            r["path"],
                            _route(r, folder, values, tokens),
                            r.get("file", ""),
                        )
                        for r in raw["routes"]
                    ),
                    requests=tuple(
                        Expected(
                            e["target"],
                            e.get("body"),
                            e.get("headers", {}),
                            tuple(e.get("absent_headers", ())),
                        )
                        for e in raw["requests"]
                    ),
                    reads=raw.get("reads"),
                    needle=raw["needle"],
                    speech=raw.get("speech"),
                    ok=raw.get("ok", True),
                    features=tuple(raw.get("features", ())),
                    tokens=tokens,
                )
            )
    return cases


def pointed(url: str, base: str) -> str:
    """`url` (a template) with its origin replaced by `base`."""
    scheme, _, rest = url.partition("://")
    cut = min((i for i in map(rest.find, "/?#") if i != -1), default=len(rest))
    del scheme
    return base + rest[cut:]


def tools_at(service: str, base: str) -> dict[str, ToolDefinition]:
    """A service's tools with every request pointed at `base`."""
    raw = load_tools(service)
    for tool in raw:
        steps = tool.get("steps", [])
        logouts = [step["session"].get("logout") for step in steps if "session" in step]
        for request in [tool, *steps, *(x for x in logouts if x)]:
            if "url" in request:
                request["url"] = pointed(request["url"], base)
    return {definition.name: definition for definition in parse_tools(raw)}


def serve(server: ServiceServer, case: Case) -> None:
    """Give `server` the case's routes (and forget earlier requests)."""
    server.routes_by_path.clear()
    server.arrived.clear()
    server.sessions = Sessions()
    for path, route, _ in case.routes:
        server.routes_by_path[path] = route


def host_of(url: str) -> str:
    """The host of a URL (for the host policy of a case)."""
    return URL(url).host or ""


def iter_services() -> Iterator[str]:
    """The services that have fixtures."""
    yield from sorted(p.name for p in SERVICES.iterdir() if p.is_dir())
