"""Rendering a call's values: an argument, a secret or an earlier step's
value as text, and the errors a request that cannot be built raises.

:mod:`.requests` places what this renders in the URL and headers,
:mod:`.request_bodies` in a body; the rules are in ``docs/tool-format.md``
("How a call becomes a request").
"""

from __future__ import annotations

from collections.abc import Mapping
import json
import math
from typing import Any, Final

from .definitions import ToolDefinition
from .fields import HEADER_CONTROL_RE
from .paths import MISSING, find, format_path
from .templates import (
    Placeholder,
    Reference,
    Secret,
    TemplatePart,
    ValuePart,
    parse_template,
    value_parts,
)


class RequestBuildError(Exception):
    """The request cannot be built; ``text`` is what the model receives."""

    def __init__(self, text: str, reason: str | None = None) -> None:
        """Keep the model-facing text (it starts with ``Error: ``).

        ``reason`` is the short form for logs and diagnostics; by default the
        text without its ``Error: `` prefix.
        """
        super().__init__(text)
        self.text = text
        self.reason = reason if reason is not None else text.removeprefix("Error: ")


class MissingStepValue(RequestBuildError):
    """A value a step needs that an earlier step's answer lacks (or holds as
    ``null``): the step that reads it is the one that cannot be built."""

    def __init__(self, source: str, what: str) -> None:
        """``source``: the earlier step; ``what``: what it gave, as words."""
        super().__init__(
            f"Error: step '{source}' failed: {what}", f"step '{source}' {what}"
        )
        self.source = source
        self.what = what


class InvalidValue(ValueError):
    """A value that cannot be rendered."""


def render_value(value: Any) -> str:
    """Render an argument as text for a URL or a header value."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidValue("numbers must be finite")
        if value.is_integer():
            return str(int(value))
        return repr(value)
    try:
        return json.dumps(
            value, ensure_ascii=False, separators=(",", ":"), allow_nan=False
        )
    except TypeError, ValueError:
        raise InvalidValue("the value cannot be sent as text") from None


def invalid_value(
    source: str | Reference, definition: ToolDefinition, why: str
) -> RequestBuildError:
    """A value that cannot be sent: an argument's, or a step's (``source``)."""
    if isinstance(source, Reference):
        return RequestBuildError(
            f"Error: invalid value from step '{source.step}' "
            f"('{format_path(source.path)}') in tool '{definition.name}': {why}"
        )
    return RequestBuildError(
        f"Error: invalid value for argument '{source}' in tool '{definition.name}': {why}"
    )


def missing_argument(name: str, definition: ToolDefinition) -> RequestBuildError:
    return RequestBuildError(
        f"Error: missing required argument '{name}' for tool '{definition.name}'"
    )


class _Absent:
    """A body field left out (its optional placeholders had no value)."""


ABSENT: Final = _Absent()


class Renderer:
    """Render placeholders, remembering which arguments were consumed."""

    def __init__(
        self,
        definition: ToolDefinition,
        arguments: Mapping[str, Any],
        secrets: Mapping[str, str],
        earlier: Mapping[str, Any],
        hidden: frozenset[str] = frozenset(),
    ):
        self.definition = definition
        self.arguments = arguments
        self.secrets = secrets
        # The JSON of each earlier step's response, by name (MISSING: none);
        # its headers and cookies under `header:name` and `cookie:name`.
        self.earlier = earlier
        # The steps whose values are secrets (a login's session id).
        self.hidden = hidden
        self.consumed: set[str] = set()
        self.secret_values: list[str] = []

    def secret(self, name: str) -> str:
        """The secret ``name``: only the caller's secrets, never an argument."""
        value = self.secrets.get(name)
        if not isinstance(value, str) or not value:
            raise RequestBuildError(
                f"Error: secret '{name}' of tool '{self.definition.name}' "
                "is not defined",
                f"secret '{name}' is not defined",
            )
        if HEADER_CONTROL_RE.search(value):
            raise RequestBuildError(
                f"Error: secret '{name}' of tool '{self.definition.name}' "
                "contains control characters",
                f"secret '{name}' contains control characters",
            )
        self.secret_values.append(value)
        return value

    def _found(self, part: ValuePart) -> Any:
        if isinstance(part, Placeholder):
            return self.arguments.get(part.name)
        document = self.earlier.get(part.key, MISSING)
        return MISSING if document is MISSING else find(document, part.path)

    def present(self, part: ValuePart) -> bool:
        """Whether ``part`` has a value (``null`` is none)."""
        return self._found(part) not in (None, MISSING)

    def raw(self, part: ValuePart) -> Any:
        """The JSON value of ``part``; raise when it has none."""
        value = self._found(part)
        if isinstance(part, Placeholder):
            if value is None:
                raise missing_argument(part.name, self.definition)
            self.consumed.add(part.name)
            return value
        if value is MISSING or value is None:
            wanted = f"{part.given} " if part.given else ""
            wanted += f"'{format_path(part.path)}'"
            if self.earlier.get(part.key, MISSING) is MISSING:
                what = "gave no JSON"
            elif value is None:
                what = f"gave null for {wanted}"
            else:
                what = f"gave no {wanted}"
            raise MissingStepValue(part.step, what)
        if part.step in self.hidden and isinstance(value, str):
            self.secret_values.append(value)
        return value

    def text(self, part: ValuePart) -> str:
        """``part`` as text; an absent optional one is empty."""
        if part.optional and not self.present(part):
            if isinstance(part, Placeholder):
                self.consumed.add(part.name)
            return ""
        value = self.raw(part)
        try:
            return render_value(value)
        except InvalidValue as err:
            source = part.name if isinstance(part, Placeholder) else part
            raise invalid_value(source, self.definition, str(err)) from None

    def left_out(self, parts: tuple[TemplatePart, ...]) -> bool:
        """Whether a field of ``parts`` is left out: it has placeholders and
        they are all optional and absent."""
        values = value_parts(parts)
        if not values or not all(p.optional and not self.present(p) for p in values):
            return False
        for part in values:
            if isinstance(part, Placeholder):
                self.consumed.add(part.name)
        return True

    def join(self, parts: tuple[TemplatePart, ...]) -> str:
        """``parts`` rendered as one text (secrets inserted as they are)."""
        out: list[str] = []
        for part in parts:
            if isinstance(part, Secret):
                out.append(self.secret(part.name))
            elif isinstance(part, (Placeholder, Reference)):
                out.append(self.text(part))
            else:
                out.append(part)
        return "".join(out)


def text_pairs(
    remaining: Mapping[str, Any], definition: ToolDefinition
) -> list[tuple[str, str]]:
    """Arguments as (key, text) pairs: a list gives one pair per non-null
    element, ``null`` is left out, an object is sent as JSON text."""
    pairs: list[tuple[str, str]] = []
    for key, value in remaining.items():
        values = value if isinstance(value, (list, tuple)) else [value]
        for item in values:
            if item is None:
                continue
            try:
                pairs.append((key, render_value(item)))
            except InvalidValue as err:
                raise invalid_value(key, definition, str(err)) from None
    return pairs


def template_of(text: str, definition: ToolDefinition) -> tuple[TemplatePart, ...]:
    try:
        return parse_template(text)
    except ValueError as err:
        raise RequestBuildError(
            f"Error: invalid body for tool '{definition.name}': {err}"
        ) from None
