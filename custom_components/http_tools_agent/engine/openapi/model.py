"""What the OpenAPI import lists and returns: operations, security schemes,
the auth chosen, the import's result and what it left out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

BASIC = "basic"
# The secret holding a basic scheme's username: the password's name + this.
BASIC_USERNAME_SUFFIX = "_username"


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation: how the import lists it and finds it again."""

    key: str  # the operationId when unique, else "GET /path"
    method: str
    path: str
    operation_id: str | None
    summary: str
    tag: str
    deprecated: bool

    @property
    def label(self) -> str:
        """``GET /pets/{petId} — Find pet by ID``."""
        head = f"{self.method} {self.path}"
        return f"{head} — {self.summary}" if self.summary else head


@dataclass(frozen=True, slots=True)
class AuthScheme:
    """A security scheme a tool can fill from a secret."""

    name: str
    location: str  # "header", "query" or "basic" (the `auth` field)
    parameter: str  # the header's or the query parameter's name
    prefix: str = ""  # "Bearer " for a bearer token

    @property
    def label(self) -> str:
        """``api_key: header X-API-Key`` / ``bearer: Authorization: Bearer …``
        / ``basic: HTTP basic``."""
        if self.location == BASIC:
            return f"{self.name}: HTTP basic"
        if self.prefix:
            return f"{self.name}: {self.parameter}: {self.prefix}…"
        return f"{self.name}: {self.location} {self.parameter}"


@dataclass(frozen=True, slots=True)
class Auth:
    """The scheme to fill and the secret that fills it."""

    scheme: AuthScheme
    secret: str


@dataclass(frozen=True, slots=True)
class Skipped:
    """An operation (or a part of one) the import left out, and why."""

    operation: str
    reason: str

    def __str__(self) -> str:
        """``GET /pet/{petId}/uploadImage: its body is multipart/form-data...``."""
        return f"{self.operation}: {self.reason}"


@dataclass(frozen=True, slots=True)
class ImportResult:
    """Tool definitions, the operations skipped and what was left out;
    `operations` holds each tool's operation, in the tools' order."""

    tools: tuple[dict[str, Any], ...]
    skipped: tuple[Skipped, ...]
    notes: tuple[Skipped, ...]
    operations: tuple[Operation, ...] = ()
