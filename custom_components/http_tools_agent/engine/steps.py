"""Composite tools: several requests in order, as one tool.

``"steps": [{"name": "geocode", "url": ...}, {"name": "forecast", "url":
"...?latitude={geocode.results[0].latitude}"}]``: each step is a request
(``url``, ``method``, ``headers``, ``body``, ``body_format``, ``auth``) with
a name; a later step's templates read an earlier step's JSON response with
``{step.path}`` (:mod:`.paths`). The model makes one call and reads one
result: the last step's, or the tool's ``response`` shape over the steps by
name. A step sends only what its templates name (no leftover arguments). A
failing step stops the call and is named in the error. One step may be the
tool's login, kept across calls (``session``, :mod:`.session_field`). The
rules are in ``docs/tool-format.md`` ("Composite tools").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .auth import Auth
from .fields import NAME_RE, REQUEST_FIELDS, parse_headers, parse_method, parse_url
from .problems import FieldProblems, object_field, type_name
from .request_fields import parse_auth, parse_body, sent_as_dict
from .session_field import Session, parse_session

MAX_STEPS = 8
STEP_FIELDS = ("name", *REQUEST_FIELDS, "session")


@dataclass(frozen=True, slots=True)
class Step:
    """One request of a tool: a composite tool's step, or a tool's own."""

    name: str
    url: str
    method: str
    headers: dict[str, str] = field(default_factory=dict)
    # A JSON template (None: no template); see `fields.parse_body`.
    body: Any = None
    body_format: str = "json"
    auth: Auth | None = None
    # The tool's login, kept across calls (None: sent on every call).
    session: Session | None = None

    def as_dict(self) -> dict[str, Any]:
        """Back to the file format (a step of `steps`)."""
        data: dict[str, Any] = {"name": self.name}
        data |= sent_as_dict(
            self.url, self.method, self.headers, self.body, self.body_format
        )
        if self.auth is not None:
            data["auth"] = self.auth.as_dict()
        if self.session is not None:
            data["session"] = self.session.as_dict()
        return data


def _parse_step(
    raw: object,
    index: int,
    declared: set[str] | None,
    earlier: tuple[str, ...],
    out: FieldProblems,
) -> Step | None:
    prefix = f"steps[{index}]."
    before = out.count
    raw = object_field(raw, f"steps[{index}]", STEP_FIELDS, out)
    if raw is None:
        return None
    name = raw.get("name")
    if not isinstance(name, str) or NAME_RE.fullmatch(name) is None:
        out.add(
            f"{prefix}name",
            "is required: 1 to 64 letters, digits, '_' or '-' (later steps read "
            "this step's response as {name.path})",
        )
        name = None
    elif name in earlier:
        out.add(f"{prefix}name", f"duplicates step '{name}'")
    url = parse_url(
        raw.get("url"), declared, out, field=f"{prefix}url", earlier=earlier
    )
    method = parse_method(raw.get("method"), out, field=f"{prefix}method")
    headers = parse_headers(
        raw.get("headers"), declared, out, prefix=prefix, earlier=earlier
    )
    body, body_format = parse_body(
        raw.get("body"),
        raw.get("body_format"),
        method,
        declared,
        out,
        prefix=prefix,
        earlier=earlier,
        leftovers=False,
    )
    auth = parse_auth(raw.get("auth"), out, prefix=prefix)
    session = parse_session(raw.get("session"), prefix, (*earlier, name or ""), out)
    if out.count != before or name is None or url is None or method is None:
        return None
    return Step(name, url, method, headers, body, body_format, auth, session)


def parse_steps(
    raw: object, declared: set[str] | None, out: FieldProblems
) -> tuple[Step, ...]:
    """The steps of a composite tool, in order (empty when invalid)."""
    if not isinstance(raw, list):
        out.add("steps", f"must be a list of steps, got {type_name(raw)}")
        return ()
    if not 1 <= len(raw) <= MAX_STEPS:
        out.add("steps", f"must hold 1 to {MAX_STEPS} steps")
        return ()
    before = out.count
    steps: list[Step] = []
    names: list[str] = []
    for index, item in enumerate(raw):
        step = _parse_step(item, index, declared, tuple(names), out)
        name = item.get("name") if isinstance(item, Mapping) else None
        if isinstance(name, str) and name not in names:
            names.append(name)
        if step is not None:
            steps.append(step)
    logins = [i for i, step in enumerate(steps) if step.session is not None]
    if len(logins) > 1:
        out.add(f"steps[{logins[1]}].session", "a tool has one login")
    elif logins and logins[0] == len(raw) - 1:
        out.add(
            f"steps[{logins[0]}].session",
            "the login cannot be the last step: the steps after it use it, and "
            "the model never reads a login's answer",
        )
    return tuple(steps) if out.count == before else ()


def login_step(steps: tuple[Step, ...]) -> int | None:
    """The index of the tool's login (the step with ``session``), or None."""
    return next((i for i, step in enumerate(steps) if step.session), None)


def login_refused(step: str, tool: str, text: str) -> str:
    """The model's text for a login the service refused (401, 403): ``Error:
    step 'login' of tool 'pihole_summary' failed: the login was refused
    (check its secrets): HTTP 401 — …``."""
    return (
        f"Error: step '{step}' of tool '{tool}' failed: the login was refused "
        f"(check its secrets): {text.removeprefix('Error: ')}"
    )


def step_failed(step: str, text: str) -> str:
    """The model's text for a failing step: ``Error: step 'geocode' failed:
    HTTP 404 — …`` (``text`` is the error a single request would give)."""
    return f"Error: step '{step}' failed: {text.removeprefix('Error: ')}"
