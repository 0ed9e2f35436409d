"""Tools imported from a document's URL, kept in step with the document.

An import from a URL is remembered as a :class:`Source`: the URL, how the
tools were made (server URL, security scheme and secret, TLS check), the
operations the document had, and for each tool its operation and the
definition as the import made it. :func:`plan_refresh` reads the document
again and says what changed; :func:`apply_refresh` makes the change once the
user confirmed it. The rules (also in ``docs/openapi.md``):

- **Added**: operations the document did not have before, offered (as the
  import would make them), never added unasked.
- **Removed**: a followed tool whose operation is gone (looked up by its
  key, then by ``VERB /path``) or can no longer be a tool; it goes.
- **Changed**: a followed tool the document now maps differently, field by
  field (``description``, ``parameters``, ``url``...). A field goes to the
  document's new value unless you edited it since the import (it differs
  from what the import made): your value stays, the change lists it as kept.
  Fields the import never writes (``enabled``, ``sentences``...) are yours.
- **No longer followed**: a tool you deleted (or renamed other than in the
  tool editor); the refresh forgets it and changes nothing in your tools.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..definitions import ToolDefinitionError, parse_tools
from .document import OpenApiError
from .mapping import Auth, OpenApiDocument, Operation

GONE = "the document no longer has it"


@dataclass(frozen=True, slots=True)
class Followed:
    """A tool an import made: its name, its operation, what the import wrote."""

    name: str
    operation: str  # the operation's key (operationId or "VERB /path")
    route: str  # "VERB /path": found again when the operationId changed
    imported: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        """As stored in the entry's options."""
        return {
            "name": self.name,
            "operation": self.operation,
            "route": self.route,
            "imported": self.imported,
        }


