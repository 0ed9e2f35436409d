"""A curl command's request as a draft tool, for the tool editor.

- **Secrets out.** An `Authorization` header (its credentials after the
  scheme; `Basic` becomes `auth`), `-u user:password` (the password; a key
  given as the user with no password, Stripe's way, the user), a cookie, and
  every header, query parameter or body member whose name says key, token,
  secret, password, session or cookie (`X-Api-Key`, `appid`, `X-CSRFToken`)
  become `{secret:<tool>_<what>}`; their values go to the entry's secrets,
  never into the tool. A value that is a stand-in of the docs (`$TOKEN`,
  `<api key>`, `{API key}`, `YOUR_KEY`) is named, so the user sets the real
  one.
- **Arguments proposed.** Values that look like what a user would change
  become placeholders with a parameter each (typed from the value, which is
  kept as its example): the query's values (not fixed settings such as
  `format`, `units` or a comma list), an id in the path (digits, a UUID, a
  Home Assistant entity id), the members of a JSON body that are strings or
  numbers (not booleans, `null` or lists), a form's fields, a text body. A
  stand-in (`{city}`, `<entity_id>`, `:id`) is an argument without example;
  a `user` or `username` stays as written (who logs in is no argument).
- **Browser noise out.** From a browser's "Copy as cURL" (it sends
  `Sec-Fetch-*`), the headers only a browser sends (`User-Agent`,
  `Accept-Language`, `Sec-*`, `Referer`...); a `Content-Type` the body
  format adds itself. Everything left out is named in `notes`.

Called with its examples, the tool sends the request curl sends (the JSON
compacted, a `-F` multipart form as a urlencoded one, said in `notes`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
import json
import re
from typing import Any
from urllib.parse import parse_qsl, unquote, unquote_plus, urlsplit, urlunsplit

from ..arguments import json_type
from ..fields import (
    DEFAULT_PARAMETERS,
    HEADER_CONTROL_RE,
    MAX_TIMEOUT,
    TOKEN_RE,
    unique_name,
)
from ..templates import PLACEHOLDER_NAME_RE, literal
from ..words import word_set
from .command import CurlCommand

# More arguments than this make a tool no model calls well; the rest stay fixed.
MAX_ARGUMENTS = 10
_SECRET_PARTS = word_set("""
    token key apikey appid appkey secret password passwd pwd auth authorization
    signature session sessionid sid cookie
""")
# Query keys whose values are settings of the request, not what a user asks.
_SETTINGS = word_set("""
    format fmt units unit lang language locale output pretty v version
    api-version api_version fields include expand sort order timezone tz
""")
# Headers a browser adds to its copy (besides `Sec-*`): the draft leaves
# them out.
BROWSER_HEADERS = word_set("""
    user-agent accept-language accept-encoding cache-control pragma priority dnt
    upgrade-insecure-requests referer te connection
""")
# Headers the request itself sets: never copied.
_TRANSPORT_HEADERS = frozenset({"content-length", "host", "connection"})
_STAND_IN_RE = re.compile(
    r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|<[^<>]+>|\{[^{}]+\}|\[[^\[\]]+\]"
    r"|(?i:your[-_ ].*|.*[-_]here|x{3,}|\*{3,}|\.{3}|…)"
)
_WHOLE_STAND_IN_RE = re.compile(r"\{([^{}]+)\}|<([^<>]+)>|:([A-Za-z_][A-Za-z0-9_]*)")
_ENTITY_RE = re.compile(r"[a-z_]+\.[a-z0-9_]+")
_FILE_EXTENSIONS = frozenset({"json", "xml", "php", "html", "htm", "txt", "csv", "cgi"})
_ID_RE = re.compile(
    r"\d+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|(?=[0-9a-f]*\d)[0-9a-f]{16,}"
)
_VERSION_RE = re.compile(r"v?\d+(\.\d+)*")
_TELEGRAM_RE = re.compile(r"bot(\d{5,}:[A-Za-z0-9_-]{20,}|<[^>]+>|\{[^}]+\}|\$\w+)")
_FORM_RE = re.compile(r"[A-Za-z0-9_.\[\]-]+=[^&]*(&[A-Za-z0-9_.\[\]-]+=[^&]*)*")


@dataclass(slots=True)
class CurlDraft:
    """A tool (the file format) and the secrets it needs.

    `secrets` are the new ones (name -> value) to save with the tool;
    `stand_ins` the secrets whose value the command only stood in for;
    `notes` what was left out or sent another way.
    """

    definition: dict[str, Any]
    secrets: dict[str, str] = field(default_factory=dict)
    stand_ins: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def examples(self) -> dict[str, Any]:
        """The arguments that make the tool send the command's request."""
        properties = self.definition.get("parameters", {}).get("properties", {})
        return {
            name: schema["examples"][0]
            for name, schema in properties.items()
            if schema.get("examples")
        }


