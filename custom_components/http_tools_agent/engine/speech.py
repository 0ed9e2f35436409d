"""A tool's own answer: ``speech``, a sentence over its shaped result.

``"speech": "{city}: {condition}, {temperature} degrees"``. Each ``{path}``
(:mod:`.paths`) reads the shaped result; ``{.}`` is the whole of it (a text
result); a path with ``[]`` (``{items[].name}``) gives every value, joined
with ", ". ``{{`` and ``}}`` are literal braces. Values are only ever
inserted as text: nothing the service or the model wrote is read as a
template. A path that finds nothing (or an empty list) leaves the sentence
unrendered (None), so the caller falls back to the model. The rules are in
``docs/tool-format.md`` ("A tool's own answer").
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from .bodies import compact_json
from .paths import MISSING, Path, find, has_each, parse_path
from .problems import FieldProblems, type_name
from .speakable import speakable

MAX_SPEECH_LENGTH = 1000
JOINER = ", "

type SpeechPart = str | tuple[str, Path]


@lru_cache(maxsize=256)
def parse_speech(text: str) -> tuple[SpeechPart, ...]:
    """Literal text and (written path, path) pairs; raise ``ValueError``."""
    parts: list[SpeechPart] = []
    literal: list[str] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char in "{}" and text.startswith(char * 2, i):
            literal.append(char)
            i += 2
            continue
        if char == "}":
            raise ValueError(
                f"unmatched '}}' at position {i}: write a literal brace as '}}}}'"
            )
        if char == "{":
            end = text.find("}", i + 1)
            if end == -1:
                raise ValueError(f"'{{' at position {i} is not closed")
            inner = text[i + 1 : end]
            try:
                path = parse_path(inner)
            except ValueError as err:
                raise ValueError(f"'{{{inner}}}' at position {i}: {err}") from None
            if literal:
                parts.append("".join(literal))
                literal = []
            parts.append((inner, path))
            i = end + 1
            continue
        literal.append(char)
        i += 1
    if literal:
        parts.append("".join(literal))
    return tuple(parts)


def _said(value: Any) -> str | None:
    """A value as words; None when it says nothing."""
    if value is None or value is MISSING:
        return None
    if isinstance(value, str):
        words = " ".join(value.split())
        return words or None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list) and not value:
        return None
    if isinstance(value, list) and all(not isinstance(v, (dict, list)) for v in value):
        spoken = [s for v in value if (s := _said(v)) is not None]
        return JOINER.join(spoken) or None
    return speakable(compact_json(value), limit=10_000) or None


def render_speech(template: str, result: Any) -> str | None:
    """``template`` over ``result``; None when a path finds nothing."""
    try:
        parts = parse_speech(template)
    except ValueError:
        return None
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
            continue
        _, path = part
        value = find(result, path)
        if has_each(path) and isinstance(value, list):
            spoken = [s for item in value if (s := _said(item)) is not None]
            text = JOINER.join(spoken) if spoken else None
        else:
            text = _said(value)
        if text is None:
            return None
        out.append(text)
    sentence = " ".join("".join(out).split())
    return sentence or None


def check_speech(raw: object, out: FieldProblems) -> str | None:
    """The ``speech`` field."""
    if raw is None:
        return None
    if not isinstance(raw, str):
        out.add("speech", f"must be a string, got {type_name(raw)}")
        return None
    if not raw.strip():
        out.add("speech", "must not be empty")
        return None
    if len(raw) > MAX_SPEECH_LENGTH:
        out.add("speech", f"must be at most {MAX_SPEECH_LENGTH} characters")
        return None
    try:
        parse_speech(raw)
    except ValueError as err:
        out.add("speech", str(err))
        return None
    return raw
