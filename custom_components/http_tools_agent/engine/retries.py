"""When a request is sent again: a busy server (``429``, ``503``) or a
dropped connection (the server closed it before answering), for a request
that may be repeated, within the call's time limit.

A request may be repeated when the tool says so (``idempotent``, else
``read_only``), else when its verb only reads (GET, HEAD, OPTIONS, TRACE): a
POST, PUT, PATCH or DELETE not marked ``idempotent`` is never sent twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
import math

import aiohttp

from .definitions import ToolDefinition
from .fields import SAFE_METHODS

# Three tries at most, 0.5 s then 1 s apart: a server that is restarting or
# shedding load usually answers within a second or two, and a voice turn
# cannot wait much longer (the default time limit is 15 s). A `Retry-After`
# replaces the pause: the server knows best.
RETRY_DELAYS: tuple[float, ...] = (0.5, 1.0)
BUSY_STATUSES = frozenset({429, 503})


def repeatable(definition: ToolDefinition, method: str) -> bool:
    """Whether a request of ``definition`` with verb ``method`` may be sent
    again: as the tool declares it, else by its verb."""
    effects = definition.effects
    if effects.idempotent is not None:
        return effects.idempotent
    if effects.read_only is not None:
        return effects.read_only
    return method.upper() in SAFE_METHODS


def dropped(err: BaseException) -> bool:
    """The server closed the connection before answering (not a refused
    connection: nobody is there to be busy)."""
    return isinstance(
        err, (aiohttp.ServerDisconnectedError, aiohttp.ClientConnectionResetError)
    )


def retry_after(
    headers: Mapping[str, str], now: datetime | None = None
) -> float | None:
    """The seconds a ``Retry-After`` header asks for (RFC 9110 10.2.3: a
    number of seconds or an HTTP date); None when absent or unreadable."""
    value = headers.get("Retry-After", "").strip()
    if not value:
        return None
    if value.isdigit():
        return float(value)
    try:
        when = parsedate_to_datetime(value)
    except TypeError, ValueError:
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    seconds = (when - (now or datetime.now(UTC))).total_seconds()
    return max(seconds, 0.0) if math.isfinite(seconds) else None


def pause(
    tries: int,
    delays: tuple[float, ...],
    asked: float | None,
    left: float,
) -> float | None:
    """How long to wait before the next try, after ``tries`` tries; None:
    no more tries (none left, or the wait would not end before the time
    limit)."""
    if tries > len(delays):
        return None
    wait = asked if asked is not None else delays[tries - 1]
    return wait if wait < left else None
