"""Lists over several pages: a paged tool follows the next page (a `next`
URL in the answer, the `Link` header, a `page` or `offset` parameter) up to
its `max_pages`, joins every page's items before `where`, `sort` and
`count`, and what the model reads and the read-out say where it stopped: at
the limit, at a page that failed, at a next URL on another server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
import contextlib
from dataclasses import dataclass, field
import json
from typing import Any

import aiohttp
from aiohttp import web
import pytest

from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinitionError,
    parse_tools,
)
from custom_components.http_tools_agent.engine.executor import Outcome, run_tool
from custom_components.http_tools_agent.engine.hosts import HostPolicy
from custom_components.http_tools_agent.engine.speakable import speakable
from custom_components.http_tools_agent.lexicon import LEXICONS
from dev.loopback import LoopbackServer, Recorded

TOKEN = "tok-9f8e7d6c"
# 23 documents, as a Paperless archive or a Gitea repository holds them.
DOCUMENTS = [
    {
        "id": n,
        "title": f"Doc {n}",
        "insurance": n % 5 == 0,
        "added": f"2026-{(n % 12) + 1:02d}-{n:02d}",
    }
    for n in range(1, 24)
]
SIZE = 10


def _page(number: int) -> list[dict[str, Any]]:
    return DOCUMENTS[(number - 1) * SIZE : number * SIZE]


@dataclass
class PagedServer(LoopbackServer):
    """The same 23 documents paged four ways, as real services page them;
    every request recorded."""

    arrived: list[Recorded] = field(default_factory=list)
    # A page that answers 500 (`Server Error`), or None.
    broken: int | None = None
    # Where the `next` URLs point (None: this server).
    next_base: str | None = None

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/api/documents/", self._drf)
        app.router.add_get("/api/v1/repos/me/docs", self._gitea)
        app.router.add_get("/api/v3/wanted/missing", self._arr)
        app.router.add_get("/api/items", self._offset)

    async def _record(self, request: web.Request) -> int:
        self.arrived.append(await Recorded.raw(request))
        return int(request.query.get("page", "1"))

    def _broken(self, number: int) -> web.Response | None:
        if number == self.broken:
            return web.json_response({"detail": "Server Error"}, status=500)
        return None

    async def _drf(self, request: web.Request) -> web.Response:
        """Django REST framework (Paperless-ngx): `next` is an absolute URL."""
        number = await self._record(request)
        if (refused := self._broken(number)) is not None:
            return refused
        base = self.next_base or self.url
        more = number * SIZE < len(DOCUMENTS)
        return web.json_response(
            {
                "count": len(DOCUMENTS),
                "next": f"{base}/api/documents/?page={number + 1}&query=x"
                if more
                else None,
                "previous": None,
                "results": _page(number),
            }
        )

    async def _gitea(self, request: web.Request) -> web.Response:
        """Gitea and GitHub: a bare list, the next page in `Link`."""
        number = await self._record(request)
        last = -(-len(DOCUMENTS) // SIZE)
        links = [f'<{self.url}/api/v1/repos/me/docs?page={last}>; rel="last"']
        if number < last:
            links.insert(
                0, f'<{self.url}/api/v1/repos/me/docs?page={number + 1}>; rel="next"'
            )
        return web.json_response(
            _page(number),
            headers={"Link": ", ".join(links), "X-Total-Count": str(len(DOCUMENTS))},
        )

    async def _arr(self, request: web.Request) -> web.Response:
        """Sonarr and Radarr: `page` and `pageSize`, the records inside."""
        number = await self._record(request)
        size = int(request.query["pageSize"])
        records = DOCUMENTS[(number - 1) * size : number * size]
        return web.json_response(
            {
                "page": number,
                "pageSize": size,
                "totalRecords": len(DOCUMENTS),
                "records": records,
            }
        )

    async def _offset(self, request: web.Request) -> web.Response:
        """An offset and a limit (20 items: the third page is empty)."""
        await self._record(request)
        offset, limit = (
            int(request.query.get("offset", "0")),
            int(request.query["limit"]),
        )
        return web.json_response({"items": DOCUMENTS[:20][offset : offset + limit]})


@pytest.fixture
async def paged(socket_enabled: None) -> AsyncIterator[PagedServer]:
    async with PagedServer() as server:
        yield server


def tool(server: PagedServer, **fields: Any) -> Any:
    """A paged tool on `server` (its URL's path given)."""
    raw = {
        "name": "documents",
        "url": server.url + fields.pop("path"),
        "method": "GET",
        "headers": {"Authorization": "Token {secret:token}"},
        **fields,
    }
    (definition,) = parse_tools([raw])
    return definition


async def call(session: aiohttp.ClientSession, definition: Any, **options: Any) -> Any:
    return await run_tool(
        session,
        definition,
        {},
        secrets={"token": TOKEN},
        hosts=HostPolicy.parse(["127.0.0.1", "localhost"]),
        **options,
    )


def targets(server: PagedServer) -> list[str]:
    return [request.target for request in server.arrived]


async def test_a_next_url_in_the_answer_is_followed_to_the_last_page(
    paged: PagedServer, session: aiohttp.ClientSession
) -> None:
    """Paperless's `next`: every page is read, with the token on each, and
    `where` finds the insurance documents of all three pages."""
    definition = tool(
        paged,
        path="/api/documents/?query=x",
        pages={"next": "next"},
        response={"path": "results", "where": {"insurance": True}, "fields": ["title"]},
    )

    result = await call(session, definition)

    assert targets(paged) == [
        "GET /api/documents/?query=x",
        "GET /api/documents/?page=2&query=x",
        "GET /api/documents/?page=3&query=x",
    ]
    assert all(r.headers["Authorization"] == f"Token {TOKEN}" for r in paged.arrived)
    assert result.ok
    assert json.loads(result.text) == {
        "items": [{"title": f"Doc {n}"} for n in (5, 10, 15, 20)],
        "of": 23,
    }


async def test_the_link_header_is_followed_and_sort_sees_every_page(
    paged: PagedServer, session: aiohttp.ClientSession
) -> None:
    """Gitea's `Link: <…>; rel="next"`: the newest two of all 23, though
    they are on different pages."""
    definition = tool(
        paged,
        path="/api/v1/repos/me/docs",
        pages={"link_header": True},
        response={
            "sort": {"by": "added", "order": "desc"},
            "max_items": 2,
            "fields": ["title", "added"],
        },
    )

    result = await call(session, definition)

    assert targets(paged) == [
        "GET /api/v1/repos/me/docs",
        "GET /api/v1/repos/me/docs?page=2",
        "GET /api/v1/repos/me/docs?page=3",
    ]
    assert result.text == (
        '{"items":[{"title":"Doc 23","added":"2026-12-23"},'
        '{"title":"Doc 11","added":"2026-12-11"}],"of":23}'
    )


async def test_a_page_parameter_counts_every_page_and_a_short_page_is_the_last(
    paged: PagedServer, session: aiohttp.ClientSession
) -> None:
    """Sonarr's `page`/`pageSize`: 23 records in pages of 10, counted; the
    third page holds 3, so no fourth is asked for."""
    definition = tool(
        paged,
        path="/api/v3/wanted/missing?page=1&pageSize=10",
        pages={"page": "page"},
        response={"path": "records", "count": True},
        speech="{.} episodes are missing.",
    )

    result = await call(session, definition)

    assert targets(paged) == [
        "GET /api/v3/wanted/missing?page=1&pageSize=10",
        "GET /api/v3/wanted/missing?page=2&pageSize=10",
        "GET /api/v3/wanted/missing?page=3&pageSize=10",
    ]
    assert result.text == "23"
    assert result.speech == "23 episodes are missing."


async def test_an_offset_moves_by_the_items_read_until_a_page_is_empty(
    paged: PagedServer, session: aiohttp.ClientSession
) -> None:
    """`offset` and `limit`: 20 items, the third page empty."""
    definition = tool(
        paged,
        path="/api/items?limit=10",
        pages={"offset": "offset"},
        response={"path": "items", "fields": ["id"]},
    )

    result = await call(session, definition)

    assert targets(paged) == [
        "GET /api/items?limit=10",
        "GET /api/items?limit=10&offset=10",
        "GET /api/items?limit=10&offset=20",
    ]
    assert json.loads(result.text) == [{"id": n} for n in range(1, 21)]


async def test_the_limit_stops_it_and_the_model_and_the_read_out_say_so(
    paged: PagedServer, session: aiohttp.ClientSession
) -> None:
    """`max_pages: 2` of three: two pages read, and both what the model reads
    and the read-out say there are more; the tool's sentence, which would
    say the part as the whole, is left unsaid."""
    definition = tool(
        paged,
        path="/api/documents/?query=x",
        pages={"next": "next", "max_pages": 2},
        response={"path": "results", "where": {"insurance": True}, "fields": ["title"]},
        speech="Found: {[].title}.",
    )

    result = await call(session, definition)

    assert len(paged.arrived) == 2
    assert result.ok
    assert result.outcome is Outcome.DONE
    assert result.speech is None
    assert json.loads(result.text) == {
        "items": [{"title": f"Doc {n}"} for n in (5, 10, 15, 20)],
        "of": 20,
        "pages": 2,
        "more": "the pages after the first 2 were not read",
    }
    spoken = {
        language: speakable(result.text, words=LEXICONS[language].read_out)
        for language in ("en", "it", "de")
    }
    assert spoken == {
        "en": "4 of 20 items (first 2 pages, there are more): "
        "Doc 5, Doc 10, Doc 15 and Doc 20",
        "it": "4 di 20 elementi (prime 2 pagine, ce ne sono altre): "
        "Doc 5, Doc 10, Doc 15 e Doc 20",
        "de": "4 von 20 Einträgen (erste 2 Seiten, es gibt mehr): "
        "Doc 5, Doc 10, Doc 15 und Doc 20",
    }


async def test_a_count_stopped_at_the_limit_is_no_bare_number(
    paged: PagedServer, session: aiohttp.ClientSession
) -> None:
    """A count read from two pages of three is not said as the total."""
    definition = tool(
        paged,
        path="/api/v3/wanted/missing?pageSize=10",
        pages={"page": "page", "max_pages": 2},
        response={"path": "records", "count": True},
    )

    result = await call(session, definition)

    assert json.loads(result.text) == {
        "count": 20,
        "pages": 2,
        "more": "the pages after the first 2 were not read",
    }
    assert speakable(result.text) == "20 (first 2 pages, there are more)"


async def test_a_next_url_on_another_server_is_not_followed(
    paged: PagedServer, session: aiohttp.ClientSession
) -> None:
    """A `next` on another host (a Paperless behind a proxy that names
    itself `localhost`) is refused, even where the host policy allows it:
    the token never leaves the first page's server. The first page is read,
    and the model reads why it stopped."""
    paged.next_base = f"http://localhost:{paged.port}"
    definition = tool(
        paged,
        path="/api/documents/?query=x",
        pages={"next": "next"},
        response={"path": "results", "max_items": 2, "fields": ["title"]},
    )

    result = await call(session, definition)

    assert targets(paged) == ["GET /api/documents/?query=x"]
    assert json.loads(result.text) == {
        "items": [{"title": "Doc 1"}, {"title": "Doc 2"}],
        "of": 10,
        "pages": 1,
        "failed": f"page 2 was not read: its URL is on another server "
        f"(localhost:{paged.port}); only the first page's server is followed",
    }
    assert speakable(result.text) == "2 of 10 items (page 2 failed): Doc 1 and Doc 2"


async def test_a_page_that_fails_midway_keeps_the_pages_before_it(
    paged: PagedServer, session: aiohttp.ClientSession
) -> None:
    """Page 3 answers 500: the model reads the first two pages' items and
    the error, in every language the read-out says which page failed."""
    paged.broken = 3
    definition = tool(
        paged,
        path="/api/documents/?query=x",
        pages={"next": "next"},
        response={"path": "results", "where": {"insurance": True}, "fields": ["title"]},
    )

    result = await call(session, definition)

    assert len(paged.arrived) == 3
    assert result.ok
    assert json.loads(result.text) == {
        "items": [{"title": f"Doc {n}"} for n in (5, 10, 15, 20)],
        "of": 20,
        "pages": 2,
        "failed": 'page 3: Error: HTTP 500 — {"detail":"Server Error"}',
    }
    said = {
        language: speakable(result.text, words=lexicon.read_out).split(":")[0]
        for language, lexicon in LEXICONS.items()
    }
    assert said == {
        "de": "4 von 20 Einträgen (Seite 3 schlug fehl)",
        "en": "4 of 20 items (page 3 failed)",
        "es": "4 de 20 elementos (la página 3 falló)",
        "fr": "4 sur 20 éléments (la page 3 a échoué)",
        "it": "4 di 20 elementi (la pagina 3 non è riuscita)",
    }


async def test_a_first_page_that_fails_is_the_call_failing(
    paged: PagedServer, session: aiohttp.ClientSession
) -> None:
    """Nothing read: the error as any tool's."""
    paged.broken = 1
    definition = tool(
        paged,
        path="/api/documents/",
        pages={"next": "next"},
        response={"path": "results"},
    )

    result = await call(session, definition)

    assert not result.ok
    assert result.outcome is Outcome.HTTP_ERROR
    assert result.text == 'Error: HTTP 500 — {"detail":"Server Error"}'


@dataclass
class SlowSecondPage(LoopbackServer):
    """A list whose second page takes five seconds (or until released)."""

    release: asyncio.Event = field(default_factory=asyncio.Event)

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/list", self._list)

    async def _list(self, request: web.Request) -> web.Response:
        if "page" in request.query:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.release.wait(), 5)
            return web.json_response({"results": [], "next": None})
        following = str(request.url.with_query(page=2))
        return web.json_response({"results": [{"title": "Doc 1"}], "next": following})