def _name_of(text: str, fallback: str) -> str:
    """`text` as a placeholder, tool or secret name (letters, digits, `_`)."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_")[:64].strip("_")
    return name or fallback


def _parts(key: str) -> list[str]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", key)
    return [p for p in re.split(r"[^a-z0-9]+", spaced.lower()) if p]


def names_a_secret(key: str) -> bool:
    """Whether a header, query or body member named `key` holds a secret."""
    parts = _parts(key)
    return any(
        part in _SECRET_PARTS or part.endswith(("token", "secret", "password"))
        for part in (*parts, "".join(parts))
    )


def _stand_in(value: str) -> bool:
    return bool(_STAND_IN_RE.fullmatch(value.strip()))


def _typed(text: str) -> Any:
    """A value of the query or a form as the JSON type it reads as, when
    nothing is lost (`01234` stays text)."""
    if re.fullmatch(r"-?(0|[1-9]\d{0,15})", text):
        return int(text)
    if re.fullmatch(r"-?(0|[1-9]\d*)\.\d*[1-9]", text):
        return float(text)
    return text


class _Drafter:
    """Builds one draft: the names it gave, the secrets, the notes."""

    def __init__(self, tool: str, secrets: Mapping[str, str]) -> None:
        self.tool = tool
        self.existing = dict(secrets)
        self.secrets: dict[str, str] = {}
        self.stand_ins: list[str] = []
        self.properties: dict[str, dict[str, Any]] = {}
        self.notes: list[str] = []
        self.fixed: list[str] = []

    def secret(self, what: str, value: str) -> str:
        """`{secret:…}` for `value`: an existing secret with that value, or a
        new one named after the tool."""
        for name, known in (*self.existing.items(), *self.secrets.items()):
            if known == value and not _stand_in(value):
                return f"{{secret:{name}}}"
        base = _name_of(f"{self.tool}_{_name_of(what, 'key').lower()}", "key")[:60]
        name, count = base, 1
        while name in self.existing or name in self.secrets:
            count += 1
            name = f"{base}_{count}"
        self.secrets[name] = value
        if not value or _stand_in(value):
            self.stand_ins.append(name)
        return f"{{secret:{name}}}"

    def argument(self, key: str, example: Any = None, kind: str | None = None) -> str:
        """`{name}` for a new parameter named after `key`."""
        base = _name_of(key, "value")
        name, count = base, 1
        while name in self.properties:
            count += 1
            name = f"{base}_{count}"
        schema: dict[str, Any] = {
            "type": kind or ("string" if example is None else json_type(example))
        }
        if example is not None:
            schema["examples"] = [example]
        self.properties[name] = schema
        return f"{{{name}}}"

    def full(self) -> bool:
        return len(self.properties) >= MAX_ARGUMENTS

    def value(self, key: str, value: Any, *, typed_text: bool = False) -> Any:
        """One value of the query, a form or a JSON body: a secret, an
        argument, or fixed (escaped)."""
        if isinstance(value, str) and names_a_secret(key) and value:
            return self.secret(key, value)
        if _parts(key) in (["user"], ["username"], ["login"]):
            return literal(value) if isinstance(value, str) else value
        whole = _WHOLE_STAND_IN_RE.fullmatch(value) if isinstance(value, str) else None
        if whole and not self.full():
            stand = next(g for g in whole.groups() if g)
            return self.argument(stand if PLACEHOLDER_NAME_RE.fullmatch(stand) else key)
        if isinstance(value, bool) or value is None or value == "":
            return literal(value) if isinstance(value, str) else value
        if isinstance(value, (int, float, str)) and not self.full():
            example = _typed(value) if typed_text and isinstance(value, str) else value
            return self.argument(key, example)
        if isinstance(value, (int, float, str)):
            self.fixed.append(key)
        return literal(value) if isinstance(value, str) else value

    def json_node(self, key: str, node: Any) -> Any:
        """A JSON body's member: objects walked, lists kept as written."""
        if isinstance(node, dict):
            return {k: self.json_node(str(k), v) for k, v in node.items()}
        if isinstance(node, list):
            return _escaped_json(node)
        return self.value(key, node)


def _escaped_json(node: Any) -> Any:
    if isinstance(node, str):
        return literal(node)
    if isinstance(node, list):
        return [_escaped_json(item) for item in node]
    if isinstance(node, dict):
        return {k: _escaped_json(v) for k, v in node.items()}
    return node


def _in_url(text: str) -> str:
    """Fixed text of the URL: a brace percent-encoded, as the request would
    send it (doubled, `{ ` would open a Home Assistant template)."""
    return text.replace("{", "%7B").replace("}", "%7D")


