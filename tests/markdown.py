"""Markdown as GitHub reads it, enough to test the documentation: fenced
code blocks, links and images, and the anchors of headings.

No Home Assistant here: `tests/test_docs.py` holds the examples against the
integration's own validators.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
import re

from .integration_files import ROOT

README = ROOT / "README.md"
CONTRIBUTING = ROOT / "CONTRIBUTING.md"
DOCS = ROOT / "docs"


def user_docs() -> list[Path]:
    """What a user reads: README.md and the pages of docs/."""
    return [README, *sorted(DOCS.glob("*.md"))]


def reference_pages() -> list[Path]:
    """The reference pages (docs/)."""
    return sorted(DOCS.glob("*.md"))


def all_docs() -> list[Path]:
    """Every page whose links must resolve: the user's and CONTRIBUTING.md."""
    return [*user_docs(), CONTRIBUTING]


def where(path: Path, line: int) -> str:
    """`docs/tools.md:12`: a place in a page, as a test names it."""
    return f"{path.relative_to(ROOT)}:{line}"


@dataclass(frozen=True, slots=True)
class Block:
    """A fenced code block."""

    path: Path
    line: int  # of the opening fence, 1-based
    info: str  # the language, lower-cased ("" when none)
    text: str
    # What the line before the fence says, if it is `<!-- docs-test: … -->`.
    note: str = ""

    @property
    def where(self) -> str:
        """Where the block starts."""
        return where(self.path, self.line)


_FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_NOTE = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<note>.*?)\s*-->\s*$")


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a page, in order."""
    found: list[Block] = []
    lines = _lines(path)
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent = len(opening["indent"])
        fence = opening["fence"]
        start = index
        body: list[str] = []
        index += 1
        while index < len(lines):
            line = lines[index]
            stripped = line.strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(
                fence[0]
            ):
                break
            body.append(line[indent:] if line[:indent].strip() == "" else line)
            index += 1
        previous = lines[start - 1] if start else ""
        note = _NOTE.match(previous)
        found.append(
            Block(
                path,
                start + 1,
                opening["info"].strip().split(" ")[0].lower(),
                "\n".join(body) + "\n",
                note["note"] if note else "",
            )
        )
        index += 1
    return found


def prose(path: Path) -> Iterator[tuple[int, str]]:
    """Each line outside code blocks (1-based number, text), inline code
    spans blanked: links and headings are looked for there."""
    inside: str | None = None
    for number, line in enumerate(_lines(path), start=1):
        fence = _FENCE.match(line)
        if inside is None and fence is not None:
            inside = fence["fence"]
            continue
        if inside is not None:
            stripped = line.strip()
            if stripped.startswith(inside) and not stripped.strip(inside[0]):
                inside = None
            continue
        yield number, re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m[0]), line)


_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(?P<text>.+?)\s*#*\s*$")
# Characters GitHub drops from a heading's anchor: everything but letters,
# digits, `_`, `-` and spaces (github-slugger).
_NOT_IN_SLUG = re.compile(r"[^\w\- ]", re.UNICODE)
_HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def heading_text(markdown: str) -> str:
    """A heading as GitHub renders it to text: links by their text, no
    code or emphasis marks."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", markdown)
    return re.sub(r"<[^>]+>", "", text)


def slug(text: str) -> str:
    """GitHub's anchor for a heading's text."""
    return _NOT_IN_SLUG.sub("", heading_text(text).strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor a link may name in a page: each heading's slug (a
    repeated one gets `-1`, `-2`, … as on GitHub) and `<a id>`s."""
    found: set[str] = set()
    seen: Counter[str] = Counter()
    raw = _lines(path)
    for number, line in prose(path):
        # Headings keep their code spans: GitHub slugs their text.
        if (heading := _HEADING.match(raw[number - 1])) is not None:
            base = slug(heading["text"])
            found.add(base if not seen[base] else f"{base}-{seen[base]}")
            seen[base] += 1
        found.update(_HTML_ANCHOR.findall(line))
    return found


def headings(path: Path) -> list[str]:
    """Every heading's text, in order."""
    raw = _lines(path)
    return [
        heading_text(h["text"])
        for number, _ in prose(path)
        if (h := _HEADING.match(raw[number - 1])) is not None
    ]


@dataclass(frozen=True, slots=True)
class Link:
    """A link or an image in a page."""

    path: Path
    line: int
    target: str

    @property
    def where(self) -> str:
        """Where the link stands."""
        return where(self.path, self.line)

    @property
    def external(self) -> bool:
        """A link to another site (or a mail address): not checked here."""
        return bool(re.match(r"^[a-z][a-z0-9+.-]*:", self.target, re.I))


_INLINE = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"
)
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
_HTML = re.compile(r"<(?:a|img)\s[^>]*?(?:href|src)=\"([^\"]+)\"", re.I)


def links(path: Path) -> list[Link]:
    """Every link and image of a page outside code."""
    found: list[Link] = []
    for number, line in prose(path):
        for pattern in (_INLINE, _REFERENCE, _HTML):
            found.extend(Link(path, number, m) for m in pattern.findall(line))
    return found
