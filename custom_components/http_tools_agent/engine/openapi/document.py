"""Read an OpenAPI (3.0, 3.1) or Swagger (2.0) document: size, syntax, refs, validity.

:func:`read_document` takes the bytes (or text) of a JSON or YAML document
and returns it as plain JSON data with a resolver for its ``$ref``s, or
raises :class:`OpenApiError` saying what is wrong:

- more than :data:`MAX_DOCUMENT_BYTES`, or more than :data:`MAX_NODES` values
  once YAML aliases are expanded (a document that small cannot describe an
  API that large: it would be an alias bomb);
- not JSON or YAML, not an object, no ``openapi``/``swagger`` version, a
  version other than 2.0 and 3.x, no ``paths``;
- a ``$ref`` that points nowhere in the document, or to another file or
  URL: only references inside the document are followed, so reading a
  document never makes a request or opens a file.

The document is then checked against its version of the specification by
``openapi-spec-validator``; what it finds is kept as warnings, not errors:
real services publish documents that depart from the specification in small
ways (Sonarr's declares a path parameter its path does not have) and are
still usable. ``$ref``s are resolved with ``referencing`` (the resolver of
``jsonschema``), on the document alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
import datetime as dt
import json
import math
from typing import Any

from openapi_spec_validator import (
    OpenAPIV2SpecValidator,
    OpenAPIV30SpecValidator,
    OpenAPIV31SpecValidator,
    OpenAPIV32SpecValidator,
)
from openapi_spec_validator.validation.validators import SpecValidator
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
import yaml

MAX_DOCUMENT_BYTES = 10 * 1024 * 1024
# Values (objects, arrays, scalars) in the document, YAML aliases expanded.
MAX_NODES = 2_000_000
MAX_WARNINGS = 5
# Following a $ref to a $ref to ...: more than this is a loop.
MAX_REF_CHAIN = 32
_DOCUMENT_URI = "urn:http-tools-agent:openapi-document"
_SHOWN_PROBLEMS = 3

_VALIDATORS: dict[str, type[SpecValidator]] = {
    "2.0": OpenAPIV2SpecValidator,
    "3.0": OpenAPIV30SpecValidator,
    "3.1": OpenAPIV31SpecValidator,
    "3.2": OpenAPIV32SpecValidator,
}


class OpenApiError(ValueError):
    """The document cannot be used; ``kind`` is a short key (``broken_ref``...)."""

    def __init__(self, kind: str, message: str) -> None:
        """Keep the kind; the message says what is wrong."""
        super().__init__(message)
        self.kind = kind


def _yaml_loader() -> type[yaml.SafeLoader]:
    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return loader


def _decode(raw: bytes | str) -> Any:
    """JSON first (the common case, and strict), else YAML (a superset)."""
    if isinstance(raw, bytes):
        if len(raw) > MAX_DOCUMENT_BYTES:
            raise too_large()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as err:
            raise OpenApiError(
                "not_openapi", f"the document is not UTF-8 text (byte {err.start})"
            ) from None
    else:
        if len(raw.encode("utf-8", "surrogatepass")) > MAX_DOCUMENT_BYTES:
            raise too_large()
        text = raw.removeprefix("\ufeff")
    if not text.strip():
        raise OpenApiError("not_openapi", "the document is empty")
    if text.lstrip()[:1] == "<":
        raise OpenApiError(
            "not_openapi",
            "the document is not an OpenAPI document but HTML (a web page, such "
            "as the API's documentation, not the document itself)",
        )
    if text.lstrip()[:1] in ("{", "["):
        try:
            return json.loads(text)
        except RecursionError:
            raise OpenApiError("not_openapi", "the document nests too deeply") from None
        except ValueError:
            pass  # YAML's flow style also starts with a brace
    try:
        return yaml.load(text, Loader=_yaml_loader())  # noqa: S506 - a safe loader
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        problem = getattr(err, "problem", None) or "invalid syntax"
        raise OpenApiError(
            "not_openapi", f"the document is neither JSON nor YAML: {problem}{where}"
        ) from None
    except RecursionError:
        raise OpenApiError("not_openapi", "the document nests too deeply") from None


def too_large() -> OpenApiError:
    """The error of a document over the size limit."""
    mib = MAX_DOCUMENT_BYTES // (1024 * 1024)
    return OpenApiError("too_large", f"the document is larger than {mib} MiB")


def _plain(value: Any, budget: list[int]) -> Any:
    """JSON data from YAML data: string keys, dates as ISO text; counts values."""
    budget[0] -= 1
    if budget[0] < 0:
        raise OpenApiError(
            "too_large",
            f"the document holds more than {MAX_NODES:,} values once its YAML "
            "aliases are expanded",
        )
    if isinstance(value, Mapping):
        return {str(k): _plain(v, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, budget) for v in value]
    if isinstance(value, (dt.date, dt.datetime, dt.time)):
        return value.isoformat()
    if isinstance(value, float) and math.isnan(value):  # not JSON
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _version(data: Mapping[str, Any]) -> str:
    """``2.0``, ``3.0``, ``3.1`` or ``3.2``; raises OpenApiError."""
    if "swagger" in data:
        if str(data["swagger"]).strip() != "2.0":
            raise OpenApiError(
                "unsupported_version",
                f"Swagger version '{data['swagger']}' is not supported (2.0 is)",
            )
        return "2.0"
    declared = str(data.get("openapi", "")).strip()
    key = ".".join(declared.split(".")[:2])
    if key not in _VALIDATORS or key == "2.0":
        raise OpenApiError(
            "unsupported_version",
            f"OpenAPI version '{declared}' is not supported (2.0, 3.0, 3.1 and 3.2 are)",
        )
    return key


def _refs(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every ``$ref`` string in ``value`` and where it stands."""
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                yield ref, path
            stack.extend(
                (child, f"{path}.{key}" if path else key)
                for key, child in node.items()
                if isinstance(child, (dict, list))
            )
        elif isinstance(node, list):
            stack.extend(
                (child, f"{path}.{index}")
                for index, child in enumerate(node)
                if isinstance(child, (dict, list))
            )


