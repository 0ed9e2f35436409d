"""Tool definitions: parse and validate the file format.

A JSON array of objects, one per tool: ``name``, ``description``,
``parameters``, the request (``url``, ``method``, ``headers``, ``body``,
``body_format``, ``auth``) or ``steps`` of several (:mod:`.steps`), what the
model reads of the answer (``response``, :mod:`.responses`) and the tool's
own sentence (``speech``, :mod:`.speech`), what a user may say to run it
without a model (``sentences``, :mod:`.sentences`), ``timeout``, ``enabled``,
``verify_ssl`` and what the tool does to its server (``read_only``,
``destructive``, ``idempotent``) and a list over several pages (``pages``,
:mod:`.page_field`). Every problem is collected before raising,
each naming the tool and the field. The rules are in
``docs/tool-format.md``; :mod:`.fields` checks each field.
"""

from __future__ import annotations

from collections.abc import Mapping
import copy
from dataclasses import dataclass, field as dataclass_field
import json
from typing import Any

from .auth import Auth
from .confirm import Confirmation, parse_confirmation
from .fields import (
    KNOWN_FIELDS,
    NAME_RE,
    REQUEST_FIELDS,
    SAFE_METHODS,
    declared_properties,
    parse_description,
    parse_flag,
    parse_headers,
    parse_method,
    parse_name,
    parse_optional_flag,
    parse_parameters,
    parse_timeout,
    parse_url,
)
from .page_field import Pages, parse_pages
from .problems import (
    DefinitionProblem,
    FieldProblems,
    ToolDefinitionError,
    check_known_fields,
    type_name,
)
from .request_fields import body_templates, parse_auth, parse_body
from .responses import parse_response
from .secret_refs import check_secrets, missing_secrets
from .sentences import check_sentences
from .shapes import ResponseShape
from .speech import check_speech
from .steps import Step, parse_steps
from .templates import template_placeholders, template_secrets

__all__ = [
    "DefinitionProblem",
    "ToolDefinition",
    "ToolDefinitionError",
    "check_secrets",
    "missing_secrets",
    "parse_tools",
    "parse_tools_json",
]

# Verbs that change what they address, whole: a tool's `destructive` default.
DESTRUCTIVE_METHODS = frozenset({"DELETE", "PUT"})
# Verbs that may be repeated with the same effect (RFC 9110 section 9.2.2).
IDEMPOTENT_METHODS = frozenset({"PUT", "DELETE"})


@dataclass(frozen=True, slots=True)
class Effects:
    """What a definition says its requests do to their server (None: the
    default the verbs give)."""

    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None


