"""What the OpenAPI import writes as text: descriptions without Markdown or
HTML, cut at a word; tool names from operations;
an operation's path as a URL template."""

from __future__ import annotations

import re

from ..fields import MAX_NAME_LENGTH
from ..templates import literal
from .model import Operation

MAX_DESCRIPTION = 300
MAX_PROPERTY_DESCRIPTION = 200

_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_HTML = re.compile(r"<[^>]+>")
_EMPHASIS = re.compile(r"\*\*|__|`+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s*", re.MULTILINE)
# "a <b>thing</b>." leaves "thing ."; ".webp" in "include .webp" stays.
_SPACE_BEFORE_MARK = re.compile(r" ([.,;:!?])(?=\s|$)")
_NOT_NAME = re.compile(r"[^A-Za-z0-9_-]+")
PATH_PARAM = re.compile(r"{([^{}]+)}")


def clean_text(text: object) -> str:
    """Markdown and HTML as one line of plain text."""
    if not isinstance(text, str):
        return ""
    text = _IMAGE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _HTML.sub(" ", text)
    text = _HEADING.sub("", text)
    text = _EMPHASIS.sub("", text)
    return _SPACE_BEFORE_MARK.sub(r"\1", " ".join(text.split()))


def trim(text: str, limit: int) -> str:
    """``text`` cut at a word to at most ``limit`` characters (``…`` ends it)."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-—") + "…"


def url_template(path: str) -> str:
    """The path as a URL template: ``{param}`` kept, other braces literal."""
    out: list[str] = []
    last = 0
    for match in PATH_PARAM.finditer(path):
        out.append(literal(path[last : match.start()]))
        out.append(match.group(0))
        last = match.end()
    out.append(literal(path[last:]))
    return "".join(out)


def base_name(op: Operation) -> str:
    """A tool name for ``op`` (before making it unique)."""
    base = op.operation_id or ""
    if base:
        # FastAPI's generated id: function name + path + "_" + verb.
        suffix = re.sub(r"\W", "_", op.path) + "_" + op.method.lower()
        if base.endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
    else:
        segments = [s.strip("{}") for s in op.path.split("/") if s]
        base = "_".join([op.method.lower(), *segments])
    name = _NOT_NAME.sub("_", base).strip("_-")
    name = re.sub(r"_{2,}", "_", name)
    return name[:MAX_NAME_LENGTH] or op.method.lower()
