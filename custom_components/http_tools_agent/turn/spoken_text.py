"""A reply's words as they are spoken: no markdown, emoji or bare URLs.

Home Assistant's Assist pipeline speaks the very text the chat log gets:
the streamed deltas go to a streaming text-to-speech as they arrive, and
the response's plain speech (the chat log's last answer) to the others.
The chat dialog shows the same text (the deltas live, then the plain
speech). There is no second channel, so the agent writes its words once,
speakable:

- emphasis (`**bold**`, `*italic*`, `__x__`, `~~x~~`) -> its words;
- headings and list bullets lose their marker; a heading or item that
  ends without punctuation gets a full stop (a voice pauses there);
  numbered items keep their number; a quote loses its `>`;
- a link -> its text, an image -> its description, a bare URL -> its host
  ("example.com"); inline code -> its text; a fenced code block and a
  horizontal rule are left out (a reply that is only code says its lines:
  better than no answer); a table row -> its cells, comma-separated;
- emoji (and their joiners and variation selectors) are left out.

`SpokenText` does it on a stream: it holds text only while a construct may
still be open (a sentence end ends any), so a plain answer is passed on
word by word. `spoken(text)` cleans a whole text. Regular expressions, not a
library: Home Assistant ships no markdown or emoji package, a markdown
parser wants the whole text (the answer streams), and the emoji are a few
Unicode blocks.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

# Emoji: the pictographic blocks, the symbols and dingbats that render as
# emoji, the skin tones, flags, keycaps, joiners and variation selectors.
# Text symbols a voice reads well stay (°, ©, ™, arrows).
_EMOJI = re.compile(
    "["
    "\U0001f000-\U0001faff"
    "\U0001fc00-\U0001fffd"
    "\u2600-\u27bf"
    "\u2b00-\u2bff"
    "\u231a\u231b\u2328\u23cf\u23e9-\u23f3\u23f8-\u23fa"
    "\u25aa\u25ab\u25b6\u25c0\u25fb-\u25fe"
    "\u2934\u2935\u3030\u303d\u3297\u3299\u2139"
    "\u200d\ufe0e\ufe0f\u20e3"
    "\U000e0020-\U000e007f"
    "]+"
)
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_RULE = re.compile(r"^\s*([-*_])(?:\s*\1){2,}\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_QUOTE = re.compile(r"^\s*(?:>\s?)+")
_BULLET = re.compile(r"^\s*[-*+•]\s+(?:\[[ xX]\]\s+)?")
_NUMBERED = re.compile(r"^\s*\d+[.)]\s+")
_ENUMERATOR_ONLY = re.compile(r"^\s*(?:\d+[.)]|[-*+•>#]+)\s*$")
_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")

_IMAGE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]+)\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_AUTOLINK = re.compile(r"<((?:https?://|www\.)[^>\s]+)>")
_URL = re.compile(r"(?:https?://|www\.)[^\s<>()\[\]]+")
_URL_TAIL = re.compile(r"[.,;:!?'\"]+$")
_CODE = re.compile(r"(`+)(.+?)\1")
_STRONG = re.compile(r"(\*\*\*|___|\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1")
_STAR = re.compile(r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])")
_UNDERSCORE = re.compile(r"(?<![\w_])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])")
_STRAY = re.compile(r"\*{2,}|(?<!\w)_{2,}|_{2,}(?!\w)|~~")
_TAG = re.compile(r"</?(?:b|i|u|em|strong|code|p|span|small|mark)\b[^>]*>|<br\s*/?>")
_SPACES = re.compile(r"[ \t]{2,}")
# An emoji before a punctuation mark goes with the space before it.
_EMOJI_BEFORE_MARK = re.compile(r"[ \t]*(?:" + _EMOJI.pattern + r")(?=[.,!?;:])")

# Where a stream's text may be cut: after a sentence end and its spaces
# (the sentence checks read the space as its end), or a line end.
_CUT = re.compile(r"[.!?…]+[ \t]+|\n")
# What may open a construct that later text closes (or an emoji's joiner).
_MARKUP = re.compile(r"[*_`\[\]()<>~|!]|://|www\.|" + _EMOJI.pattern)
_ITEM_END = re.compile("[\\w)\"'\u201d\u2019]$")


def _host(url: str) -> str:
    """What is said of a URL: its host, without `www.`."""
    tail = _URL_TAIL.search(url)
    end = tail.group() if tail else ""
    url = url[: len(url) - len(end)] if end else url
    parsed = urlsplit(url if "://" in url else f"http://{url}")
    host = parsed.hostname or ""
    return host.removeprefix("www.") + end


def _inline(text: str) -> str:
    """The words of one line's piece, without inline markup."""
    out: list[str] = []
    last = 0
    # Code spans keep their text as written (`__init__` stays).
    for match in _CODE.finditer(text):
        out.append(_words(text[last : match.start()]))
        out.append(match.group(2).strip())
        last = match.end()
    out.append(_words(text[last:]))
    return "".join(out)