def _entity_id(segment: str) -> bool:
    """A Home Assistant entity id (`sensor.kitchen`), not a file name."""
    return bool(_ENTITY_RE.fullmatch(segment)) and (
        segment.rsplit(".", 1)[1] not in _FILE_EXTENSIONS
    )


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def _path(drafter: _Drafter, path: str) -> str:
    """The path with its ids and stand-ins as arguments, a bot token secret."""
    segments = path.split("/")
    out: list[str] = []
    for index, raw in enumerate(segments):
        text = unquote(raw)
        previous = segments[index - 1] if index else ""
        if stand := _WHOLE_STAND_IN_RE.fullmatch(text):
            name = next(g for g in stand.groups() if g)
            out.append(
                drafter.argument(name if PLACEHOLDER_NAME_RE.fullmatch(name) else "id")
            )
        elif telegram := _TELEGRAM_RE.fullmatch(text):
            out.append("bot" + drafter.secret("token", telegram.group(1)))
        elif _entity_id(text):
            out.append(drafter.argument("entity_id", text))
        elif (
            _ID_RE.fullmatch(text)
            and previous.isalpha()
            and not _VERSION_RE.fullmatch(previous)
            and previous.lower() not in ("api", "rest")
        ):
            out.append(drafter.argument(f"{_singular(previous.lower())}_id", text))
        else:
            out.append(_in_url(raw))
    return "/".join(out)


def _query(drafter: _Drafter, query: str) -> str:
    """The query's values as secrets, arguments or fixed settings."""
    pieces: list[str] = []
    for piece in query.split("&"):
        raw_key, equals, raw_value = piece.partition("=")
        key, value = unquote_plus(raw_key), unquote_plus(raw_value)
        if not equals or not value:
            pieces.append(_in_url(piece))
            continue
        fixed = (
            not names_a_secret(key)
            and not _WHOLE_STAND_IN_RE.fullmatch(value)
            and (key.lower() in _SETTINGS or "," in value)
        )
        if fixed:
            pieces.append(_in_url(piece))
        else:
            pieces.append(
                f"{_in_url(raw_key)}={drafter.value(key, value, typed_text=True)}"
            )
    return "&".join(pieces)


def _header(drafter: _Drafter, name: str, value: str) -> str:
    """A header's value: its credentials a secret when it carries one."""
    lower = name.lower()
    if lower in ("authorization", "proxy-authorization"):
        scheme, space, credentials = value.partition(" ")
        if space and credentials.strip() and re.fullmatch(r"[A-Za-z][\w-]*", scheme):
            what = "token" if scheme.lower() in ("bearer", "token") else "key"
            return f"{scheme} {drafter.secret(what, credentials.strip())}"
        return drafter.secret("key", value)
    if lower == "cookie":
        return drafter.secret("cookie", value)
    if names_a_secret(name):
        return drafter.secret(name, value)
    return literal(value)


def _basic(value: str) -> str | None:
    """`user:password` of an `Authorization: Basic …` header."""
    scheme, _, credentials = value.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        return base64.b64decode(credentials.strip(), validate=True).decode()
    except binascii.Error, UnicodeDecodeError:
        return None


def _auth(drafter: _Drafter, user: str, digest: bool) -> dict[str, str]:
    """`-u user:password` as `auth`: the password a secret (a key given as
    the user, with no password, the user)."""
    name, colon, password = user.partition(":")
    kind = "digest" if digest else "basic"
    if colon and not password:
        return {"type": kind, "username": drafter.secret("key", name), "password": ""}
    # No colon: curl would ask for the password; the user sets it in Secrets.
    return {
        "type": kind,
        "username": literal(name),
        "password": drafter.secret("password", password),
    }


def _proposed_name(command: CurlCommand) -> str:
    """A tool name from the URL: its last word, after the verb unless GET."""
    parts = urlsplit(command.url)
    words = [
        s
        for s in parts.path.split("/")
        if s
        and not _ID_RE.fullmatch(s)
        and not _VERSION_RE.fullmatch(s)
        and not _WHOLE_STAND_IN_RE.fullmatch(unquote(s))
        and not _TELEGRAM_RE.fullmatch(unquote(s))
        and not _entity_id(s)
    ]
    word = words[-1].rsplit(".", 1)[0] if words else ""
    host = (parts.hostname or "").removeprefix("api.").removeprefix("www.")
    word = word or host.split(".")[0]
    name = _name_of(word, "tool").lower()
    if command.method not in ("GET", "POST"):
        name = f"{command.method.lower()}_{name}"
    return _name_of(name, "tool")[:64]


