"""Hiding secrets: URL credentials, credential-like query values, headers.

Shared by diagnostics, the HTTP view, the services and the entry title.
"""

from __future__ import annotations

import re
from typing import Any

REDACTED = "**REDACTED**"
# Query parameters that usually carry credentials.
SECRET_QUERY_RE = re.compile(
    r"(key|token|secret|pass|auth|sig|session|credential)", re.IGNORECASE
)
_PLACEHOLDER_RE = re.compile(r"\{[A-Za-z0-9_-]{1,64}\}")
_USERINFO_RE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*://)([^/?#@]*)@")


def redact_url(url: str) -> str:
    """Hide user info and credential-like query values of a URL template."""
    url = _USERINFO_RE.sub(lambda m: f"{m.group(1)}{REDACTED}@", url)
    base, sep, rest = url.partition("?")
    if not sep:
        return url
    query, hash_sep, fragment = rest.partition("#")
    params = []
    for param in query.split("&"):
        name, eq, value = param.partition("=")
        secret = (
            eq
            and value
            and SECRET_QUERY_RE.search(name)
            and not _PLACEHOLDER_RE.fullmatch(value)
        )
        params.append(f"{name}={REDACTED}" if secret else param)
    return f"{base}?{'&'.join(params)}{hash_sep}{fragment}"


def redact_tools(tools: Any) -> Any:
    """Return the tools with every header value and URL secret hidden."""
    if not isinstance(tools, list):
        return tools
    redacted: list[Any] = []
    for tool in tools:
        if not isinstance(tool, dict):
            redacted.append(tool)
            continue
        item = dict(tool)
        if isinstance(headers := item.get("headers"), dict):
            item["headers"] = dict.fromkeys(headers, REDACTED)
        if isinstance(url := item.get("url"), str):
            item["url"] = redact_url(url)
        redacted.append(item)
    return redacted


def display_url(url: str) -> str:
    """A server URL fit for a title: without user info."""
    return _USERINFO_RE.sub(lambda m: m.group(1), url)