@dataclass(frozen=True, slots=True)
class ToolDefinition:
    """One validated HTTP tool.

    A composite tool (``steps``) keeps its last step's ``url``, ``method``
    and ``headers`` here too (the request whose answer the model reads), for
    callers that show or match a tool by them.
    """

    name: str
    description: str
    parameters: dict[str, Any]
    url: str
    method: str
    headers: dict[str, str]
    timeout: float | None
    # Offered to the model; a disabled tool is kept and reported, not offered.
    enabled: bool = True
    # False: the request accepts any TLS certificate (LAN devices).
    verify_ssl: bool = True
    # A JSON template of the body (None: the leftover arguments, by the verb).
    body: Any = None
    body_format: str = "json"
    auth: Auth | None = None
    # Several requests in order (a composite tool); empty: the one above.
    steps: tuple[Step, ...] = ()
    response: ResponseShape | None = None
    # A list over several pages, followed (`pages.py`); None: one request.
    pages: Pages | None = None
    speech: str | None = None
    # Per language, what a user may say to run it with no model (`sentences.py`).
    sentences: Mapping[str, tuple[str, ...]] = dataclass_field(default_factory=dict)
    effects: Effects = Effects()
    # Whether its calls wait for the user's yes (`engine/confirm.py`).
    confirmation: Confirmation = dataclass_field(default_factory=Confirmation)

    @property
    def needs_confirmation(self) -> bool:
        """Whether a call of this tool waits for the user's yes (`auto`: a
        step that deletes, or the tool declared destructive)."""
        deletes = any(step.method.upper() == "DELETE" for step in self.requests)
        return self.confirmation.needed(
            "DELETE" if deletes else self.method,
            destructive=self.effects.destructive is True,
        )

    def as_dict(self) -> dict[str, Any]:
        """Back to the file format; round-trips through :func:`parse_tools`."""
        data: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": copy.deepcopy(self.parameters),
        }
        if self.steps:
            data["steps"] = [copy.deepcopy(step.as_dict()) for step in self.steps]
        else:
            data["url"] = self.url
            data["method"] = self.method
            if self.headers:
                data["headers"] = dict(self.headers)
            if self.body is not None:
                data["body"] = copy.deepcopy(self.body)
            if self.body_format != "json":
                data["body_format"] = self.body_format
            if self.auth is not None:
                data["auth"] = self.auth.as_dict()
        if self.response is not None:
            data["response"] = self.response.as_dict()
        if self.pages is not None:
            data["pages"] = self.pages.as_dict()
        if self.speech is not None:
            data["speech"] = self.speech
        if self.sentences:
            data["sentences"] = {k: list(v) for k, v in self.sentences.items()}
        if self.timeout is not None:
            data["timeout"] = self.timeout
        if not self.enabled:
            data["enabled"] = False
        if not self.verify_ssl:
            data["verify_ssl"] = False
        for key in ("read_only", "destructive", "idempotent"):
            if (value := getattr(self.effects, key)) is not None:
                data[key] = value
        data.update(self.confirmation.as_dict())
        return data

    @property
    def requests(self) -> tuple[Step, ...]:
        """The requests a call sends, in order: the steps, or the tool's own."""
        if self.steps:
            return self.steps
        own = Step(
            self.name,
            self.url,
            self.method,
            self.headers,
            self.body,
            self.body_format,
            self.auth,
        )
        return (own,)

    @property
    def read_only(self) -> bool:
        """The tool changes nothing on its server: as declared, else every
        request's verb only reads (GET, HEAD, OPTIONS, TRACE)."""
        if self.effects.read_only is not None:
            return self.effects.read_only
        return all(step.method.upper() in SAFE_METHODS for step in self.requests)

    @property
    def destructive(self) -> bool:
        """The tool may delete or overwrite: as declared, else a tool that is
        not read-only and sends a DELETE or a PUT."""
        if self.effects.destructive is not None:
            return self.effects.destructive
        return not self.read_only and any(
            step.method.upper() in DESTRUCTIVE_METHODS for step in self.requests
        )

    @property
    def idempotent(self) -> bool:
        """Calling it twice does what calling it once does: as declared, else
        a read-only tool, or one whose every verb is a PUT or a DELETE (an
        action sent as GET is not assumed so: a message sent twice is two)."""
        if self.effects.idempotent is not None:
            return self.effects.idempotent
        return self.read_only or all(
            step.method.upper() in IDEMPOTENT_METHODS for step in self.requests
        )

    @property
    def placeholders(self) -> frozenset[str]:
        """Names used as placeholders (URL, header values, body; every step)."""
        names: frozenset[str] = frozenset()
        for step in self.requests:
            names |= template_placeholders(step.url)
            for value in step.headers.values():
                names |= template_placeholders(value)
            for _, text in body_templates(step.body):
                names |= template_placeholders(text)
        return names

    @property
    def secret_references(self) -> dict[str, frozenset[str]]:
        """The ``{secret:name}`` names each field uses (``url``, ``headers.X``,
        ``body.token``, ``auth.password``, ``pin``; ``steps[1].url`` in a
        composite)."""
        found: dict[str, frozenset[str]] = {}
        for index, step in enumerate(self.requests):
            prefix = f"steps[{index}]." if self.steps else ""
            found[f"{prefix}url"] = template_secrets(step.url)
            for key, value in step.headers.items():
                found[f"{prefix}headers.{key}"] = template_secrets(value)
            for place, text in body_templates(step.body, f"{prefix}body"):
                found[place] = template_secrets(text)
            if step.auth is not None:
                found[f"{prefix}auth.username"] = template_secrets(step.auth.username)
                found[f"{prefix}auth.password"] = template_secrets(step.auth.password)
            if step.session is not None and step.session.logout is not None:
                where = f"{prefix}session.logout."
                for place, text in step.session.logout.templates(where):
                    found[place] = template_secrets(text)
        if self.confirmation.pin is not None:
            found["pin"] = frozenset({self.confirmation.pin})
        return {field: names for field, names in found.items() if names}

    @property
    def secret_names(self) -> frozenset[str]:
        """Every secret the tool uses: its request's, and its PIN."""
        names: frozenset[str] = frozenset()
        for used in self.secret_references.values():
            names |= used
        return names

    @property
    def sign_ins(self) -> frozenset[str]:
        """The sign-ins whose tokens the tool's requests send (oauth2)."""
        return frozenset(
            step.auth.sign_in
            for step in self.requests
            if step.auth is not None and step.auth.type == "oauth2"
        )

    @property
    def header_placeholders(self) -> frozenset[str]:
        """Names used in header values (secrets: callers redact them)."""
        names: frozenset[str] = frozenset()
        for step in self.requests:
            for value in step.headers.values():
                names |= template_placeholders(value)
        return names