def _content_type(headers: list[tuple[str, str]]) -> str:
    types = [v for n, v in headers if n.lower() == "content-type"]
    return types[-1].split(";")[0].strip().lower() if types else ""


def _form_fields(drafter: _Drafter, pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """A form's fields as the body template (a field given twice: the first)."""
    fields: dict[str, Any] = {}
    for key, value in pairs:
        if key in fields:
            drafter.notes.append(f"form field '{key}' given twice: the first kept")
            continue
        fields[key] = drafter.value(key, value, typed_text=True)
    return fields


def _body(
    drafter: _Drafter, command: CurlCommand, definition: dict[str, Any]
) -> str | None:
    """The body template and its format; the Content-Type the format makes
    (dropped from the headers), if any."""
    if command.form:
        definition["body_format"] = "form"
        definition["body"] = _form_fields(drafter, command.form)
        drafter.notes.append(
            "-F sends multipart/form-data; the tool sends the fields as "
            "application/x-www-form-urlencoded"
        )
        return "multipart/form-data"
    text = command.body
    if text is None:
        return None
    content_type = _content_type(command.headers)
    if command.json or "json" in content_type or not content_type:
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, (dict, list)):
            definition["body"] = drafter.json_node("body", parsed)
            return "application/json"
    if content_type in ("", "application/x-www-form-urlencoded") and _FORM_RE.fullmatch(
        text
    ):
        definition["body_format"] = "form"
        definition["body"] = _form_fields(
            drafter, parse_qsl(text, keep_blank_values=True)
        )
        return "application/x-www-form-urlencoded"
    definition["body_format"] = "text"
    definition["body"] = drafter.value("text", text) if text else ""
    return "text/plain"


def draft_tool(
    command: CurlCommand,
    *,
    name: str | None = None,
    secrets: Mapping[str, str] | None = None,
    taken: Iterable[str] = (),
) -> CurlDraft:
    """The draft tool of `command`, named `name` (else after its URL, made
    unique among `taken`); `secrets` are the entry's (one with the same
    value is reused)."""
    tool = unique_name(name or _proposed_name(command), taken)
    drafter = _Drafter(tool, secrets or {})
    parts = urlsplit(command.url)
    netloc, user = parts.netloc, command.user
    if "@" in netloc:  # user:password@host: curl's -u written in the URL
        userinfo, _, netloc = netloc.rpartition("@")
        user = user or unquote(userinfo)
    url = urlunsplit(
        (
            parts.scheme.lower(),
            netloc,
            _path(drafter, parts.path),
            _query(drafter, parts.query),
            _in_url(parts.fragment),
        )
    )
    definition: dict[str, Any] = {"name": tool, "url": url, "method": command.method}
    made = _body(drafter, command, definition)
    browser = any(n.lower().startswith("sec-fetch-") for n, _ in command.headers)
    headers: dict[str, str] = {}
    left: list[str] = []
    for header, value in command.headers:
        lower = header.lower()
        if lower in _TRANSPORT_HEADERS or (
            browser and (lower in BROWSER_HEADERS or lower.startswith("sec-"))
        ):
            left.append(lower)
            continue
        if (
            lower == "content-type"
            and made
            and _content_type([(header, value)])
            in (
                made,
                "multipart/form-data",
            )
        ):
            continue
        if lower == "authorization" and user is None and (basic := _basic(value)):
            user = basic
            continue
        if HEADER_CONTROL_RE.search(value) or not TOKEN_RE.fullmatch(header):
            drafter.notes.append(f"header '{header}' left out: not a valid header")
            continue
        text = _header(drafter, header, value)
        same = next((h for h in headers if h.lower() == lower), None)
        if same is not None:
            glue = "; " if lower == "cookie" else ", "
            headers[same] = f"{headers[same]}{glue}{text}"
        else:
            headers[header] = text
    if headers:
        definition["headers"] = headers
    if user is not None:
        definition["auth"] = _auth(drafter, user, command.digest)
    if command.insecure:
        definition["verify_ssl"] = False
    if command.timeout is not None and 0 < command.timeout <= MAX_TIMEOUT:
        definition["timeout"] = command.timeout
    properties = drafter.properties
    definition["parameters"] = (
        {"type": "object", "properties": properties, "required": list(properties)}
        if properties
        else dict(DEFAULT_PARAMETERS)
    )
    notes = drafter.notes
    if left:
        notes.append("headers left out (a browser's own): " + ", ".join(left))
    if command.left_out:
        notes.append("left out: " + " ".join(command.left_out))
    if drafter.fixed:
        notes.append(
            f"more than {MAX_ARGUMENTS} values: kept as written: "
            + ", ".join(drafter.fixed)
        )
    return CurlDraft(definition, drafter.secrets, drafter.stand_ins, notes)
