"""``{placeholder}`` templates for tool URLs and header values.

``{name}`` is a placeholder (1-64 letters, digits, ``_`` or ``-``: the rule of
tool names) that a call's argument fills; ``{secret:name}`` is a secret that
only the caller's secrets fill, never an argument; ``{{`` and ``}}`` are
literal braces; any other brace is an error. A URL template keeps its scheme
and host fixed: placeholders and secrets may stand in its path, query and
fragment only, so the model never chooses the server.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
import re

from yarl import URL

# What OpenAI accepts as a tool name; placeholders follow the same rule.
PLACEHOLDER_NAME_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True, slots=True)
class Placeholder:
    """A ``{name}`` in a template."""

    name: str


@dataclass(frozen=True, slots=True)
class Secret:
    """A ``{secret:name}`` in a template: filled from the secrets only."""

    name: str


type TemplatePart = str | Placeholder | Secret

SECRET_PREFIX = "secret:"  # noqa: S105  (the syntax, not a password)


@lru_cache(maxsize=1024)
def parse_template(text: str) -> tuple[TemplatePart, ...]:
    """Split ``text`` into literal strings, placeholders and secrets.

    ``{{`` and ``}}`` are literal braces. Raises ``ValueError`` on any other
    brace that does not form a valid ``{name}`` or ``{secret:name}``.
    """
    parts: list[TemplatePart] = []
    literal: list[str] = []
    i = 0
    length = len(text)
    while i < length:
        char = text[i]
        if char == "{":
            if text.startswith("{{", i):
                literal.append("{")
                i += 2
                continue
            end = text.find("}", i + 1)
            name = text[i + 1 : end] if end != -1 else ""
            secret = name.startswith(SECRET_PREFIX)
            if secret:
                name = name.removeprefix(SECRET_PREFIX)
            if end == -1 or PLACEHOLDER_NAME_RE.fullmatch(name) is None:
                raise ValueError(
                    f"invalid placeholder at position {i}: use {{name}} or "
                    "{secret:name} with letters, digits, '_' or '-', and write "
                    "literal braces as '{{' and '}}'"
                )
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append(Secret(name) if secret else Placeholder(name))
            i = end + 1
            continue
        if char == "}":
            if text.startswith("}}", i):
                literal.append("}")
                i += 2
                continue
            raise ValueError(
                f"unmatched '}}' at position {i}: write a literal brace as '}}}}'"
            )
        literal.append(char)
        i += 1
    if literal:
        parts.append("".join(literal))
    return tuple(parts)


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