@dataclass(frozen=True, slots=True)
class Source:
    """A document URL the entry imported tools from."""

    url: str
    verify_ssl: bool = True
    server_url: str | None = None  # None: the document's own server
    auth_scheme: str | None = None
    auth_secret: str | None = None
    operations: tuple[str, ...] = ()  # the document's operations, to tell new ones
    tools: tuple[Followed, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """As stored in the entry's options."""
        return {
            "url": self.url,
            "verify_ssl": self.verify_ssl,
            "server_url": self.server_url,
            "auth_scheme": self.auth_scheme,
            "auth_secret": self.auth_secret,
            "operations": list(self.operations),
            "tools": [tool.as_dict() for tool in self.tools],
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Source | None:
        """A stored source; None when it is not one (storage edited by hand)."""
        url = raw.get("url")
        if not isinstance(url, str) or not url:
            return None
        tools = tuple(
            Followed(
                str(t["name"]),
                str(t.get("operation") or t.get("route")),
                str(t.get("route") or t.get("operation")),
                dict(t.get("imported") or {}),
            )
            for t in raw.get("tools") or []
            if isinstance(t, Mapping) and t.get("name")
        )
        return cls(
            url=url,
            verify_ssl=raw.get("verify_ssl") is not False,
            server_url=_text(raw.get("server_url")),
            auth_scheme=_text(raw.get("auth_scheme")),
            auth_secret=_text(raw.get("auth_secret")),
            operations=tuple(str(k) for k in raw.get("operations") or []),
            tools=tools,
        )

    def renamed(self, old: str, new: str) -> Source:
        """This source once its tool ``old`` is called ``new`` (still followed)."""
        return replace(
            self,
            tools=tuple(
                replace(t, name=new) if t.name == old else t for t in self.tools
            ),
        )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def route(op: Operation) -> str:
    """``GET /rooms``."""
    return f"{op.method} {op.path}"


def recorded(
    source: Source,
    document: OpenApiDocument,
    tools: Sequence[Mapping[str, Any]],
    operations: Sequence[Operation],
) -> Source:
    """``source`` after an import made ``tools`` (one per operation)."""
    names = {str(t["name"]) for t in tools}
    kept = tuple(t for t in source.tools if t.name not in names)
    new = tuple(
        Followed(str(tool["name"]), op.key, route(op), dict(tool))
        for tool, op in zip(tools, operations, strict=True)
    )
    return replace(
        source,
        operations=tuple(op.key for op in document.operations),
        tools=kept + new,
    )


@dataclass(frozen=True, slots=True)
class Change:
    """A followed tool the document now maps differently."""

    name: str
    fields: tuple[str, ...]  # what the document changed
    kept: tuple[str, ...]  # of those, what you edited: your value stays
    tool: dict[str, Any]  # the tool once refreshed
    followed: Followed  # what the source remembers once refreshed


@dataclass(frozen=True, slots=True)
class Removed:
    """A followed tool whose operation is gone."""

    name: str
    operation: str
    reason: str


@dataclass(frozen=True, slots=True)
class Offer:
    """An operation new in the document, and the tool it would make."""

    operation: Operation
    tool: dict[str, Any] | None  # None: it cannot be a tool (`reason`)
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Refresh:
    """What reading the document again found (nothing applied yet)."""

    source: Source
    operations: tuple[str, ...]
    added: tuple[Offer, ...] = ()
    removed: tuple[Removed, ...] = ()
    changed: tuple[Change, ...] = ()
    unchanged: tuple[Followed, ...] = ()
    untracked: tuple[str, ...] = ()  # followed tools you deleted or renamed
    tool_order: tuple[str, ...] = field(default=(), repr=False)

    @property
    def has_changes(self) -> bool:
        """Whether there is anything to confirm."""
        return bool(self.added or self.removed or self.changed or self.untracked)


_ABSENT: Any = object()


def changed_fields(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """The fields (but the name) whose values differ, in ``after``'s order."""
    keys = [*after, *(k for k in before if k not in after)]
    return [
        k
        for k in keys
        if k != "name" and before.get(k, _ABSENT) != after.get(k, _ABSENT)
    ]


def merge(
    current: Mapping[str, Any], base: Mapping[str, Any], new: Mapping[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """``current`` with the document's changes (``base`` -> ``new``) in the
    fields you did not edit; the changed fields you edited (kept)."""
    merged: dict[str, Any] = {"name": current["name"]}
    kept: list[str] = []
    for key in [*new, *(k for k in current if k not in new)]:
        if key == "name":
            continue
        mine = current.get(key, _ABSENT)
        was = base.get(key, _ABSENT)
        theirs = new.get(key, _ABSENT)
        value = theirs if mine == was else mine
        if was not in (mine, theirs):
            kept.append(key)
        if value is not _ABSENT:
            merged[key] = value
    return merged, kept


def _find(document: OpenApiDocument, followed: Followed) -> Operation | None:
    for wanted in (followed.operation, followed.route):
        try:
            return document.find([wanted])[0]
        except OpenApiError:
            continue
    return None


def _normalised(tool: dict[str, Any]) -> dict[str, Any]:
    """The tool as the options store it (the validator's round trip)."""
    return parse_tools([tool])[0].as_dict()


def plan_refresh(
    document: OpenApiDocument,
    source: Source,
    tools: Sequence[Mapping[str, Any]],
) -> Refresh:
    """What changed since the import, against the entry's ``tools``.

    Raises OpenApiError when the document cannot make tools the way the
    import did: no server URL, the security scheme gone.
    """
    auth: Auth | None = None
    if source.auth_secret:
        auth = Auth(document.scheme(source.auth_scheme), source.auth_secret)
    current = {str(t.get("name")): t for t in tools}
    taken = set(current)

    def make(op: Operation, name: str | None) -> tuple[dict[str, Any] | None, str]:
        result = document.to_tools(
            [op.key],
            server_url=source.server_url,
            auth=auth,
            taken=taken,
            verify_ssl=source.verify_ssl,
        )
        if not result.tools:
            return None, "; ".join(s.reason for s in result.skipped)
        tool = dict(result.tools[0])
        if name is not None:
            tool["name"] = name
        try:
            return _normalised(tool), ""
        except ToolDefinitionError as err:
            return None, str(err)

    removed: list[Removed] = []
    changed: list[Change] = []
    unchanged: list[Followed] = []
    untracked: list[str] = []
    followed_keys: set[str] = set()
    for item in source.tools:
        if item.name not in current:
            untracked.append(item.name)
            continue
        op = _find(document, item)
        if op is None:
            removed.append(Removed(item.name, item.route, GONE))
            continue
        followed_keys.update((op.key, route(op)))
        new, reason = make(op, item.name)
        if new is None:
            removed.append(Removed(item.name, item.route, reason))
            continue
        now = Followed(item.name, op.key, route(op), new)
        fields = changed_fields(item.imported, new)
        if not fields:
            unchanged.append(now)
            continue
        tool, kept = merge(current[item.name], item.imported, new)
        changed.append(Change(item.name, tuple(fields), tuple(kept), tool, now))

    known = set(source.operations)
    added: list[Offer] = []
    for op in document.operations:
        if op.key in known or op.key in followed_keys or route(op) in followed_keys:
            continue
        offered, reason = make(op, None)
        if offered is not None:
            taken.add(str(offered["name"]))
        added.append(Offer(op, offered, reason))
    return Refresh(
        source=source,
        operations=tuple(op.key for op in document.operations),
        added=tuple(added),
        removed=tuple(removed),
        changed=tuple(changed),
        unchanged=tuple(unchanged),
        untracked=tuple(untracked),
        tool_order=tuple(current),
    )


def apply_refresh(
    refresh: Refresh, tools: Sequence[Mapping[str, Any]], add: Iterable[str] = ()
) -> tuple[list[dict[str, Any]], Source]:
    """The entry's tools and the source once the refresh is applied, with
    the offered operations ``add`` (their keys) imported too."""
    gone = {r.name for r in refresh.removed}
    changes = {c.name: c for c in refresh.changed}
    result: list[dict[str, Any]] = []
    for tool in tools:
        name = str(tool.get("name"))
        if name in gone:
            continue
        result.append(dict(changes[name].tool) if name in changes else dict(tool))
    wanted = set(add)
    offered = [o for o in refresh.added if o.operation.key in wanted and o.tool]
    result.extend(dict(o.tool) for o in offered if o.tool)
    followed = [*refresh.unchanged, *(c.followed for c in refresh.changed)]
    order = {name: index for index, name in enumerate(refresh.tool_order)}
    followed.sort(key=lambda f: order.get(f.name, len(order)))
    followed.extend(
        Followed(str(o.tool["name"]), o.operation.key, route(o.operation), o.tool)
        for o in offered
        if o.tool
    )
    source = replace(
        refresh.source, operations=refresh.operations, tools=tuple(followed)
    )
    return result, source