def _words(text: str) -> str:
    text = _IMAGE.sub(r"\1", text)
    text = _LINK.sub(r"\1", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _URL.sub(lambda m: _host(m.group()), text)
    text = _TAG.sub(" ", text)
    for _ in range(2):  # nested: ***a** b*
        text = _STRONG.sub(r"\2", text)
    text = _STAR.sub(r"\1", text)
    text = _UNDERSCORE.sub(r"\1", text)
    text = _STRAY.sub("", text)
    text = _EMOJI_BEFORE_MARK.sub("", text)
    text = _EMOJI.sub("", text)
    return _SPACES.sub(" ", text)


def _balanced(piece: str) -> bool:
    """Whether no link, code span or emphasis is left open in `piece`."""
    return (
        piece.count("[") <= piece.count("]")
        and piece.count("](") <= piece.count(")")
        and piece.count("`") % 2 == 0
    )


class SpokenText:
    """Passes a reply's text on without markup, as it streams."""

    __slots__ = (
        "_code", "_code_lines", "_drop", "_finishing", "_item", "_line",
        "_pending", "_said", "_said_line",
    )  # fmt: skip

    def __init__(self) -> None:
        """A cleaner for one reply."""
        self._pending = ""  # text not passed on yet
        self._line = ""  # the current line's raw text passed on so far
        self._said_line = ""  # what was said of it
        self._item = False  # the line is a heading or a list item
        self._drop = False  # the line is left out (a fence, a rule)
        self._code = False  # inside a fenced code block
        self._finishing = False  # the reply ended: its last line with it
        self._code_lines: list[str] = []  # what the code blocks held
        self._said = False  # a word was said

    @property
    def held(self) -> int:
        """Characters taken and not passed on yet."""
        return len(self._pending)

    def feed(self, text: str) -> str:
        """Take text; return what may be said of it now."""
        self._pending += text
        out: list[str] = []
        while piece := self._next_piece():
            out.append(self._say(piece))
        return "".join(out)

    def finish(self) -> str:
        """The reply ended: what is left, cleaned."""
        piece, self._pending = self._pending, ""
        self._finishing = True
        said = self._say(piece) if piece else ""
        said += self._end_line(newline=False)
        if not self._said and self._code_lines:
            return "\n".join(self._code_lines)
        return said

    def _next_piece(self) -> str:
        """The longest start of the pending text that can be cleaned now."""
        pending = self._pending
        cut = 0
        for match in _CUT.finditer(pending):
            end = match.end()
            candidate = pending[:end]
            line = self._line + candidate
            if match.group() != "\n" and (
                self._line_open(line)
                or _ENUMERATOR_ONLY.match(line)
                or not _balanced(candidate)
            ):
                continue
            cut = end
            if match.group() == "\n":
                break  # a line at a time: its start decides its form
        if not cut:
            cut = self._plain_words(pending)
        piece, self._pending = pending[:cut], pending[cut:]
        return piece

    def _line_open(self, line: str) -> bool:
        """Lines read whole: a fence, a table row, a rule, code."""
        stripped = line.lstrip()
        return self._code or stripped.startswith(("```", "~~~", "|", "---", "***"))

    def _plain_words(self, pending: str) -> int:
        """Words of a line whose form is known, with nothing that may open
        markup in them: passed on at once, the last word held (it may
        begin a URL or an emphasis)."""
        line = self._line + pending
        if self._line_open(line) or "\n" in pending:
            return 0
        start = line.lstrip()
        if not self._line.strip() and (
            " " not in start or _ENUMERATOR_ONLY.match(start.split(" ")[0])
        ):
            return 0  # the line's start is not read yet
        match = _MARKUP.search(pending)
        safe = pending[: match.start()] if match else pending
        # Cut before the space: what follows may be left out (an emoji), and
        # a line's end says nothing after its last word.
        space = max(safe.rfind(" "), safe.rfind("\t"))
        return space if space > 0 else 0

    def _say(self, piece: str) -> str:
        """Clean one piece (a line's start, middle or end)."""
        ends = piece.endswith("\n")
        body = piece[:-1] if ends else piece
        said = ""
        if ends:
            body = body.rstrip(" \t")
        if not self._line:
            said = self._line_start(body)
        elif not (self._drop or self._code):
            said = _inline(body)
        if ends or self._finishing:
            said = said.rstrip(" \t")
        if self._code and not _FENCE.match(body) and body.strip():
            self._code_lines.append(body.strip())
        self._line += body or ("\n" if ends else "")
        self._said_line += said
        self._said = self._said or bool(said.strip())
        if ends:
            return said + self._end_line(newline=True)
        return said

    def _line_start(self, body: str) -> str:
        """A line's first piece: its form, then its words."""
        if _FENCE.match(body):
            self._code = not self._code
            self._drop = True
            return ""
        if self._code:
            return ""
        if _RULE.match(body) or (_TABLE_SEPARATOR.match(body) and "-" in body):
            self._drop = True
            return ""
        if body.lstrip().startswith("|"):
            cells = [cell.strip() for cell in body.strip().strip("|").split("|")]
            return ", ".join(_inline(cell) for cell in cells if cell)
        body = _QUOTE.sub("", body, count=1)
        for marker, keep in ((_HEADING, False), (_BULLET, False), (_NUMBERED, True)):
            if match := marker.match(body):
                self._item = True
                kept = match.group().lstrip() if keep else ""
                return kept + _inline(body[match.end() :])
        return _inline(body)

    def _end_line(self, *, newline: bool) -> str:
        """The line ended: a full stop after an item, the line break kept
        unless the whole line was left out."""
        said, raw = self._said_line, self._line
        item, dropped = self._item, self._drop or (self._code and not said)
        self._line = self._said_line = ""
        self._item = self._drop = False
        stop = "." if item and _ITEM_END.search(said.rstrip()) else ""
        if dropped or (raw.strip() and not said.strip()):
            return ""  # nothing of the line is said: no empty line either
        return stop + ("\n" if newline else "")


def spoken(text: str) -> str:
    """A whole text as it is spoken."""
    cleaner = SpokenText()
    return (cleaner.feed(text) + cleaner.finish()).strip()