def _parse_one(
    raw: object, index: int, problems: list[DefinitionProblem]
) -> ToolDefinition | None:
    if not isinstance(raw, Mapping):
        message = f"must be an object, got {type_name(raw)}"
        problems.append(DefinitionProblem(index, None, None, message))
        return None
    name = raw.get("name")
    tool = name if isinstance(name, str) and NAME_RE.fullmatch(name) else None
    out = FieldProblems()
    parsed_name = parse_name(name, out)
    check_known_fields(raw, KNOWN_FIELDS, out)
    description = parse_description(raw.get("description"), out)
    before = out.count
    parameters = parse_parameters(raw.get("parameters"), out)
    declared = declared_properties(parameters) if out.count == before else None
    steps: tuple[Step, ...] = ()
    body: Any = None
    body_format = "json"
    auth: Auth | None = None
    if raw.get("steps") is not None:
        for key in REQUEST_FIELDS:
            if raw.get(key) is not None:
                out.add(key, "not allowed with steps: each step has its own")
        steps = parse_steps(raw["steps"], declared, out)
        last = steps[-1] if steps else None
        url = last.url if last else None
        method = last.method if last else None
        headers = dict(last.headers) if last else {}
    else:
        url = parse_url(raw.get("url"), declared, out)
        method = parse_method(raw.get("method"), out)
        headers = parse_headers(raw.get("headers"), declared, out)
        body, body_format = parse_body(
            raw.get("body"), raw.get("body_format"), method, declared, out
        )
        auth = parse_auth(raw.get("auth"), out)
    # The model never reads a login's answer (it holds the session).
    names = tuple(step.name for step in steps if step.session is None)
    response = parse_response(raw.get("response"), out, steps=names)
    speech = check_speech(raw.get("speech"), out)
    sentences = check_sentences(
        raw.get("sentences"), parameters if declared is not None else None, out
    )
    timeout = parse_timeout(raw.get("timeout"), out)
    enabled = parse_flag(raw.get("enabled"), "enabled", out)
    verify_ssl = parse_flag(raw.get("verify_ssl"), "verify_ssl", out)
    effects = Effects(
        parse_optional_flag(raw.get("read_only"), "read_only", out),
        parse_optional_flag(raw.get("destructive"), "destructive", out),
        parse_optional_flag(raw.get("idempotent"), "idempotent", out),
    )
    if effects.read_only and effects.destructive:
        out.add("destructive", "a read-only tool destroys nothing")
    pages = parse_pages(raw.get("pages"), out)
    if pages is not None and steps:
        out.add("pages", "not with steps: a paged tool is one request, sent per page")
    elif pages is not None and not (
        effects.read_only if effects.read_only is not None else method in SAFE_METHODS
    ):
        out.add(
            "pages",
            "a paged tool only reads (its request is sent once per page): a "
            'search sent as POST says "read_only": true',
        )
    confirmation, confirm_problems = parse_confirmation(raw, declared)
    for where, message in confirm_problems:
        out.add(where, message)
    if out.count or parsed_name is None or url is None or method is None:
        problems.extend(DefinitionProblem(index, tool, f, m) for f, m in out.found)
        return None
    definition = ToolDefinition(
        name=parsed_name,
        description=description,
        parameters=parameters,
        url=url,
        method=method,
        headers=headers,
        timeout=timeout,
        enabled=enabled,
        verify_ssl=verify_ssl,
        body=body,
        body_format=body_format,
        auth=auth,
        steps=steps,
        response=response,
        pages=pages,
        speech=speech,
        sentences=sentences,
        effects=effects,
        confirmation=confirmation,
    )
    if body is not None or steps:
        # Only placeholders place an argument then: one no placeholder uses
        # would be asked of the model and sent nowhere.
        for unused in sorted((declared or set()) - definition.placeholders):
            out.add(
                f"parameters.properties.{unused}",
                "no placeholder uses it: with a body template or steps, an "
                "argument is sent only where a placeholder puts it",
            )
    problems.extend(DefinitionProblem(index, tool, f, m) for f, m in out.found)
    return None if out.count else definition


