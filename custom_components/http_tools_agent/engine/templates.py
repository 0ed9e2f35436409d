"""``{placeholder}`` templates for tool URLs, header values and bodies.

``{name}`` is a placeholder (1-64 letters, digits, ``_`` or ``-``: the rule of
tool names) that a call's argument fills; ``{name?}`` is an optional one (what
holds it is left out when the argument is absent); ``{secret:name}`` is a
secret that only the caller's secrets fill, never an argument;
``{step.path}`` (``{geocode.results[0].latitude}``, :mod:`.paths`) is a value
of an earlier step's JSON response in a composite tool, ``{header:step.Name}``
and ``{cookie:step.name}`` one of its headers or of the cookies it set,
optional too with a ``?``;
``{{`` and ``}}`` are literal braces; a Home Assistant (Jinja) template is
kept as written: ``{{ `` with its space (or ``{{-``), ``{%`` and ``{#`` up
to their ``}}``, ``%}`` or ``#}``, with no placeholders inside (a value
reaches a template as one of its variables); any other brace is an error. A URL
template keeps its scheme and host fixed: placeholders and secrets may stand
in its path, query and fragment only, so the model never chooses the server.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
import re

from yarl import URL

from .paths import Key, Path, format_path, parse_path

# What OpenAI accepts as a tool name; placeholders follow the same rule.
PLACEHOLDER_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


def literal(text: str) -> str:
    """Fixed text written as a template: its braces doubled, none a
    placeholder (what an import writes of a service's own text)."""
    return text.replace("{", "{{").replace("}", "}}")


@dataclass(frozen=True, slots=True)
class Placeholder:
    """A ``{name}`` (``{name?}``: optional) in a template."""

    name: str
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Secret:
    """A ``{secret:name}`` in a template: filled from the secrets only."""

    name: str


# What a reference reads of a step's answer besides its JSON body.
GIVEN_PARTS = ("header", "cookie")
# A header's or a cookie's name (RFC 9110 and RFC 6265 tokens, as used).
_GIVEN_NAME_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.!#$%&'*+^`|~-]{0,127}")


@dataclass(frozen=True, slots=True)
class Reference:
    """A ``{step.path}`` in a template: a value of an earlier step's response
    (``given``: its JSON body, or one of its headers or cookies)."""

    step: str
    path: Path
    optional: bool = False
    # "" (the JSON body), "header" or "cookie" (`path` is then its name).
    given: str = ""

    @property
    def text(self) -> str:
        """The reference as written, without braces (for messages)."""
        if self.given:
            return f"{self.given}:{self.step}.{format_path(self.path)}"
        return f"{self.step}{_path_tail(self.path)}"

    @property
    def key(self) -> str:
        """Where a call keeps what it reads (`earlier` of the renderer)."""
        return f"{self.given}:{self.step}" if self.given else self.step


def _path_tail(path: Path) -> str:
    """``path`` written after a step's name (``.results[0].latitude``)."""
    text = format_path(path)
    return text if text.startswith("[") else "." + text


type TemplatePart = str | Placeholder | Secret | Reference
type ValuePart = Placeholder | Reference

SECRET_PREFIX = "secret:"  # noqa: S105  (the syntax, not a password)


# How a Jinja block of a Home Assistant template opens and closes.
_JINJA_CLOSE = {"{%": "%}", "{#": "#}"}
# The error's hint: how each kind of brace is written.
BRACE_RULES = (
    "use {name}, {name?}, {secret:name} or {step.path} with letters, digits, "
    "'_' or '-'; write a literal brace as '{{' or '}}'; a Home Assistant "
    "template stays as written: '{{ states(\"sensor.x\") }}' with its spaces, "
    "'{% if ... %}', '{# ... #}'"
)


def _jinja_end(text: str, i: int) -> int | None:
    """Where the Jinja block opening at ``i`` ends (after its close); None:
    no block opens there, -1: it is not closed."""
    head = text[i : i + 2]
    if head in _JINJA_CLOSE:
        close = text.find(_JINJA_CLOSE[head], i + 2)
        return -1 if close == -1 else close + 2
    after = text[i + 2 : i + 3]
    if head != "{{" or not (after.isspace() or after == "-"):
        return None
    # `{{ {'a': 1} }}`: braces inside the expression nest.
    depth = 0
    j = i + 2
    while j < len(text):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            if depth == 0 and text.startswith("}}", j):
                return j + 2
            depth = max(depth - 1, 0)
        j += 1
    return -1


@lru_cache(maxsize=1024)
def parse_template(text: str) -> tuple[TemplatePart, ...]:
    """Split ``text`` into literal strings, placeholders and secrets.

    ``{{`` and ``}}`` are literal braces; a Jinja block (``{{ ...}}``,
    ``{% ... %}``, ``{# ... #}``) is literal text. Raises ``ValueError`` on
    any other brace that does not form a valid ``{name}`` or
    ``{secret:name}``.
    """
    parts: list[TemplatePart] = []
    literal: list[str] = []
    i = 0
    length = len(text)
    while i < length:
        char = text[i]
        if char == "{":
            jinja = _jinja_end(text, i)
            if jinja == -1:
                opener = text[i : i + 2]
                close = _JINJA_CLOSE.get(opener, "}}")
                raise ValueError(
                    f"'{opener}' at position {i} opens a Home Assistant template "
                    f"that is not closed with '{close}' ({BRACE_RULES})"
                )
            if jinja is not None:
                literal.append(text[i:jinja])
                i = jinja
                continue
            if text.startswith("{{{{", i):
                # The old way to write `{{`: kept as it was.
                literal.append("{{")
                i += 4
                continue
            if text.startswith("{{", i):
                literal.append("{")
                i += 2
                continue
            end = text.find("}", i + 1)
            part = _part(text[i + 1 : end]) if end != -1 else None
            if part is None:
                raise ValueError(f"invalid placeholder at position {i}: {BRACE_RULES}")
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(part)
            i = end + 1
            continue
        if char == "}":
            if text.startswith("}}", i):
                literal.append("}")
                i += 2
                continue
            raise ValueError(f"unmatched '}}' at position {i}: {BRACE_RULES}")
        literal.append(char)
        i += 1
    if literal:
        parts.append("".join(literal))
    return tuple(parts)


def _given(kind: str, inner: str, optional: bool) -> Reference | None:
    """``{header:step.Name}`` or ``{cookie:step.name}``, or None."""
    step, _, name = inner.partition(".")
    if (
        PLACEHOLDER_NAME_RE.fullmatch(step) is None
        or _GIVEN_NAME_RE.fullmatch(name) is None
    ):
        return None
    # Header names are case-insensitive: kept lower-cased on both sides.
    key = name.lower() if kind == "header" else name
    return Reference(step, (Key(key),), optional, kind)


def _part(inner: str) -> Placeholder | Secret | Reference | None:
    """What ``{inner}`` is, or None when it is none of them."""
    if inner.startswith(SECRET_PREFIX):
        name = inner.removeprefix(SECRET_PREFIX)
        return Secret(name) if PLACEHOLDER_NAME_RE.fullmatch(name) else None
    optional = inner.endswith("?")
    inner = inner.removesuffix("?")
    kind, colon, rest = inner.partition(":")
    if colon and kind in GIVEN_PARTS:
        return _given(kind, rest, optional)
    if PLACEHOLDER_NAME_RE.fullmatch(inner):
        return Placeholder(inner, optional)
    try:
        path = parse_path(inner)
    except ValueError:
        return None
    head = path[0] if path else None
    if (
        not isinstance(head, Key)
        or len(path) < 2
        or PLACEHOLDER_NAME_RE.fullmatch(head.name) is None
    ):
        return None
    return Reference(head.name, path[1:], optional)


def value_parts(parts: tuple[TemplatePart, ...]) -> list[ValuePart]:
    """The parts a call fills (placeholders and step references)."""
    return [part for part in parts if isinstance(part, (Placeholder, Reference))]


def template_placeholders(text: str) -> frozenset[str]:
    """Placeholder names used in ``text`` (empty when the template is invalid)."""
    try:
        parts = parse_template(text)
    except ValueError:
        return frozenset()
    return frozenset(part.name for part in parts if isinstance(part, Placeholder))


def template_secrets(text: str) -> frozenset[str]:
    """Secret names used in ``text`` (empty when the template is invalid)."""
    try:
        parts = parse_template(text)
    except ValueError:
        return frozenset()
    return frozenset(part.name for part in parts if isinstance(part, Secret))


@dataclass(frozen=True, slots=True)
class UrlTemplate:
    """A URL template split into a fixed origin and a templated rest.

    ``origin`` is ``scheme://authority`` (host IDNA-encoded); ``rest`` starts
    with ``/``, ``?`` or ``#`` (or is empty) and holds every placeholder.
    """

    origin: str
    rest: tuple[TemplatePart, ...]


@lru_cache(maxsize=1024)
def parse_url_template(url: str) -> UrlTemplate:
    """Validate a URL template; raise ``ValueError`` with a readable reason."""
    parts = parse_template(url)
    head = parts[0] if parts and isinstance(parts[0], str) else ""
    scheme, sep, after = head.partition("://")
    if not sep:
        raise ValueError("must be an absolute http or https URL")
    if scheme.lower() not in ("http", "https"):
        raise ValueError("must be an http or https URL")
    cut = min((pos for pos in map(after.find, "/?#") if pos != -1), default=-1)
    if cut == -1:
        if len(parts) > 1:
            raise ValueError(
                "placeholders and secrets are only allowed in the path, query "
                "or fragment, not in the scheme or host"
            )
        cut = len(after)
    authority = after[:cut]
    if any(ch.isspace() for ch in authority) or "\\" in authority:
        raise ValueError("the host part contains invalid characters")
    try:
        parsed = URL(f"{scheme}://{authority}")
        host = parsed.host
        parsed.port  # noqa: B018  (validates the port)
    except ValueError as err:
        raise ValueError(f"is not a valid URL ({err})") from None
    if not host:
        raise ValueError("must include a host")
    origin = f"{scheme.lower()}://{parsed.raw_authority}"
    rest_head = after[cut:]
    rest: tuple[TemplatePart, ...] = ((rest_head,) if rest_head else ()) + parts[1:]
    return UrlTemplate(origin=origin, rest=rest)


@dataclass(frozen=True, slots=True)
class UrlSections:
    """A URL template's rest split at its first ``?`` and ``#``.

    ``query`` and ``fragment`` are None when the template has no ``?`` or
    ``#`` (an empty tuple: it has one with nothing after it).
    """

    path: tuple[TemplatePart, ...]
    query: tuple[TemplatePart, ...] | None
    fragment: tuple[TemplatePart, ...] | None


def url_sections(rest: tuple[TemplatePart, ...]) -> UrlSections:
    """Split ``rest`` (of :class:`UrlTemplate`) into path, query and fragment."""
    sections: dict[str, list[TemplatePart]] = {"path": []}
    current = "path"
    for part in rest:
        if not isinstance(part, str):
            sections[current].append(part)
            continue
        text = part
        while text:
            marks = "?#" if current == "path" else "#" if current == "query" else ""
            cut = min((pos for pos in map(text.find, marks) if pos != -1), default=-1)
            if cut == -1:
                sections[current].append(text)
                break
            if cut:
                sections[current].append(text[:cut])
            current = "query" if text[cut] == "?" else "fragment"
            sections[current] = []
            text = text[cut + 1 :]
    query = sections.get("query")
    fragment = sections.get("fragment")
    return UrlSections(
        tuple(sections["path"]),
        None if query is None else tuple(query),
        None if fragment is None else tuple(fragment),
    )
