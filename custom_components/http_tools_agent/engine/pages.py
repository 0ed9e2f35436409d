"""A list over several pages: after the first page, the next ones are
requested (a ``next`` URL in the answer, the ``Link`` header's
``rel="next"``, a ``page`` or ``offset`` query parameter) up to the tool's
``max_pages``, and every page's items go through one
:class:`~.shapes.ItemPicker`, so ``where``, ``sort``, ``max_items`` and
``count`` see the whole list while memory holds one page and the items kept.

Each page is sent as the first was (headers, secrets, credentials, the
call's cookies): only to the first page's server (a next URL elsewhere is
not followed, and says so), within the call's time limit, each read whole
up to the byte cap, a busy answer tried again like any request. A page that
fails keeps what the pages before it gave; what the model reads says where
it stopped (:func:`paged_answer`). The field is :mod:`.page_field`; the rules
are in ``docs/tool-format.md`` ("Lists over several pages").
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
import re
from typing import Any

from yarl import URL

from .bodies import Body, compact_json, size_words
from .call_steps import Call, StepFailure, send_step
from .page_field import Pages
from .paths import MISSING, find, parse_path
from .requests import PreparedRequest
from .shapes import MAX_ITEMS, ItemPicker, ResponseShape, zone_of
from .transport import Response, same_host

# `<https://x/?page=2>; rel="next", <…>; rel="last"` (RFC 8288).
_LINK_RE = re.compile(r"<([^>]*)>\s*((?:;[^,<]*)*)")
_REL_RE = re.compile(r"""rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))""", re.IGNORECASE)


@dataclass(slots=True)
class Paged:
    """What the pages gave."""

    picker: ItemPicker
    # Pages read (the first included).
    read: int = 1
    # The limit stopped it while there was a next page.
    more: bool = False
    # Why the next page was not read: `page 3: Error: HTTP 500 — …`.
    failed: str | None = None

    @property
    def whole(self) -> bool:
        """Every page was read."""
        return not self.more and self.failed is None


def link_next(response: Response) -> str | None:
    """The ``rel="next"`` target of the answer's ``Link`` headers."""
    headers = response.headers
    getall = getattr(headers, "getall", None)
    values = getall("Link", []) if getall is not None else [headers.get("Link", "")]
    for value in values:
        for target, params in _LINK_RE.findall(value or ""):
            for match in _REL_RE.finditer(params):
                rels = (match.group(1) or match.group(2) or "").lower().split()
                if "next" in rels:
                    return str(target).strip()
    return None


def with_query(url: URL, name: str, value: int) -> URL:
    """``url`` with its query parameter ``name`` set to ``value`` (in its
    place, or last); the rest of the query kept byte for byte."""
    pairs = url.raw_query_string.split("&") if url.raw_query_string else []
    wanted = f"{name}={value}"
    found = False
    kept: list[str] = []
    for pair in pairs:
        if pair.partition("=")[0] == name:
            if not found:
                kept.append(wanted)
            found = True
        else:
            kept.append(pair)
    if not found:
        kept.append(wanted)
    return (
        url.with_query(None)
        .with_fragment(None)
        .join(URL("?" + "&".join(kept), encoded=True))
    )


def _number_in(url: URL, name: str) -> int | None:
    for pair in url.raw_query_string.split("&"):
        key, _, value = pair.partition("=")
        if key == name and value.isdigit():
            return int(value)
    return None


def _items(body: Body, shape: ResponseShape) -> Any:
    """The list a page holds at the shape's path (MISSING: none)."""
    if body.value is MISSING:
        return MISSING
    value = body.value
    if shape.path is not None:
        value = find(value, parse_path(shape.path))
    return value if isinstance(value, list) else MISSING


def first_items(body: Body, shape: ResponseShape) -> list[Any] | None:
    """The first page's list, or None: nothing to page (the answer is read
    as any other)."""
    items = _items(body, shape)
    return None if items is MISSING else list(items)


