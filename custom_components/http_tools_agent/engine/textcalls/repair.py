"""Near-JSON calls: the slips small models make, mended where only one
reading is possible.

Qwen2.5-Coder-0.5B, asked "What's on my shopping list?" in the demo, wrote
`{"name": "http-tools__list_items", "arguments": {"search": "x"}]}`: one
bracket of the wrong kind. Such a call is mended when the mend is the only
one that makes sense of the text; anything else stays a problem the model
is told about. The forms (docs/text-calls.md, "Near-JSON calls"):

- a closing bracket of the wrong kind (`]` where `}` belongs): replaced;
  a stray closer right before the one that belongs (`}]}`), or after the
  value ended (`}}}`): left out;
- a comma before a closing bracket (`{"city": "Rome",}`): left out;
- Python's quotes and words (`{'name': 'get_weather', 'arguments':
  {'city': 'Rome'}}`, `True`, `None`) when the text has no double-quoted
  string at all: made JSON;
- arguments written as a string that an escaped quote closes
  (`"arguments": "{\\"id\\": \\"1\\"}\\"}`, the 0.5B model's most
  frequent slip): the quote unescaped;
- the end of the reply inside the value: the closers that are missing,
  when nothing else is (the text ends after a whole string or value).

Never mended: a string left open, an unescaped quote inside a string, text
between values, or two readings (an escaped quote in an object). The caller
accepts a mend only when it decodes to calls of offered tools.
"""

from __future__ import annotations

import re

_CLOSER = {"{": "}", "[": "]"}
_PY_WORDS = {"True": "true", "False": "false", "None": "null"}
_PY_WORD = re.compile(r"\b(?:True|False|None)\b")


def repair_json(raw: str) -> str | None:
    """`raw` mended into JSON, or None when no single mend fits (or none
    is needed: the caller tries a mend only after `raw` failed to decode)."""
    text: str | None = raw.strip()
    if text and '"' not in text and "'" in text:
        text = _from_python(text)
    if text is None:
        return None
    text = _escaped_close(text)
    mended = _mend_brackets(text)
    if mended is None or mended == raw.strip():
        return None
    return mended


_ESCAPED_CLOSE = re.compile(r'\\"(\s*[}\]]+\s*)$')


def _escaped_close(text: str) -> str:
    """A string that an escaped quote closes at the end of the text, only
    closers after it: the quote unescaped (when the string is open there)."""
    match = _ESCAPED_CLOSE.search(text)
    if match is None or not _open_string_at(text, match.start()):
        return text
    return text[: match.start()] + '"' + match.group(1)


def _open_string_at(text: str, end: int) -> bool:
    """Whether a string is open at `end` (JSON's quotes and escapes)."""
    in_str = esc = False
    for c in text[:end]:
        if esc:
            esc = False
        elif c == "\\" and in_str:
            esc = True
        elif c == '"':
            in_str = not in_str
    return in_str


def _from_python(text: str) -> str | None:
    """A Python literal's quotes and words as JSON's (single quotes only)."""
    out: list[str] = []
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c != "'":
            j = text.find("'", i)
            chunk = text[i:] if j == -1 else text[i:j]
            out.append(_PY_WORD.sub(lambda m: _PY_WORDS[m.group()], chunk))
            i = n if j == -1 else j
            continue
        j = i + 1
        value: list[str] = []
        while j < n and text[j] != "'":
            if text[j] == "\\" and j + 1 < n:
                value.append(text[j : j + 2])
                j += 2
                continue
            value.append('\\"' if text[j] == '"' else text[j])
            j += 1
        if j >= n:
            return None  # a string left open
        out.append('"' + "".join(value) + '"')
        i = j + 1
    return "".join(out)


def _mend_brackets(text: str) -> str | None:
    """Closers of the wrong kind replaced, stray ones and commas before a
    closer left out, missing ones at the end added; None when a string is
    left open or a closer comes with nothing open and more follows."""
    out: list[str] = []
    stack: list[str] = []
    in_str = esc = False
    n = len(text)
    i = 0
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
            i += 1
            continue
        if c == '"':
            in_str = True
        elif c in _CLOSER:
            stack.append(_CLOSER[c])
        elif c in "}]":
            _drop_trailing_comma(out)
            if not stack:
                if text[i + 1 :].strip(" \t\r\n}]"):
                    return None
                break  # stray closers after the value ended
            expected = stack[-1]
            if c != expected:
                following = _next_significant(text, i + 1)
                if following == expected:
                    i += 1  # a stray closer before the one that belongs
                    continue
            stack.pop()
            out.append(expected)
            i += 1
            if not stack:
                if text[i:].strip(" \t\r\n}]"):
                    return None  # more after the value: not one call
                break
            continue
        out.append(c)
        i += 1
    if in_str:
        return None
    _drop_trailing_comma(out)
    body = "".join(out).rstrip()
    if stack:
        if not body or body[-1] not in '}]"':
            return None  # cut off inside a value (a number may be cut too)
        body += "".join(reversed(stack))
    return body


def _drop_trailing_comma(out: list[str]) -> None:
    """Leave out a comma (and the spaces after it) before a closer."""
    k = len(out) - 1
    while k >= 0 and out[k].isspace():
        k -= 1
    if k >= 0 and out[k] == ",":
        del out[k:]


def _next_significant(text: str, start: int) -> str:
    """The first character from `start` on that is not a space."""
    for c in text[start:]:
        if not c.isspace():
            return c
    return ""
