"""Logins kept across calls: one :class:`SessionStore` holds them.

A tool's login step (``session``, :mod:`.session_field`) is kept under the
digest of the request it sends (verb, URL, headers, body, credentials): the
tools whose logins send the same request share one session, a login with
other credentials has its own. What is kept (the answer, the cookie jar, the
logout ready to send) is a secret: nothing here logs it or shows it in a
``repr``. The store's owner drops it when the tools are replaced or the
entry unloads (:meth:`SessionStore.async_close` logs every kept login out).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
import contextlib
from dataclasses import dataclass, field
import hashlib
import json
import time
from typing import Any

import aiohttp

from .requests import PreparedRequest
from .transport import Limits, send

# How long a logout may take when it is sent after the calls.
LOGOUT_SECONDS = 10.0
_LOGOUT_LIMITS = Limits(4096, 4096, shaped=True)


def login_key(prepared: PreparedRequest, verify_ssl: bool) -> str:
    """The digest that names a login: the request it sends, whole."""
    credentials = prepared.auth
    parts = [
        prepared.method,
        prepared.url,
        sorted((k.lower(), v) for k, v in prepared.headers.items()),
        (prepared.body() or b"").hex(),
        [credentials.type, credentials.username, credentials.password]
        if credentials is not None
        else None,
        verify_ssl,
    ]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


@dataclass(slots=True, repr=False)
class KeptLogin:
    """What a login gave, for the calls after it."""

    # The login's JSON (MISSING when it is none), its headers and cookies
    # under the renderer's `header:name` and `cookie:name`.
    earlier: dict[str, Any]
    jar: aiohttp.CookieJar
    expires: float
    logout: PreparedRequest | None = None
    client: aiohttp.ClientSession | None = None
    verify_ssl: bool = True

    def __repr__(self) -> str:
        """Nothing of the session."""
        return "KeptLogin(***)"

    def secrets(self) -> tuple[str, ...]:
        """The cookies' values: no text may show them (what the later steps
        read of the answer is hidden as they render it)."""
        return tuple(morsel.value for morsel in self.jar)


def new_jar() -> aiohttp.CookieJar:
    """A call's cookie jar: a device's IP address keeps its cookies too."""
    return aiohttp.CookieJar(unsafe=True)


@dataclass(slots=True, repr=False)
class SessionStore:
    """The kept logins of one set of tools, and a lock per login so that
    calls at once log in once."""

    clock: Callable[[], float] = time.monotonic
    _kept: dict[str, KeptLogin] = field(default_factory=dict)
    _locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    def __repr__(self) -> str:
        """How many, never what."""
        return f"SessionStore({len(self._kept)} kept)"

    def __len__(self) -> int:
        """How many logins are kept."""
        return len(self._kept)

    def lock(self, key: str) -> asyncio.Lock:
        """The lock a call holds while it looks for, or makes, login `key`."""
        return self._locks.setdefault(key, asyncio.Lock())

    async def reuse(self, key: str) -> KeptLogin | None:
        """The kept login `key`; one that expired is logged out and dropped."""
        kept = self._kept.get(key)
        if kept is None:
            return None
        if self.clock() < kept.expires:
            return kept
        del self._kept[key]
        await log_out(kept)
        return None

    def keep(self, key: str, kept: KeptLogin) -> None:
        """Keep a fresh login."""
        self._kept[key] = kept

    def expiry(self, keep_seconds: float) -> float:
        """When a login made now stops being reused."""
        return self.clock() + keep_seconds

    def forget(self, key: str, kept: KeptLogin) -> None:
        """Drop a login the service no longer takes (it answered 401 or
        403): no logout, and only if no other call replaced it already."""
        if self._kept.get(key) is kept:
            del self._kept[key]

    def _drain(self) -> Iterator[KeptLogin]:
        kept, self._kept = self._kept, {}
        self._locks = {}
        yield from kept.values()

    async def async_close(self) -> None:
        """Log every kept login out and forget them all."""
        await asyncio.gather(*(log_out(kept) for kept in self._drain()))


async def log_out(kept: KeptLogin) -> None:
    """Send a kept login's logout, if it has one; a failure changes nothing
    (the service ends the session when it expires)."""
    if kept.logout is None or kept.client is None or kept.client.closed:
        return
    with contextlib.suppress(Exception):
        async with asyncio.timeout(LOGOUT_SECONDS):
            await send(
                kept.client,
                kept.logout,
                LOGOUT_SECONDS,
                _LOGOUT_LIMITS,
                kept.verify_ssl,
                kept.jar,
            )
