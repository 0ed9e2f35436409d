"""The ``pages`` field of a definition: how a list spread over several
pages is followed, and how many pages at most, checked with an error per
field.

Following the pages is :mod:`.pages`; the rules are in
``docs/tool-format.md`` ("Lists over several pages").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
import re
from typing import Any, Literal

from .paths import parse_path
from .problems import FieldProblems, check_known_fields, type_name

# One of these says where the next page is.
PAGE_WAYS = ("next", "link_header", "page", "offset")
PAGES_FIELDS = (*PAGE_WAYS, "start", "max_pages")
# Five pages of a service's usual 25 to 100 items answer a voice question;
# more would spend the call's time limit on a list nobody hears whole.
DEFAULT_MAX_PAGES = 5
MAX_PAGES = 50
# A query parameter's name as services write it (`page`, `pageSize`,
# `page[number]`, `offset`).
_PARAM_RE = re.compile(r"[A-Za-z0-9_.~\[\]-]{1,64}")

Way = Literal["next", "link_header", "page", "offset"]


@dataclass(frozen=True, slots=True)
class Pages:
    """How the next page is found: ``next``, a path in the answer to its
    URL; ``link_header``, the ``Link`` header's ``rel="next"``; ``page``,
    a query parameter counting pages; ``offset``, one counting items."""

    way: Way
    # The path (`next`) or the query parameter (`page`, `offset`).
    name: str = ""
    # The first page's number when the URL does not say it (`page`).
    start: int = 1
    max_pages: int = DEFAULT_MAX_PAGES

    def as_dict(self) -> dict[str, Any]:
        """Back to the file format."""
        data: dict[str, Any] = {
            self.way: True if self.way == "link_header" else self.name
        }
        if self.way == "page" and self.start != 1:
            data["start"] = self.start
        if self.max_pages != DEFAULT_MAX_PAGES:
            data["max_pages"] = self.max_pages
        return data


def parse_pages(raw: object, out: FieldProblems) -> Pages | None:
    """The ``pages`` field (None: absent, or wrong and said in ``out``)."""
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        out.add(
            "pages",
            'must be an object, e.g. {"next": "next"} or {"page": "page"}, got '
            f"{type_name(raw)}",
        )
        return None
    before = out.count
    check_known_fields(raw, PAGES_FIELDS, out, prefix="pages.")
    ways = [way for way in PAGE_WAYS if raw.get(way) is not None]
    if len(ways) != 1:
        out.add(
            "pages",
            "say where the next page is with one of: next (the answer's member "
            "holding its URL), link_header (true: the Link header's "
            'rel="next"), page (the query parameter counting pages), offset '
            "(the query parameter counting items)"
            + (f"; got {', '.join(ways)}" if ways else ""),
        )
        return None
    way: Way = ways[0]  # type: ignore[assignment]
    value = raw[way]
    where = f"pages.{way}"
    name = ""
    if way == "link_header":
        if value is not True:
            out.add(where, "must be true (false: leave pages out)")
    elif not isinstance(value, str):
        out.add(where, f"must be a string, got {type_name(value)}")
    elif way == "next":
        try:
            parse_path(value)
        except ValueError as err:
            out.add(where, f"'{value}' is not a path: {err}")
        name = value
    elif _PARAM_RE.fullmatch(value) is None:
        out.add(
            where, "must be a query parameter's name (letters, digits, _ . - ~ [ ])"
        )
    else:
        name = value
    start = raw.get("start")
    if start is not None and way != "page":
        out.add("pages.start", "only with page (the first page's number)")
    elif start is not None and (
        isinstance(start, bool) or not isinstance(start, int) or start < 0
    ):
        out.add("pages.start", "must be an integer, 0 or more")
    max_pages = raw.get("max_pages", DEFAULT_MAX_PAGES)
    if max_pages is None:
        max_pages = DEFAULT_MAX_PAGES
    if (
        isinstance(max_pages, bool)
        or not isinstance(max_pages, int)
        or not 2 <= max_pages <= MAX_PAGES
    ):
        out.add("pages.max_pages", f"must be an integer from 2 to {MAX_PAGES}")
    if out.count != before:
        return None
    return Pages(way, name, start if isinstance(start, int) else 1, max_pages)
