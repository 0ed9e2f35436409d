"""Gemma 4 and FunctionGemma calls: ``call:get_weather{city:<|"|>Rome<|"|>}``.

Gemma 4 writes ``<|tool_call>call:NAME{…}<tool_call|>``, FunctionGemma
``<start_function_call>call:NAME{…}<end_function_call>``. Inside the braces
keys are bare (anything but ``:`` and ``}``), strings sit between ``<|"|>``
(Gemma 4) or ``<escape>`` (FunctionGemma) marks, and numbers, ``true``,
``false``, ``null``, ``{…}`` and ``[…]`` are as in JSON (llama.cpp's Gemma 4
grammar). A server that drops special tokens drops the string marks too:
a bare value then runs to the next ``,`` or closing bracket and is typed by
the tool's schema.
"""

from __future__ import annotations

import json
from typing import Any

from .coercion import coerce_value
from .markup import Parsed, problem
from .names import ToolNames

STRING_MARKS = ('<|"|>', "<escape>")
_CALL = "call:"
_NUMBER_START = frozenset("-0123456789")


class _Broken(ValueError):
    """The arguments do not follow the syntax."""


class _Reader:
    """Recursive descent over one call's ``{…}``."""

    __slots__ = ("pos", "text")

    def __init__(self, text: str, pos: int) -> None:
        self.text = text
        self.pos = pos

    def _space(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos].isspace():
            pos += 1
        self.pos = pos

    def _take(self, token: str) -> bool:
        self._space()
        if self.text.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def obj(self) -> dict[str, Any]:
        if not self._take("{"):
            raise _Broken("expected '{'")
        out: dict[str, Any] = {}
        if self._take("}"):
            return out
        while True:
            self._space()
            colon = self.text.find(":", self.pos)
            if colon == -1 or "}" in self.text[self.pos : colon]:
                raise _Broken("expected key:value")
            key = self.text[self.pos : colon].strip().strip("\"'")
            self.pos = colon + 1
            out[key] = self.value(bare_key=key)
            if self._take(","):
                continue
            if self._take("}"):
                return out
            raise _Broken("expected ',' or '}'")

    def array(self) -> list[Any]:
        self._take("[")
        out: list[Any] = []
        if self._take("]"):
            return out
        while True:
            out.append(self.value(bare_key=None))
            if self._take(","):
                continue
            if self._take("]"):
                return out
            raise _Broken("expected ',' or ']'")

    def value(self, *, bare_key: str | None) -> Any:
        self._space()
        text, pos = self.text, self.pos
        for mark in STRING_MARKS:
            if text.startswith(mark, pos):
                end = text.find(mark, pos + len(mark))
                if end == -1:
                    raise _Broken("a string is not closed")
                self.pos = end + len(mark)
                return text[pos + len(mark) : end]
        if pos >= len(text):
            raise _Broken("a value is missing")
        c = text[pos]
        if c == "{":
            return self.obj()
        if c == "[":
            return self.array()
        if c == '"':
            try:
                value, self.pos = json.JSONDecoder(strict=False).raw_decode(text, pos)
            except ValueError as err:
                raise _Broken("a string is not closed") from err
            return value
        return self._bare(bare_key)

    def _bare(self, key: str | None) -> Any:
        """A number, a JSON word, or (marks dropped) text to the next
        separator at this level."""
        text, pos = self.text, self.pos
        end = pos
        while end < len(text) and text[end] not in ",}]":
            end += 1
        raw = text[pos:end].strip()
        self.pos = end
        if raw in ("true", "false", "null"):
            return json.loads(raw)
        if raw and raw[0] in _NUMBER_START:
            try:
                return json.loads(raw)
            except ValueError:
                pass
        return raw if key is None else _Typed(raw)


class _Typed(str):
    """A bare value, typed later by the tool's schema for its key."""

    __slots__ = ()


def _typed(args: dict[str, Any], name: str, tools: ToolNames) -> dict[str, Any]:
    return {
        key: coerce_value(str(value), tools.param_schema(name, key))
        if isinstance(value, _Typed)
        else value
        for key, value in args.items()
    }


def read_call(
    text: str, start: int, tools: ToolNames
) -> tuple[str, dict[str, Any], int]:
    """One ``call:NAME{…}`` (or ``NAME{…}``) from ``text[start:]``: the name
    as written, the arguments, and where the call ended."""
    pos = start
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if text.startswith(_CALL, pos):
        pos += len(_CALL)
    brace = text.find("{", pos)
    if brace == -1:
        raise _Broken("expected NAME{…} after 'call:'")
    written = text[pos:brace].strip()
    if not written or any(c.isspace() or c in "<>{}()[]" for c in written):
        raise _Broken("invalid function name")
    reader = _Reader(text, brace)
    args = reader.obj()
    name = tools.resolve(written) or written
    return written, _typed(args, name, tools), reader.pos


def parse_gemma(body: str, tools: ToolNames, *, closed: bool) -> Parsed:
    """The calls of one Gemma block (its text between the markers)."""
    out = Parsed()
    pos = 0
    markup = body.strip()
    while True:
        while pos < len(body) and (body[pos].isspace() or body[pos] == ","):
            pos += 1
        if pos >= len(body):
            break
        try:
            written, args, pos = read_call(body, pos, tools)
        except _Broken as err:
            reason = str(err)
            if not closed:
                reason += ", the reply ended inside the call"
            out.problems.append(problem(reason, markup))
            return out
        out.calls.append((tools.resolve(written) or written, args))
    if not out.calls:
        out.problems.append(problem("empty call block", markup))
    return out


def parse_stripped_gemma(text: str, tools: ToolNames) -> Parsed | None:
    """``call:NAME{…}`` whose markers the server dropped: calls only when
    the text is nothing but calls of offered tools, else None (words)."""
    out = Parsed()
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            return out if out.calls else None
        try:
            written, args, pos = read_call(text, pos, tools)
        except _Broken:
            return None
        if (name := tools.exact(written)) is None:
            return None
        out.calls.append((name, args))