class _Cursor:
    """Where the next page is, for each way of saying it."""

    def __init__(self, pages: Pages, url: URL, first: int) -> None:
        self.pages = pages
        self.url = url
        # A page shorter than the first is the last (`page`, `offset`).
        self.first = first
        self.page = _number_in(url, pages.name) if pages.way == "page" else None
        if self.page is None:
            self.page = pages.start
        self.offset = _number_in(url, pages.name) or 0
        self.seen = {str(url)}

    def next(self, response: Response, body: Body, count: int) -> URL | str | None:
        """The next page's URL; None: this was the last; a text: why it
        cannot be read."""
        pages = self.pages
        if pages.way in ("page", "offset"):
            if count == 0 or count < self.first:
                return None
            if pages.way == "page":
                self.page = (self.page or 0) + 1
                return with_query(self.url, pages.name, self.page)
            self.offset += count
            return with_query(self.url, pages.name, self.offset)
        if pages.way == "link_header":
            target: Any = link_next(response)
        else:
            found = find(body.value, parse_path(pages.name))
            target = None if found is MISSING else found
        if target is None or target == "":
            return None
        if not isinstance(target, str):
            return f"its '{pages.name}' is no URL"
        try:
            joined = self.url.join(URL(target.strip()))
        except ValueError:
            return "its next URL is no URL"
        joined = joined.with_fragment(None)
        # A server that points back at a page already read has no more.
        return None if str(joined) in self.seen else joined

    def moved(self, url: URL) -> None:
        self.url = url
        self.seen.add(str(url))


async def read_pages(
    call: Call,
    first: PreparedRequest,
    response: Response,
    body: Body,
    items: list[Any],
    time_zone: str | None,
) -> Paged:
    """Every page's items in one picker, from the first page's ``items``
    (of its ``response`` and ``body``) on."""
    definition = call.definition
    pages = definition.pages
    shape = definition.response or ResponseShape()
    assert pages is not None
    picker = ItemPicker(shape, zone_of(shape, time_zone), at_most=MAX_ITEMS)
    for item in items:
        picker.add(item)
    paged = Paged(picker)
    start = URL(first.url, encoded=True)
    cursor = _Cursor(pages, start, len(items))
    step = definition.requests[0]
    count = len(items)
    while True:
        number = paged.read + 1
        target = cursor.next(response, body, count)
        if target is None:
            return paged
        if isinstance(target, str):
            paged.failed = f"page {number} was not read: {target}"
            return paged
        if paged.read >= pages.max_pages:
            paged.more = True
            return paged
        hosts = call.hosts
        if not same_host(start, target) or (
            hosts is not None and not hosts.allows(target.host)
        ):
            paged.failed = (
                f"page {number} was not read: its URL is on another server "
                f"({target.host}:{target.port}); only the first page's server "
                "is followed"
            )
            return paged
        prepared = replace(first, url=str(target))
        try:
            async with asyncio.timeout_at(call.deadline):
                response, body, _ = await send_step(call, step, prepared)
        except TimeoutError:
            paged.failed = (
                f"page {number}: Error: tool request failed: timeout after "
                f"{call.seconds:g} s"
            )
            return paged
        except StepFailure as failure:
            paged.failed = f"page {number}: {failure.text}"
            return paged
        if response.capped:
            paged.failed = (
                f"page {number} was not read whole: it is larger than "
                f"{size_words(call.limits.whole)}"
            )
            return paged
        found = _items(body, shape)
        if found is MISSING:
            where = f"'{shape.path}'" if shape.path else "the answer"
            paged.failed = f"page {number}: {where} is no list: {body.text[:200]}"
            return paged
        for item in found:
            picker.add(item)
        count = len(found)
        paged.read = number
        cursor.moved(target)


def paged_answer(paged: Paged) -> tuple[Any, str]:
    """(what a sentence reads, what the model reads): as one list when every
    page was read; else with ``pages`` read and ``more`` (the limit stopped
    it) or ``failed`` (why the next page was not read)."""
    picker = paged.picker
    value, text = picker.answer()
    if paged.whole:
        return value, text
    shown: dict[str, Any] = {}
    if picker.shape.count:
        shown["count"] = picker.matched
    else:
        shown["items"] = value
        if len(value) < picker.total:
            shown["of"] = picker.total
    shown["pages"] = paged.read
    if paged.more:
        shown["more"] = f"the pages after the first {paged.read} were not read"
    if paged.failed is not None:
        shown["failed"] = paged.failed
    return value, compact_json(shown)
