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
# A value that only names where it comes from: `{token}`, `{secret:token}`.
_REFERENCE_RE = re.compile(r"\{(secret:)?[A-Za-z0-9_-]{1,64}\??\}")
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


def _redact_body(node: Any, key: str = "") -> Any:
    """A body template with credential-like members' fixed values hidden
    (`{"token": "abc"}`; a lone placeholder or secret reference stays)."""
    if isinstance(node, dict):
        return {k: _redact_body(v, str(k)) for k, v in node.items()}
    if isinstance(node, list):
        return [_redact_body(v, key) for v in node]
    if (
        isinstance(node, str)
        and SECRET_QUERY_RE.search(key)
        and not _REFERENCE_RE.fullmatch(node)
    ):
        return REDACTED
    return node


def _redact_request(item: dict[str, Any]) -> dict[str, Any]:
    """One request's headers, URL, body and password hidden (a tool, or a
    step of a composite tool)."""
    if isinstance(headers := item.get("headers"), dict):
        item["headers"] = dict.fromkeys(headers, REDACTED)
    if isinstance(url := item.get("url"), str):
        item["url"] = redact_url(url)
    if "body" in item:
        item["body"] = _redact_body(item["body"])
    if isinstance(auth := item.get("auth"), dict):
        item["auth"] = {**auth, "password": REDACTED}
    session = item.get("session")
    if isinstance(session, dict) and isinstance(session.get("logout"), dict):
        item["session"] = {
            **session,
            "logout": _redact_request(dict(session["logout"])),
        }
    return item


def redact_tools(tools: Any) -> Any:
    """Return the tools with every header value, URL secret, credential-like
    body value and password hidden (in each step too)."""
    if not isinstance(tools, list):
        return tools
    redacted: list[Any] = []
    for tool in tools:
        if not isinstance(tool, dict):
            redacted.append(tool)
            continue
        item = _redact_request(dict(tool))
        if isinstance(steps := item.get("steps"), list):
            item["steps"] = [
                _redact_request(dict(step)) if isinstance(step, dict) else step
                for step in steps
            ]
        redacted.append(item)
    return redacted


def display_url(url: str) -> str:
    """A server URL fit for a title: without user info."""
    return _USERINFO_RE.sub(lambda m: m.group(1), url)