async def test_pages_fit_in_the_tool_time_limit(
    socket_enabled: None, session: aiohttp.ClientSession
) -> None:
    """A slow second page: the call ends at the tool's time limit, with the
    first page read and the timeout said."""
    async with SlowSecondPage() as server:
        (definition,) = parse_tools(
            [
                {
                    "name": "slow",
                    "url": server.url + "/list",
                    "method": "GET",
                    "timeout": 0.5,
                    "pages": {"next": "next"},
                    "response": {"path": "results"},
                }
            ]
        )
        result = await run_tool(session, definition, {})
        server.release.set()

    assert result.duration < 2
    assert json.loads(result.text) == {
        "items": [{"title": "Doc 1"}],
        "pages": 1,
        "failed": "page 2: Error: tool request failed: timeout after 0.5 s",
    }


def test_pages_round_trip() -> None:
    """What the editor stores is what was written (defaults left out)."""
    raw = {
        "name": "missing",
        "url": "http://sonarr.local:8989/api/v3/wanted/missing?pageSize=50",
        "method": "GET",
        "pages": {"page": "page", "start": 0, "max_pages": 3},
        "response": {"path": "records"},
    }
    (definition,) = parse_tools([raw])
    assert definition.as_dict()["pages"] == {"page": "page", "start": 0, "max_pages": 3}
    (again,) = parse_tools([definition.as_dict()])
    assert again == definition


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"pages": "next"}, 'pages: must be an object, e.g. {"next": "next"}'),
        ({"pages": {}}, "pages: say where the next page is with one of: next"),
        (
            {"pages": {"next": "next", "page": "page"}},
            "pages: say where the next page is with one of: next (the answer's "
            "member holding its URL), link_header (true: the Link header's "
            'rel="next"), page (the query parameter counting pages), offset '
            "(the query parameter counting items); got next, page",
        ),
        ({"pages": {"next": "results[x"}}, "pages.next: 'results[x' is not a path"),
        ({"pages": {"link_header": False}}, "pages.link_header: must be true"),
        ({"pages": {"page": "p&q"}}, "pages.page: must be a query parameter's name"),
        ({"pages": {"offset": 10}}, "pages.offset: must be a string, got number"),
        (
            {"pages": {"next": "next", "start": 1}},
            "pages.start: only with page (the first page's number)",
        ),
        (
            {"pages": {"page": "page", "start": -1}},
            "pages.start: must be an integer, 0 or more",
        ),
        (
            {"pages": {"next": "next", "max_pages": 1}},
            "pages.max_pages: must be an integer from 2 to 50",
        ),
        (
            {"pages": {"next": "next", "max_page": 3}},
            "pages.max_page: unknown field (did you mean 'max_pages'?)",
        ),
        (
            {"pages": {"next": "next"}, "method": "POST"},
            "pages: a paged tool only reads (its request is sent once per page): "
            'a search sent as POST says "read_only": true',
        ),
        (
            {
                "pages": {"next": "next"},
                "url": None,
                "method": None,
                "steps": [{"name": "a", "url": "http://x.local/a", "method": "GET"}],
            },
            "pages: not with steps: a paged tool is one request, sent per page",
        ),
        ({"pgaes": {"next": "next"}}, "pgaes: unknown field (did you mean 'pages'?)"),
    ],
)
def test_a_wrong_pages_field_is_named(fields: dict[str, Any], problem: str) -> None:
    """Each mistake names the tool and the field."""
    raw = {"name": "docs", "url": "http://x.local/api", "method": "GET", **fields}
    with pytest.raises(ToolDefinitionError) as caught:
        parse_tools([raw])
    assert f"tool #0 'docs': {problem}" in str(caught.value)


