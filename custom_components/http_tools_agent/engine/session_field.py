"""A composite tool's login kept across calls: the ``session`` field of a step.

``"session": {"keep_seconds": 1500, "logout": {...}}`` makes a step the
tool's login. Its answer (JSON body, headers, the cookies it sets) is kept
for ``keep_seconds`` after it was given and reused by the calls that send
the same login request; a later step answered 401 or 403 logs in again once
(:mod:`.sessions` keeps them, :mod:`.executor` runs them). ``logout`` (``url``,
``method``, ``headers``, ``body``, ``body_format``) is the request that ends
a kept login when it is dropped; its templates read the login's answer as
the later steps do, with secrets and fixed text (no arguments: it is sent
after the call). The rules are in ``docs/tool-format.md`` ("Logins kept
across calls").
"""

from __future__ import annotations

from dataclasses import dataclass, field
import math
from typing import Any

from .fields import SENT_FIELDS, parse_headers, parse_method, parse_url
from .problems import FieldProblems, object_field
from .request_fields import body_templates, parse_body, sent_as_dict

SESSION_FIELDS = ("keep_seconds", "logout")
# A week: no service keeps a session longer, and a longer one is a typo.
MAX_KEEP_SECONDS = 604_800.0
# The answers of a later step that send the call back to its login.
REFUSED_STATUSES = frozenset({401, 403})


@dataclass(frozen=True, slots=True)
class Logout:
    """The request that ends a kept login."""

    url: str
    method: str
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    body_format: str = "json"

    def as_dict(self) -> dict[str, Any]:
        """Back to the file format."""
        return sent_as_dict(
            self.url, self.method, self.headers, self.body, self.body_format
        )

    def templates(self, prefix: str) -> list[tuple[str, str]]:
        """Every template of the request with its place (for secret checks)."""
        found = [(f"{prefix}url", self.url)]
        found += [(f"{prefix}headers.{k}", v) for k, v in self.headers.items()]
        found += body_templates(self.body, f"{prefix}body")
        return found


@dataclass(frozen=True, slots=True)
class Session:
    """How a login step's answer is kept."""

    keep_seconds: float
    logout: Logout | None = None

    def as_dict(self) -> dict[str, Any]:
        """Back to the file format."""
        data: dict[str, Any] = {"keep_seconds": self.keep_seconds}
        if self.logout is not None:
            data["logout"] = self.logout.as_dict()
        return data


def _parse_logout(
    raw: object, where: str, earlier: tuple[str, ...], out: FieldProblems
) -> Logout | None:
    before = out.count
    raw = object_field(raw, where, SENT_FIELDS, out)
    if raw is None:
        return None
    prefix = f"{where}."
    # No declared parameter: the logout is sent after the call, without it.
    url = parse_url(raw.get("url"), set(), out, field=f"{prefix}url", earlier=earlier)
    method = parse_method(raw.get("method"), out, field=f"{prefix}method")
    headers = parse_headers(
        raw.get("headers"), set(), out, prefix=prefix, earlier=earlier
    )
    body, body_format = parse_body(
        raw.get("body"),
        raw.get("body_format"),
        method,
        set(),
        out,
        prefix=prefix,
        earlier=earlier,
        leftovers=False,
    )
    if out.count != before or url is None or method is None:
        return None
    return Logout(url, method, headers, body, body_format)


def parse_session(
    raw: object, prefix: str, earlier: tuple[str, ...], out: FieldProblems
) -> Session | None:
    """A step's ``session`` (None: absent or invalid); ``earlier`` are the
    steps the logout may read, the login among them."""
    where = f"{prefix}session"
    if raw is None:
        return None
    before = out.count
    raw = object_field(raw, where, SESSION_FIELDS, out)
    if raw is None:
        return None
    keep = raw.get("keep_seconds")
    if (
        isinstance(keep, bool)
        or not isinstance(keep, (int, float))
        or not math.isfinite(keep)
        or not 0 < keep <= MAX_KEEP_SECONDS
    ):
        out.add(
            f"{where}.keep_seconds",
            f"is required: the seconds a login is reused, more than 0 and at "
            f"most {MAX_KEEP_SECONDS:g} (a week); a little less than the "
            "service keeps its sessions",
        )
        keep = None
    logout = None
    if raw.get("logout") is not None:
        logout = _parse_logout(raw["logout"], f"{where}.logout", earlier, out)
    if out.count != before or keep is None:
        return None
    return Session(keep, logout)