def parse_tools(data: object) -> list[ToolDefinition]:
    """Validate a list of tool definitions (the file format, already decoded).

    ``[]`` is valid. Raises :class:`ToolDefinitionError` listing every problem.
    """
    if not isinstance(data, (list, tuple)):
        raise ToolDefinitionError(
            [
                DefinitionProblem(
                    None,
                    None,
                    None,
                    "tool definitions must be a JSON array of objects, "
                    f"got {type_name(data)}",
                )
            ]
        )
    problems: list[DefinitionProblem] = []
    definitions: list[ToolDefinition] = []
    first_index: dict[str, int] = {}
    for index, raw in enumerate(data):
        definition = _parse_one(raw, index, problems)
        name = raw.get("name") if isinstance(raw, Mapping) else None
        if isinstance(name, str) and NAME_RE.fullmatch(name):
            if name in first_index:
                problems.append(
                    DefinitionProblem(
                        index,
                        name,
                        "name",
                        f"duplicate name (already used by tool #{first_index[name]})",
                    )
                )
                continue
            first_index[name] = index
        if definition is not None:
            definitions.append(definition)
    if problems:
        raise ToolDefinitionError(problems)
    return definitions


def parse_tools_json(raw: str | bytes) -> list[ToolDefinition]:
    """Decode JSON text (UTF-8 when bytes, BOM tolerated) and validate it."""

    def fail(message: str) -> ToolDefinitionError:
        return ToolDefinitionError([DefinitionProblem(None, None, None, message)])

    if isinstance(raw, (bytes, bytearray, memoryview)):
        try:
            text = bytes(raw).decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise fail(
                f"tool definitions are not valid UTF-8 (byte {err.start})"
            ) from None
    else:
        text = raw.removeprefix("\ufeff")
    if not text.strip():
        raise fail("tool definitions are empty: expected a JSON array")

    def reject_constant(value: str) -> object:
        raise ValueError(f"{value} is not valid JSON")

    try:
        data = json.loads(text, parse_constant=reject_constant)
    except json.JSONDecodeError as err:
        raise fail(
            f"tool definitions are not valid JSON: {err.msg} "
            f"(line {err.lineno}, column {err.colno})"
        ) from None
    except ValueError as err:
        raise fail(f"tool definitions are not valid JSON: {err}") from None
    except RecursionError:
        raise fail("tool definitions are not valid JSON: nested too deeply") from None
    if not isinstance(data, list):
        raise fail(f"tool definitions must be a JSON array, got {type_name(data)}")
    return parse_tools(data)