def test_a_search_sent_as_post_that_reads_may_be_paged() -> None:
    """`read_only: true` says the POST only reads."""
    (definition,) = parse_tools(
        [
            {
                "name": "search",
                "url": "http://x.local/api/search?page=1",
                "method": "POST",
                "read_only": True,
                "pages": {"page": "page"},
            }
        ]
    )
    assert definition.pages is not None


@dataclass
class OddSecondPage(LoopbackServer):
    """A first page of two items whose `next` (or second page) is `odd`."""

    next_value: Any = "/list?page=2"
    second: bytes = b'{"results": [], "next": null}'

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/list", self._list)

    async def _list(self, request: web.Request) -> web.Response:
        if "page" in request.query:
            return web.Response(body=self.second, content_type="application/json")
        return web.json_response(
            {
                "results": [{"title": "Doc 1"}, {"title": "Doc 2"}],
                "next": self.next_value,
            }
        )


@pytest.mark.parametrize(
    ("odd", "failed"),
    [
        ({"next_value": 2}, "page 2 was not read: its 'next' is no URL"),
        ({"next_value": "http://[bad"}, "page 2 was not read: its next URL is no URL"),
        (
            {"second": b'{"detail": "Invalid page."}'},
            'page 2: \'results\' is no list: {"detail":"Invalid page."}',
        ),
        ({"second": b"Maintenance"}, "page 2: 'results' is no list: Maintenance"),
        (
            {"second": b'{"results": ["' + b"x" * 5000 + b'"], "next": null}'},
            "page 2 was not read whole: it is larger than 4 KB",
        ),
    ],
)
async def test_a_later_page_that_cannot_be_read_is_said(
    socket_enabled: None,
    session: aiohttp.ClientSession,
    odd: dict[str, Any],
    failed: str,
) -> None:
    """A `next` that is no URL, a page without its list, a page over the
    byte cap: the first page is read, and the model reads why it stopped."""
    async with OddSecondPage(**odd) as server:
        (definition,) = parse_tools(
            [
                {
                    "name": "docs",
                    "url": server.url + "/list",
                    "method": "GET",
                    "pages": {"next": "next"},
                    "response": {"path": "results"},
                }
            ]
        )
        result = await run_tool(session, definition, {}, max_bytes=4096)

    assert result.ok
    assert json.loads(result.text) == {
        "items": [{"title": "Doc 1"}, {"title": "Doc 2"}],
        "pages": 1,
        "failed": failed,
    }
