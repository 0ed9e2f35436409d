"""A tool's result as words a text-to-speech engine can read.

Used when a weak model gives no answer after its tools ran: reading the
result tells the user what happened, which beats both silence and "open
brace quote id quote…". It should sound like an answer: things with a name
are said by it, with their one number (`apples (3), bananas (6), milk (1)`);
other JSON is flattened to words (`deleted 3`, `temperature 16`).
"""

from __future__ import annotations

import json
from typing import Any

DEFAULT_LIMIT = 300
_ELLIPSIS = "…"


# A service's acknowledgement (`{"ok": true, …}`): said by "Done" already,
# and "ok yes" is no answer.
_ACKNOWLEDGEMENTS = frozenset({"ok", "success", "succeeded"})

# Fields that name a thing, in the order they are preferred.
_LABELS = ("name", "title", "label", "summary", "text", "message", "description")


def _named(value: dict[str, Any]) -> str | None:
    """`name (number)` for a thing with a name, else None."""
    label = next(
        (
            value[k]
            for k in _LABELS
            if isinstance(value.get(k), str) and value[k].strip()
        ),
        None,
    )
    if label is None:
        return None
    numbers = [
        v
        for k, v in value.items()
        if k not in _LABELS
        and k != "id"
        and isinstance(v, int | float)
        and not isinstance(v, bool)
    ]
    label = " ".join(label.split())
    return f"{label} ({_words(numbers[0])})" if len(numbers) == 1 else label


def _words(value: Any) -> str:
    if isinstance(value, dict) and (named := _named(value)) is not None:
        return named
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        names = [_named(v) for v in value]
        if all(n is not None for n in names):
            return ", ".join(n for n in names if n)
    if isinstance(value, dict):
        return ", ".join(
            f"{str(key).replace('_', ' ')} {_words(item)}".strip()
            for key, item in value.items()
            if item not in (None, "", [], {})
            and not (item is True and str(key).lower() in _ACKNOWLEDGEMENTS)
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
