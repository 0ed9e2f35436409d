"""A tool's result as words a text-to-speech engine can read.

Used when a weak model gives no answer after its tools ran: reading the
result (flattened from JSON: `id 4, name bread, qty 1`) tells the user what
happened, which beats both silence and "open brace quote id quote…".
"""

from __future__ import annotations

import json
from typing import Any

DEFAULT_LIMIT = 300
_ELLIPSIS = "…"


def _words(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(
            f"{str(key).replace('_', ' ')} {_words(item)}".strip()
            for key, item in value.items()
            if item not in (None, "", [], {})
        )
    if isinstance(value, list):
        return "; ".join(w for item in value if (w := _words(item)))
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if value is None:
        return ""
    return " ".join(str(value).split())


def speakable(text: str, limit: int = DEFAULT_LIMIT) -> str:
    """Return `text` (JSON flattened to words) in at most about `limit` chars."""
    try:
        out = _words(json.loads(text))
    except ValueError, RecursionError:
        out = " ".join(text.split())
    if len(out) > limit:
        out = out[:limit].rsplit(" ", 1)[0].rstrip(",;") + _ELLIPSIS
    return out