def _refuse(uri: str) -> Resource[Any]:
    """Retrieval for the registry: never fetch or open anything."""
    raise LookupError(uri)


@dataclass(frozen=True, slots=True)
class OpenApiSource:
    """A read document: its data, version and the validator's warnings."""

    data: dict[str, Any]
    version: str
    url: str | None = None
    warnings: tuple[str, ...] = ()
    _registry: Registry[Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Register the document as the only resource its refs may reach."""
        registry: Registry[Any] = Registry(retrieve=_refuse).with_resource(  # type: ignore[call-arg]
            _DOCUMENT_URI, Resource.opaque(self.data)
        )
        object.__setattr__(self, "_registry", registry)

    @property
    def swagger2(self) -> bool:
        """Whether it is a Swagger 2.0 document."""
        return self.version == "2.0"

    def lookup(self, ref: str) -> Any:
        """What ``ref`` points to; raises OpenApiError when nothing."""
        if not ref.startswith("#"):
            raise OpenApiError(
                "broken_ref",
                f"$ref '{ref}' points outside the document: only references "
                "inside the document are followed",
            )
        try:
            return self._registry.resolver(_DOCUMENT_URI).lookup(ref).contents
        except Unresolvable:
            raise OpenApiError(
                "broken_ref", f"$ref '{ref}' points to nothing in the document"
            ) from None

    def deref(self, node: Any) -> Any:
        """``node`` with its ``$ref`` (and the target's, ...) followed.

        Keys beside a ``$ref`` (OpenAPI 3.1 allows ``description`` there)
        win over the target's.
        """
        seen = 0
        while isinstance(node, dict) and isinstance(node.get("$ref"), str):
            seen += 1
            if seen > MAX_REF_CHAIN:
                raise OpenApiError(
                    "broken_ref", f"$ref '{node['$ref']}' is part of a loop"
                )
            target = self.lookup(node["$ref"])
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            node = (
                {**target, **siblings}
                if siblings and isinstance(target, dict)
                else target
            )
        return node


def _check_refs(source: OpenApiSource) -> None:
    broken: list[str] = []
    checked: set[str] = set()
    for ref, where in _refs(source.data, ""):
        if ref in checked:
            continue
        checked.add(ref)
        try:
            source.lookup(ref)
        except OpenApiError as err:
            broken.append(f"{err} (at {where})")
    if broken:
        more = len(broken) - _SHOWN_PROBLEMS
        text = "; ".join(broken[:_SHOWN_PROBLEMS])
        if more > 0:
            text += f"; and {more} more"
        raise OpenApiError("broken_ref", f"the document has broken references: {text}")


def _validate(data: dict[str, Any], version: str) -> tuple[str, ...]:
    """What the specification's validator finds, as short texts."""
    # No resolver handlers: the validator must not fetch or open what a
    # $ref names either (the refs were checked to stay inside).
    local_only = type(
        "LocalOnlyValidator", (_VALIDATORS[version],), {"resolver_handlers": {}}
    )
    found: list[str] = []
    for error in local_only(data).iter_errors():
        where = ".".join(str(p) for p in error.absolute_path)
        message = " ".join(str(error.message).split())
        if len(message) > 200:
            message = message[:199] + "…"
        found.append(f"{where}: {message}" if where else message)
        if len(found) >= MAX_WARNINGS:
            break
    return tuple(found)


def read_document(raw: bytes | str, url: str | None = None) -> OpenApiSource:
    """Read, check and validate a document (``url``: where it came from).

    Raises :class:`OpenApiError`. CPU-bound (a large document takes about a
    second): run it in an executor.
    """
    decoded = _decode(raw)
    if not isinstance(decoded, Mapping):
        raise OpenApiError(
            "not_openapi", "the document is not an OpenAPI document (not an object)"
        )
    if "openapi" not in decoded and "swagger" not in decoded:
        raise OpenApiError(
            "not_openapi",
            "the document is not an OpenAPI document (no 'openapi' or 'swagger' "
            "version field)",
        )
    try:
        data: dict[str, Any] = _plain(decoded, [MAX_NODES])
    except RecursionError:
        raise OpenApiError("not_openapi", "the document nests too deeply") from None
    version = _version(data)
    if not isinstance(data.get("paths"), dict) or not data["paths"]:
        raise OpenApiError("no_operations", "the document describes no paths")
    source = OpenApiSource(data, version, url)
    _check_refs(source)
    try:
        warnings = _validate(data, version)
    except RecursionError:
        warnings = ("the document nests too deeply to be validated",)
    return OpenApiSource(data, version, url, warnings)
