"""What comes back: a response's body as the text a model reads.

By content type: JSON compacted (indentation wastes the model's budget);
text as it is; HTML as its text (tags, scripts and styles removed); binary
(images, audio, video, PDF, archives, or bytes that are no text) never as
characters but described: ``image/jpeg, 48 KB``; a JPEG or PNG whose bytes
were kept whole (for a model that reads images) is a :class:`Picture` beside
its description. A body without a useful type is sniffed (JSON, HTML, a
file's magic bytes). What a tool's shape
then picks of a JSON body is in :mod:`.shapes`. The rules are in
``docs/tool-format.md`` ("What the model receives").
"""

from __future__ import annotations

import base64
import codecs
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from html.parser import HTMLParser
import json
import re
from typing import Any

from .paths import MISSING
from .words import word_set


class BodyKind(StrEnum):
    """What a body is, for the model."""

    EMPTY = "empty"
    JSON = "json"
    TEXT = "text"
    HTML = "html"
    BINARY = "binary"


# Media types that are never text, whatever their bytes.
_BINARY_PREFIXES = ("image/", "audio/", "video/", "font/", "model/")
_BINARY_TYPES = word_set("""
    application/pdf application/zip application/gzip application/x-gzip
    application/x-tar application/x-7z-compressed application/protobuf
    application/x-protobuf application/vnd.google.protobuf application/msgpack
    application/x-msgpack application/cbor application/wasm
""")
# Types that say nothing about the bytes: sniffed.
_UNTYPED = frozenset({"", "application/octet-stream", "binary/octet-stream"})
_NDJSON_TYPES = word_set("""
    application/x-ndjson application/ndjson application/jsonl
    application/x-jsonlines application/jsonlines
""")
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Images every server that reads images decodes (llama.cpp's `stb_image`
# reads no WebP, OpenAI no animated GIF): only these go to a model as pictures.
PICTURE_TYPES = frozenset({"image/jpeg", "image/png"})
# A file's first bytes, for a body whose type says nothing.
_MAGIC = (
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"%PDF-", "application/pdf"),
    (b"PK\x03\x04", "application/zip"),
    (b"\x1f\x8b", "application/gzip"),
    (b"ID3", "audio/mpeg"),
    (b"OggS", "audio/ogg"),
    (b"fLaC", "audio/flac"),
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def media_type(content_type: str | None) -> str:
    """``image/jpeg`` of ``image/jpeg; q=1`` (lower case; empty when absent)."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def is_json_type(kind: str) -> bool:
    """``application/json``, ``text/json`` and every ``+json`` type."""
    return kind in ("application/json", "text/json") or kind.endswith("+json")


def is_binary_type(kind: str) -> bool:
    """A type whose bodies are never text."""
    return kind.startswith(_BINARY_PREFIXES) or kind in _BINARY_TYPES


def is_untyped(kind: str) -> bool:
    """A type that says nothing of the bytes (they are sniffed)."""
    return kind in _UNTYPED


def read_whole(kind: str) -> bool:
    """Types read up to the byte cap even without a shape: compacting JSON
    and stripping HTML need the whole document."""
    return is_json_type(kind) or kind in _NDJSON_TYPES or kind in _HTML_TYPES


def _sniffed(data: bytes) -> str | None:
    for magic, kind in _MAGIC:
        if data.startswith(magic):
            return kind
    if data[:4] == b"RIFF" and data[8:12] in (b"WEBP", b"WAVE"):
        return "image/webp" if data[8:12] == b"WEBP" else "audio/wav"
    if data[4:8] == b"ftyp":
        return "video/mp4"
    return None


def decode(data: bytes, charset: str | None, final: bool) -> str:
    """Decode with the declared charset when it is a text encoding, else UTF-8.

    The server names the charset: `base64`, `zlib` or `rot13` are codecs too,
    and must never turn a response into an exception.
    """
    encoding = "utf-8"
    if charset:
        try:
            info = codecs.lookup(charset)
        except LookupError:
            pass
        else:
            if getattr(info, "_is_text_encoding", True):
                encoding = info.name
    try:
        decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
        return decoder.decode(data, final=final)
    except UnicodeError, TypeError, ValueError, AssertionError:
        return codecs.getincrementaldecoder("utf-8")(errors="replace").decode(
            data, final=final
        )


def size_words(size: int) -> str:
    """``512 bytes``, ``48 KB``, ``1.2 MB``."""
    if size < 1024:
        return f"{size} bytes" if size != 1 else "1 byte"
    if size < 1024 * 1024:
        return f"{round(size / 1024)} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def describe_binary(kind: str, size: int, more: bool) -> str:
    """What the model reads for a binary body: ``image/jpeg, 48 KB``."""
    return f"{kind or 'application/octet-stream'}, {'more than ' if more else ''}{size_words(size)}"


def compact_json(value: Any) -> str:
    """``value`` as compact JSON, non-ASCII as it is."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


_JSON_SPACE_RE = re.compile(r'("(?:[^"\\]|\\.)*")|[ \t\r\n]+')


def strip_json_space(text: str) -> str:
    """JSON text without the whitespace between tokens (strings kept as they
    are): lossless, and it works on a document cut short."""
    return _JSON_SPACE_RE.sub(lambda match: match.group(1) or "", text)


def _loads(text: str) -> Any:
    """``text`` as JSON, or MISSING."""
    try:
        return json.loads(text)
    except ValueError, RecursionError:
        return MISSING


class _TextOfHtml(HTMLParser):
    """The text a person sees on a page: no tags, scripts, styles or head
    (but its title), a line per block."""

    _SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head"})
    _BLOCK = word_set("""
        address article aside blockquote br center dd details div dl dt fieldset
        figcaption figure footer form h1 h2 h3 h4 h5 h6 header hr li main nav ol
        p pre section summary table td th title tr ul
    """)

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping: list[str] = []
        self._in_title = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        elif tag in self._SKIP:
            self._skipping.append(tag)
        if tag in self._BLOCK:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        elif self._skipping and tag == self._skipping[-1]:
            self._skipping.pop()
        if tag in self._BLOCK:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title or not self._skipping:
            self.parts.append(data)


def html_text(html: str) -> str:
    """The text of an HTML page, one line per block, repeats dropped."""
    parser = _TextOfHtml()
    try:
        parser.feed(html)
        parser.close()
    except AssertionError, ValueError:  # html.parser on hostile markup
        pass
    lines: list[str] = []
    for line in "".join(parser.parts).split("\n"):
        words = " ".join(line.split())
        if words and (not lines or lines[-1] != words):
            lines.append(words)
    return "\n".join(lines)


# What an HTML error page gives the model: its first lines (title, heading,
# the server's one-line reason), not a debug page's stack and settings.
ERROR_PAGE_LINES = 4
ERROR_PAGE_CHARS = 300


def error_page_summary(text: str) -> str:
    """The first lines of an error page's text, at most `ERROR_PAGE_CHARS`."""
    lines = text.split("\n")[:ERROR_PAGE_LINES]
    summary = "\n".join(lines)
    if len(summary) > ERROR_PAGE_CHARS:
        summary = summary[: ERROR_PAGE_CHARS - 1].rstrip() + "…"
    return summary


def _looks_html(text: str) -> bool:
    head = text.lstrip()[:15].lower()
    return head.startswith(("<!doctype html", "<html"))


def _looks_binary(text: str) -> bool:
    """Text decoded from bytes that were no text: a NUL, many control
    characters, or mostly bytes that are no UTF-8 (a stray one is text)."""
    if "\x00" in text:
        return True
    sample = text[:4096]
    if len(sample) < 32:
        return False
    controls = len(_CONTROL_RE.findall(sample))
    invalid = sample.count("\ufffd")
    return controls > len(sample) / 10 or invalid > len(sample) * 3 / 10


class Picture:
    """An image answer's bytes, whole, for a model that reads images.

    Not a dataclass: Home Assistant's chat log turns a tool result into a
    dict with `dataclasses.asdict` for its events and traces, which would
    copy the bytes into JSON; `as_dict` says what it is instead, and so
    does `repr` (logs).
    """

    __slots__ = ("data", "media_type")

    def __init__(self, media_type: str, data: bytes) -> None:
        """An image of `media_type` (`image/jpeg`)."""
        self.media_type = media_type
        self.data = data

    def data_url(self) -> str:
        """``data:image/jpeg;base64,…``: the form chat requests carry."""
        return f"data:{self.media_type};base64,{base64.b64encode(self.data).decode()}"

    def as_dict(self) -> dict[str, Any]:
        """What events and traces show: the type and size, not the bytes."""
        return {"media_type": self.media_type, "size": len(self.data)}

    def __repr__(self) -> str:
        """The type and size."""
        return f"Picture({self.media_type}, {size_words(len(self.data))})"

    def __eq__(self, other: object) -> bool:
        """The same type and bytes."""
        return (
            isinstance(other, Picture)
            and other.media_type == self.media_type
            and other.data == self.data
        )

    def __hash__(self) -> int:
        """By type and bytes."""
        return hash((self.media_type, self.data))


@dataclass(frozen=True, slots=True)
class Body:
    """A response's body as read: what the model reads without a shape
    (``text``), the JSON value when it is JSON (``value``, else MISSING)."""

    kind: BodyKind
    text: str
    value: Any
    media_type: str
    # A JPEG or PNG read whole (only when its bytes were kept).
    picture: Picture | None = None


def _no_secret(text: str) -> str:
    return text


def read_body(
    data: bytes,
    content_type: str | None,
    charset: str | None,
    *,
    complete: bool,
    counted: int | None = None,
    length: int | None = None,
    hide: Callable[[str], str] = _no_secret,
    pictures: bool = False,
) -> Body:
    """Turn the bytes of a body into what the model reads.

    ``complete``: every byte was read (else the byte cap cut it); ``counted``:
    the bytes read when a binary body was only counted (``data`` holds its
    start); ``length``: the declared Content-Length; ``hide`` removes secrets
    from the text before it is parsed; ``pictures``: a JPEG or PNG read
    whole is kept as a :class:`Picture`.
    """
    kind = media_type(content_type)

    def binary(kind: str) -> Body:
        size = length if length is not None else (counted or len(data))
        more = length is None and not complete
        # Whole, and the bytes are what the type says (a server refuses
        # the request over an image it cannot decode).
        whole = (
            pictures
            and complete
            and kind in PICTURE_TYPES
            and len(data) == size
            and _sniffed(data) == kind
        )
        return Body(
            BodyKind.BINARY,
            describe_binary(kind, size, more),
            MISSING,
            kind,
            Picture(kind, data) if whole else None,
        )

    if is_binary_type(kind):
        return binary(kind)
    says_text = kind.startswith("text/") or "json" in kind or "xml" in kind
    if (kind in _UNTYPED or not says_text) and (sniffed := _sniffed(data)):
        return binary(sniffed)
    text = hide(decode(data, charset, final=complete))
    if not text.strip():
        return Body(BodyKind.EMPTY, "", MISSING, kind)
    if kind in _NDJSON_TYPES:
        lines = [_loads(line) for line in text.splitlines() if line.strip()]
        if lines and all(line is not MISSING for line in lines):
            return Body(BodyKind.JSON, compact_json(lines), lines, kind)
        return Body(BodyKind.TEXT, text, MISSING, kind)
    json_like = is_json_type(kind) or text.lstrip()[:1] in ("{", "[")
    if json_like and not kind.startswith("text/html"):
        value = _loads(text)
        if value is not MISSING:
            return Body(BodyKind.JSON, compact_json(value), value, kind)
        if is_json_type(kind) and not complete and text.lstrip()[:1] in "{[":
            # JSON cut at the byte cap: compacted as far as it goes.
            return Body(BodyKind.JSON, strip_json_space(text), MISSING, kind)
    if kind in _HTML_TYPES or (
        (kind in _UNTYPED or kind == "text/plain") and _looks_html(text)
    ):
        return Body(BodyKind.HTML, html_text(text), MISSING, kind)
    if (kind in _UNTYPED or not kind.startswith("text/")) and _looks_binary(text):
        return binary(kind or "application/octet-stream")
    return Body(BodyKind.TEXT, text, MISSING, kind)
