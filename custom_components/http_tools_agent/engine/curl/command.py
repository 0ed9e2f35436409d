"""What a curl command would send: the shell's words, then curl's options.

The words are read as bash reads them: single and double quotes, `\\`
escapes, line continuations and `$'…'` (bash's ANSI-C quoting, which
Chrome's "Copy as cURL (bash)" writes for a body with a quote or a non-ASCII
character; `shlex` knows no `$'…'`). A `|`, `;` or `&&` outside quotes ends
the command (`curl … | jq .`). The options are curl's own, short ones
combined as curl allows (`-sSL`, `-XPOST`). What would change the request
is read; what only changes curl's own behaviour (`-s`, `-L`, `--compressed`,
`-o file`) is left out and named. Nothing here reads a file: an option that
would (`-d @body.json`) is refused, naming it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
import re
from urllib.parse import quote, urlsplit

from ..words import word_set


class CurlProblem(StrEnum):
    """Why a text is no usable curl command (the form's error keys)."""

    NOT_CURL = "curl_not_a_command"
    QUOTING = "curl_quoting"
    NO_URL = "curl_no_url"
    TWO_URLS = "curl_two_urls"
    BAD_URL = "curl_bad_url"
    NO_VALUE = "curl_option_value"
    READS_FILE = "curl_reads_file"


class CurlError(ValueError):
    """The command cannot become a tool; `problem` says why, `detail` where
    (never a value of the command: it may be a key)."""

    def __init__(self, problem: CurlProblem, detail: str) -> None:
        """Keep the problem and its detail."""
        self.problem = problem
        self.detail = detail
        super().__init__(detail)


@dataclass(slots=True)
class CurlCommand:
    """The request a curl command makes, as curl would make it."""

    method: str
    url: str
    headers: list[tuple[str, str]] = field(default_factory=list)
    # The body as curl sends it (`-d`, `--json`), or the fields of `-F`.
    body: str | None = None
    json: bool = False
    form: list[tuple[str, str]] = field(default_factory=list)
    user: str | None = None
    digest: bool = False
    insecure: bool = False
    timeout: float | None = None
    # The options and words left out, as written (`--compressed`, `| jq .`).
    left_out: list[str] = field(default_factory=list)


_ANSI_C = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_HEX = "0123456789abcdefABCDEF"


def _ansi_c(text: str, start: int) -> tuple[str, int]:
    """The text of `$'…'` opening at `start`, and the index after it."""
    out = bytearray()
    i = start + 2
    while i < len(text):
        char = text[i]
        if char == "'":
            return out.decode("utf-8", errors="replace"), i + 1
        if char != "\\" or i + 1 == len(text):
            out += char.encode()
            i += 1
            continue
        code = text[i + 1]
        i += 2
        if code in _ANSI_C:
            out += _ANSI_C[code].encode()
        elif code in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[code]
            digits = ""
            while len(digits) < width and i < len(text) and text[i] in _HEX:
                digits += text[i]
                i += 1
            if not digits:
                out += f"\\{code}".encode()
            elif code == "x":
                out.append(int(digits, 16))
            else:
                out += chr(int(digits, 16)).encode(errors="replace")
        elif code in "01234567":
            digits = code
            while len(digits) < 3 and i < len(text) and text[i] in "01234567":
                digits += text[i]
                i += 1
            out.append(int(digits, 8) & 0xFF)
        else:
            out += f"\\{code}".encode()
    raise CurlError(CurlProblem.QUOTING, "a $'…' quote is not closed")


def shell_words(text: str) -> tuple[list[str], str]:
    """The words of the first command in `text`, and what follows it."""
    words: list[str] = []
    word: list[str] = []
    in_word = False
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            if text.startswith(("\\\r\n", "\\\n"), i):
                i += 3 if text[i + 1] == "\r" else 2
            elif i + 1 < len(text):
                word.append(text[i + 1])
                in_word = True
                i += 2
            else:
                i += 1
            continue
        if char in " \t\r\n":
            if in_word:
                words.append("".join(word))
                word, in_word = [], False
            i += 1
            continue
        if char == "'":
            end = text.find("'", i + 1)
            if end < 0:
                raise CurlError(CurlProblem.QUOTING, "a ' quote is not closed")
            word.append(text[i + 1 : end])
            in_word, i = True, end + 1
            continue
        if text.startswith("$'", i):
            part, i = _ansi_c(text, i)
            word.append(part)
            in_word = True
            continue
        if char == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                if text[i] == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
                    if text[i + 1] != "\n":
                        word.append(text[i + 1])
                    i += 2
                    continue
                word.append(text[i])
                i += 1
            if i >= len(text):
                raise CurlError(CurlProblem.QUOTING, 'a " quote is not closed')
            in_word, i = True, i + 1
            continue
        if char in "|;" or text.startswith("&&", i) or (char in "<>" and not in_word):
            break
        if char == "#" and not in_word:
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        word.append(char)
        in_word = True
        i += 1
    if in_word:
        words.append("".join(word))
    return words, text[i:].strip()


# Options that take a value, by their long name; short ones map to these.
_SHORT = {
    "X": "request",
    "H": "header",
    "d": "data",
    "F": "form",
    "u": "user",
    "b": "cookie",
    "A": "user-agent",
    "e": "referer",
    "o": "output",
    "x": "proxy",
    "m": "max-time",
    "w": "write-out",
    "c": "cookie-jar",
    "T": "upload-file",
    "E": "cert",
    "r": "range",
    "K": "config",
    "U": "proxy-user",
    "Y": "speed-limit",
    "y": "speed-time",
    "z": "time-cond",
    "C": "continue-at",
    "D": "dump-header",
    "t": "telnet-option",
    "P": "ftp-port",
    "Q": "quote",
}
# Short flags that change the request; any other (-s, -L, -v...) only
# changes what curl itself does: left out and named.
_SHORT_FLAGS = {"G": "get", "I": "head", "k": "insecure"}
_VALUED = set(_SHORT.values()) | word_set("""
    data-raw data-binary data-ascii data-urlencode json form-string url
    url-query oauth2-bearer connect-timeout retry retry-delay retry-max-time
    max-redirs key cacert capath resolve connect-to limit-rate interface
    dns-servers unix-socket abstract-unix-socket aws-sigv4 proxy-header
    request-target trace trace-ascii stderr expect100-timeout keepalive-time
    local-port ciphers pinnedpubkey
""")
_DATA = ("data", "data-ascii", "data-binary", "data-raw", "data-urlencode", "json")


@dataclass(slots=True)
class _Reading:
    """What the options said, before the method and URL are settled."""

    method: str | None = None
    urls: list[str] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    data: list[str] = field(default_factory=list)
    json: list[str] = field(default_factory=list)
    get: bool = False
    head: bool = False
    out: CurlCommand = field(default_factory=lambda: CurlCommand("GET", ""))


def _urlencoded(value: str, option: str) -> str:
    """`--data-urlencode`'s forms: `content`, `=content`, `name=content`."""
    equals_at, at = value.find("="), value.find("@")
    if at >= 0 and (equals_at < 0 or at < equals_at):
        raise CurlError(
            CurlProblem.READS_FILE, f"'{option}' reads the file '{value[at + 1 :]}'"
        )
    name, equals, content = value.partition("=")
    if not equals:
        return quote(value, safe="")
    return f"{name}={quote(content, safe='')}" if name else quote(content, safe="")


def _take(reading: _Reading, option: str, name: str, value: str) -> None:
    """Apply one option that has a value."""
    out = reading.out
    if name == "request":
        reading.method = value.upper()
    elif name == "header":
        header, colon, text = value.partition(":")
        if not colon:
            # `Name;` sends an empty header; anything else is no header.
            if value.endswith(";"):
                out.headers.append((value[:-1].strip(), ""))
            else:
                out.left_out.append(f"{option} (no ':')")
        elif text.strip():
            out.headers.append((header.strip(), text.strip()))
        # `Name:` removes a header curl would add: nothing to send.
    elif name in _DATA:
        if name in ("data", "data-ascii", "data-binary", "json") and value.startswith(
            "@"
        ):
            raise CurlError(
                CurlProblem.READS_FILE, f"'{option}' reads the file '{value[1:]}'"
            )
        if name == "json":
            reading.json.append(value)
        else:
            text = _urlencoded(value, option) if name == "data-urlencode" else value
            reading.data.append(text)
    elif name in ("form", "form-string"):
        key, _, text = value.partition("=")
        if name == "form" and text[:1] in ("@", "<"):
            raise CurlError(
                CurlProblem.READS_FILE, f"'{option}' reads the file '{text[1:]}'"
            )
        out.form.append((key, text))
    elif name == "user":
        out.user = value
    elif name == "cookie":
        if "=" in value:
            out.headers.append(("Cookie", value))
        else:
            out.left_out.append(f"{option} {value} (a cookie file)")
    elif name == "url":
        reading.urls.append(value)
    elif name == "url-query":
        reading.queries.append(
            value[1:] if value.startswith("+") else _urlencoded(value, option)
        )
    elif name == "user-agent":
        out.headers.append(("User-Agent", value))
    elif name == "referer":
        out.headers.append(("Referer", value))
    elif name == "oauth2-bearer":
        out.headers.append(("Authorization", f"Bearer {value}"))
    elif name == "max-time":
        try:
            out.timeout = float(value)
        except ValueError:
            out.left_out.append(f"{option} {value}")
    elif name in ("upload-file", "config"):
        raise CurlError(CurlProblem.READS_FILE, f"'{option}' reads the file '{value}'")
    else:
        out.left_out.append(f"{option} {value}" if name in _QUIET_VALUES else option)


# Options whose value may be named with them (none of them holds a secret).
_QUIET_VALUES = {"output", "max-redirs", "retry", "connect-timeout", "write-out"}


def _flag(reading: _Reading, option: str, name: str) -> None:
    """Apply one option that has no value."""
    if name == "get":
        reading.get = True
    elif name == "head":
        reading.head = True
    elif name == "insecure":
        reading.out.insecure = True
    elif name == "digest":
        reading.out.digest = True
    elif name != "basic":
        reading.out.left_out.append(option)


def _options(words: list[str], reading: _Reading) -> None:
    """Read every option and URL of the words after `curl`."""
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if word.startswith("--") and len(word) > 2:
            name = word[2:]
            if name in _VALUED:
                if i >= len(words):
                    raise CurlError(CurlProblem.NO_VALUE, f"'{word}' has no value")
                _take(reading, word, name, words[i])
                i += 1
            else:
                _flag(reading, word, name)
        elif word.startswith("-") and len(word) > 1:
            letters = word[1:]
            for at, letter in enumerate(letters):
                if letter in _SHORT:
                    value = letters[at + 1 :]
                    if not value:
                        if i >= len(words):
                            raise CurlError(
                                CurlProblem.NO_VALUE, f"'-{letter}' has no value"
                            )
                        value = words[i]
                        i += 1
                    _take(reading, f"-{letter}", _SHORT[letter], value)
                    break
                if letter in _SHORT_FLAGS:
                    _flag(reading, f"-{letter}", _SHORT_FLAGS[letter])
                else:
                    reading.out.left_out.append(f"-{letter}")
        else:
            reading.urls.append(word)


# What no host has (curl would read braces and brackets as its URL globs).
_BAD_HOST_RE = re.compile(r"[\s{}<>\"'\\|^`%]")


def _absolute(url: str) -> str:
    """curl's reading of a URL without a scheme: http."""
    if "://" not in url.split("?", 1)[0]:
        url = f"http://{url}"
    try:
        parts = urlsplit(url)
        host, _ = parts.hostname, parts.port  # each raises on a bad one
    except ValueError:
        host = None
    if host is None or _BAD_HOST_RE.search(parts.netloc):
        raise CurlError(CurlProblem.BAD_URL, "the URL's host or port is not valid")
    if parts.scheme.lower() not in ("http", "https"):
        raise CurlError(
            CurlProblem.BAD_URL,
            f"the URL must be http or https with a host, not '{parts.scheme}://'",
        )
    return url


def read_command(text: str) -> CurlCommand:
    """The request `text` (one curl command, as pasted) would make."""
    words, rest = shell_words(text.strip())
    if words[:1] == ["$"]:  # a prompt copied with the command
        words = words[1:]
    if not words or words[0].rsplit("/", 1)[-1] not in ("curl", "curl.exe"):
        raise CurlError(CurlProblem.NOT_CURL, "the text must start with 'curl'")
    reading = _Reading()
    _options(words[1:], reading)
    out = reading.out
    if rest:  # named, not shown: a second command may hold a key
        out.left_out.append(f"what follows '{rest[:2].strip()}'")
    if not reading.urls:
        raise CurlError(CurlProblem.NO_URL, "no URL in the command")
    if len(reading.urls) > 1:
        raise CurlError(
            CurlProblem.TWO_URLS,
            f"{len(reading.urls)} URLs: a tool makes one request",
        )
    url = _absolute(reading.urls[0])
    body_parts = ["&".join(reading.data)] if reading.data else []
    if reading.json:
        body_parts.append("".join(reading.json))
        out.json = True
        names = {name.lower() for name, _ in out.headers}
        for header in ("Content-Type", "Accept"):
            if header.lower() not in names:
                out.headers.append((header, "application/json"))
    body = "&".join(body_parts) if body_parts else None
    queries = list(reading.queries)
    if reading.get and body is not None:
        queries.append(body)
        body = None
    if queries:
        base, hash_, fragment = url.partition("#")
        joiner = "&" if "?" in base and not base.endswith(("?", "&")) else ""
        base += joiner if "?" in base else "?"
        url = base + "&".join(queries) + hash_ + fragment
    out.url = url
    out.body = body
    sends = body is not None or bool(out.form)
    out.method = reading.method or (
        "HEAD" if reading.head else "POST" if sends and not reading.get else "GET"
    )
    return out
