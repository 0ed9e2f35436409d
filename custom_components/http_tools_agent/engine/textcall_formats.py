"""Parsers for tool calls that a model wrote as text (helpers of ``textcalls``).

Pure functions over one complete piece of markup; the streaming state machine
that finds the pieces lives in :mod:`.textcalls`. Standard library only.

Formats:

- Qwen3-Coder XML: ``<function=NAME>`` followed by ``<parameter=KEY>`` VALUE
  ``</parameter>`` blocks, values typed by the tool's JSON Schema.
  ``<function=NAME>{"key": ...}</function>`` (a JSON body, as Llama 3.x
  writes it) is accepted too.
- Hermes JSON inside ``<tool_call>``: ``{"name": ..., "arguments": {...}}``,
  ``arguments`` possibly a JSON string, ``parameters`` as a synonym, an
  OpenAI-shaped ``{"type": "function", "function": {...}}``, several objects or
  a JSON list of them.
- Bare JSON (the tags dropped by the server): the same objects, but a call
  only when the name resolves to an offered tool.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field
import json
import re
from typing import Any

CALL_KEYS = frozenset({"name", "arguments", "parameters", "function", "type", "id"})
"""Top-level keys a JSON call object may start with (anything else: not a call)."""

FENCE_LANGS = ("", "json", "tool_call", "tool_code")
"""Info strings of a code fence that may hold a call (compared lower-cased)."""

MAX_SNIPPET = 160
_META_KEYS = frozenset({"name", "type", "id"})
_DECODER = json.JSONDecoder(strict=False)
_THINK_RE = re.compile(r"<think>(.*?)(?:</think>|\Z)", re.DOTALL)
_TAG_REST_RE = re.compile(r"[^<>{\[]*>")
_INT_RE = re.compile(r"[+-]?\d+")
_NUM_RE = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_FUNC = "<function="
_FUNC_END = "</function>"
_PARAM = "<parameter="
_PARAM_END = "</parameter>"

type RawCall = tuple[str, dict[str, Any]]


class ToolSet:
    """The offered tools: resolves written names, knows parameter schemas."""

    __slots__ = ("_exact", "_lower", "_suffix")

    def __init__(self, tools: Mapping[str, Mapping[str, Any]]) -> None:
        """Index ``tools`` (offered name -> JSON Schema ``parameters``)."""
        self._exact: dict[str, Mapping[str, Any]] = {}
        self._lower: dict[str, list[str]] = {}
        self._suffix: dict[str, list[str]] = {}
        for name, schema in tools.items():
            self._exact[name] = schema if isinstance(schema, Mapping) else {}
            self._lower.setdefault(name.lower(), []).append(name)
            start = name.find("__")
            while start != -1:
                tail = name[start + 2 :]
                if tail:
                    self._suffix.setdefault(tail, []).append(name)
                start = name.find("__", start + 1)

    def __bool__(self) -> bool:
        """Whether any tool is offered."""
        return bool(self._exact)

    def resolve(self, written: str) -> str | None:
        """Offered name for ``written``, or None.

        Exact match; else the unique case-insensitive match; else the unique
        offered name ending with ``"__" + written`` (namespaced tool APIs).
        """
        written = written.strip()
        if written in self._exact:
            return written
        found = self._lower.get(written.lower())
        if found is not None and len(found) == 1:
            return found[0]
        found = self._suffix.get(written)
        if found is not None and len(found) == 1:
            return found[0]
        return None

    def param_schema(self, tool: str, param: str) -> Mapping[str, Any] | None:
        """JSON Schema of one parameter of an offered tool, if declared."""
        schema = self._exact.get(tool)
        if schema is None:
            return None
        props = schema.get("properties")
        if not isinstance(props, Mapping):
            return None
        found = props.get(param)
        return found if isinstance(found, Mapping) else None


@dataclass(slots=True)
class BlockResult:
    """What one piece of call markup gave."""

    calls: list[RawCall] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    rest: str = ""  # text after the calls of an unclosed block: released as text


def problem(reason: str, markup: str) -> str:
    """Model-facing error text for markup that could not be used."""
    snippet = markup.strip()
    if len(snippet) > MAX_SNIPPET:
        snippet = snippet[: MAX_SNIPPET - 1] + "…"
    return f"Error: could not parse tool call: {reason}: {snippet}"


# --- JSON calls -------------------------------------------------------------


def _call_shaped(obj: dict[str, Any]) -> bool:
    """Exactly `name` + `arguments` (or `parameters`) holding an object.

    Bare JSON of this shape is a call attempt even when its name is no tool
    (small models invent names: `remove_item` for `delete_item`): it is not
    spoken, and the model is told the tool is unknown, so it can retry.
    """
    keys = set(obj)
    if keys not in ({"name", "arguments"}, {"name", "parameters"}):
        return False
    args = obj.get("arguments", obj.get("parameters"))
    return isinstance(args, dict) or (
        isinstance(args, str) and args.strip().startswith("{")
    )


def close_truncated_json(raw: str) -> str | None:
    """`raw` with the closing brackets a cut-off reply left out, or None.

    Only when nothing but closers is missing: the text must not end inside a
    string or after a partial value, so no argument is ever guessed.
    """
    stack: list[str] = []
    in_str = esc = False
    for c in raw:
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "{[":
            stack.append("}" if c == "{" else "]")
        elif c in "}]":
            expected = stack.pop() if stack else None
            if expected != c:
                return None
    body = raw.rstrip()
    if in_str or not stack or not body or body[-1] not in '}]"':
        return None
    return body + "".join(reversed(stack))


def json_call(obj: Any, tools: ToolSet, *, tagged: bool) -> RawCall | str | None:
    """A call from one decoded JSON value.

    Returns the call, or a reason (str) when the value is a call attempt that
    cannot be used, or None when it is not a call at all. Tagged markup is
    always a call attempt (an unknown name is kept as written); bare JSON is a
    call only when its name resolves.
    """
    shape = 'expected a JSON object with "name" and "arguments"'
    if not isinstance(obj, dict):
        return shape if tagged else None
    if "name" not in obj and isinstance(obj.get("function"), dict):
        obj = obj["function"]
    name = obj.get("name")
    if not isinstance(name, str) or not name.strip():
        return shape if tagged else None
    name = name.strip()
    resolved = tools.resolve(name)
    if resolved is None and not tagged and not (tools and _call_shaped(obj)):
        return None
    if "arguments" in obj:
        args = obj["arguments"]
    elif "parameters" in obj:
        args = obj["parameters"]
    else:  # flat form {"name": "x", "city": "Rome"}: the other keys
        args = {k: v for k, v in obj.items() if k not in _META_KEYS}
    if args is None:
        args = {}
    if isinstance(args, str):
        if not args.strip():
            args = {}
        else:
            try:
                args = json.loads(args, strict=False)
            except (ValueError, RecursionError) as err:
                return f"arguments of '{name}' are not valid JSON ({_msg(err)})"
    if not isinstance(args, dict):
        return f"arguments of '{name}' must be a JSON object"
    return (resolved or name, args)


def parse_bare_json(raw: str, tools: ToolSet, *, committed: bool) -> BlockResult | None:
    """Calls from one complete bare JSON value (object or list), or None.

    None means "not a call: release it as text". ``committed`` (a top-level
    ``"name"`` that resolves was seen while streaming) turns a value that does
    not decode into a problem instead of text.
    """
    try:
        value = json.loads(raw, strict=False)
    except (ValueError, RecursionError) as err:
        if committed:
            return BlockResult(problems=[problem(f"invalid JSON ({_msg(err)})", raw)])
        return None
    items = value if isinstance(value, list) else [value]
    if not items:
        return None
    results = [json_call(item, tools, tagged=False) for item in items]
    if any(r is None for r in results):
        return None
    out = BlockResult()
    for r in results:
        if isinstance(r, str):
            out.problems.append(problem(r, raw))
        elif r is not None:
            out.calls.append(r)
    return out


def _short(err: Exception) -> str:
    if isinstance(err, json.JSONDecodeError):
        return err.msg
    return _msg(err)


def _msg(err: Exception) -> str:
    if isinstance(err, json.JSONDecodeError):
        return f"{err.msg} at character {err.pos}"
    if isinstance(err, RecursionError):
        return "nested too deeply"
    return str(err)


# --- <tool_call> blocks -----------------------------------------------------


def _strip_think(body: str, out: BlockResult) -> str:
    if "<think>" not in body:
        return body

    def keep(m: re.Match[str]) -> str:
        out.thinking.append(m.group(1))
        return ""

    return _THINK_RE.sub(keep, body)


def parse_tool_call(body: str, tools: ToolSet, *, closed: bool) -> BlockResult:
    """Calls inside ``<tool_call>`` ... ``</tool_call>`` (body without tags).

    ``closed`` is False when the stream ended before the closing tag: complete
    calls still count, text after them is returned in ``rest``.
    """
    out = BlockResult()
    body = _strip_think(body, out)
    markup = f"<tool_call>{body}" + ("</tool_call>" if closed else "")
    if m := _TAG_REST_RE.match(body):  # rest of "<tool_call id=1>", "<tool_calls>"
        body = body[m.end() :]
    if _FUNC in body:
        pos = body.find(_FUNC)
        while pos != -1:
            start = pos + len(_FUNC)
            nxt = body.find(_FUNC, start)
            end = body.find(_FUNC_END, start, nxt if nxt != -1 else len(body))
            if end != -1:
                fbody, fclosed = body[start:end], True
                after = end + len(_FUNC_END)
            else:
                stop = nxt if nxt != -1 else len(body)
                fbody, fclosed = body[start:stop], closed or nxt != -1
                after = stop
            res = parse_function(fbody, tools, closed=fclosed)
            out.calls += res.calls
            out.problems += res.problems
            out.thinking += res.thinking
            if nxt == -1:
                tail = res.rest if end == -1 else body[after:]
                if not closed and tail.strip():
                    out.rest = tail
            pos = nxt
        return out

    text = body
    pos = 0
    n = len(text)
    while True:
        while pos < n and (text[pos].isspace() or text[pos] == ","):
            pos += 1
        if pos >= n or text[pos] not in "{[":
            break
        try:
            value, pos = _DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError) as err:
            reason = f"invalid JSON ({_short(err)})"
            if not closed:
                reason += ", the reply ended inside the call"
            out.problems.append(problem(reason, markup))
            return out
        for item in value if isinstance(value, list) else [value]:
            got = json_call(item, tools, tagged=True)
            if isinstance(got, tuple):
                out.calls.append(got)
            else:
                out.problems.append(problem(got or "not a call", markup))
    rest = text[pos:]
    if not out.calls and not out.problems:
        reason = (
            'expected a JSON object with "name" and "arguments"'
            if rest.strip()
            else "empty <tool_call> block"
        )
        out.problems.append(problem(reason, markup))
    elif not closed and rest.strip():
        out.rest = rest
    return out


# --- <function=...> blocks --------------------------------------------------


def parse_function(body: str, tools: ToolSet, *, closed: bool) -> BlockResult:
    """One Qwen3-Coder function (body: text after ``<function=``).

    ``closed`` is False when the stream ended inside it: a function whose
    parameters are all complete still counts; text after the last
    ``</parameter>`` is returned in ``rest``.
    """
    out = BlockResult()
    body = _strip_think(body, out)
    markup = _FUNC + body + (_FUNC_END if closed else "")
    gt = body.find(">")
    if gt == -1:
        out.problems.append(problem("missing '>' after the function name", markup))
        return out
    written = body[:gt].strip().strip("\"'")
    if not written or any(c.isspace() or c in "<=" for c in written):
        out.problems.append(problem("invalid function name", markup))
        return out
    name = tools.resolve(written) or written
    inner = body[gt + 1 :]
    args: dict[str, Any] = {}
    rest = ""
    if _PARAM in inner:
        pos = inner.find(_PARAM)
        while pos != -1:
            kstart = pos + len(_PARAM)
            kend = inner.find(">", kstart)
            if kend == -1:
                reason = "missing '>' after the parameter name"
                out.problems.append(problem(reason, markup))
                return out
            key = inner[kstart:kend].strip().strip("\"'")
            end = inner.find(_PARAM_END, kend)
            nxt = inner.find(_PARAM, kend)
            if end != -1 and (nxt == -1 or end < nxt):
                raw, pos = inner[kend + 1 : end], end + len(_PARAM_END)
            elif nxt != -1:  # missing </parameter>: the next one ends it
                raw, pos = inner[kend + 1 : nxt], nxt
            elif closed:
                raw, pos = inner[kend + 1 :], len(inner)
            else:
                reason = "the reply ended inside a parameter"
                out.problems.append(problem(reason, markup))
                return out
            if key:
                args[key] = coerce_value(raw, tools.param_schema(name, key))
            nxt = inner.find(_PARAM, pos)
            if nxt == -1:
                rest = inner[pos:]
            pos = nxt
    else:
        stripped = inner.lstrip()
        if stripped.startswith("{"):
            try:
                value, end = _DECODER.raw_decode(stripped)
            except (ValueError, RecursionError) as err:
                reason = f"invalid JSON arguments ({_short(err)})"
                out.problems.append(problem(reason, markup))
                return out
            if not isinstance(value, dict):
                out.problems.append(problem("arguments must be a JSON object", markup))
                return out
            args = value
            rest = stripped[end:]
        elif stripped and closed:
            reason = "expected <parameter=NAME> blocks or a JSON object"
            out.problems.append(problem(reason, markup))
            return out
        else:
            rest = inner
    out.calls.append((name, args))
    if not closed and rest.strip():
        out.rest = rest
    return out


def parse_orphan_parameter(body: str) -> BlockResult:
    """``<parameter=...>`` outside any function: never a call."""
    markup = _PARAM + body
    reason = "<parameter=...> outside <function=...>"
    return BlockResult(problems=[problem(reason, markup)])


# --- parameter typing -------------------------------------------------------


def _schema_types(schema: Mapping[str, Any] | None) -> set[str]:
    if schema is None:
        return set()
    found: set[str] = set()
    kind = schema.get("type")
    if isinstance(kind, str):
        found.add(kind)
    elif isinstance(kind, list):
        found.update(k for k in kind if isinstance(k, str))
    for key in ("anyOf", "oneOf"):
        subs = schema.get(key)
        if isinstance(subs, list):
            for sub in subs:
                if isinstance(sub, Mapping):
                    found |= _schema_types(sub)
    if not found and "enum" in schema:
        found.add("string")
    return found


def _loads_container(text: str, kind: type) -> tuple[bool, Any]:
    try:
        value = json.loads(text, strict=False)
    except ValueError, RecursionError:
        if len(text) > 10_000:
            return False, None
        try:  # Python-style literals ({'a': 1}, True) that models write
            value = ast.literal_eval(text)
        except ValueError, TypeError, SyntaxError, MemoryError, RecursionError:
            return False, None
    return (True, value) if isinstance(value, kind) else (False, None)


def _convert(kind: str, text: str) -> tuple[bool, Any]:
    if kind == "integer":
        try:
            if _INT_RE.fullmatch(text):
                return True, int(text)
            if _NUM_RE.fullmatch(text):
                number = float(text)
                if number.is_integer():
                    return True, int(number)
        except ValueError, OverflowError:  # more digits than int() takes
            pass
        return False, None
    if kind == "number":
        if _NUM_RE.fullmatch(text) or _INT_RE.fullmatch(text):
            if any(c in text for c in ".eE"):
                return True, float(text)
            try:
                return True, int(text)
            except ValueError:  # more digits than int() takes
                return True, float(text)
        return False, None
    if kind == "boolean":
        low = text.lower()
        if low in ("true", "false"):
            return True, low == "true"
        return False, None
    if kind == "null":
        return (True, None) if text.lower() in ("null", "none") else (False, None)
    if kind == "object":
        return _loads_container(text, dict)
    if kind == "array":
        return _loads_container(text, list)
    return False, None


_KIND_ORDER = ("integer", "number", "boolean", "null", "object", "array")


def coerce_value(raw: str, schema: Mapping[str, Any] | None) -> Any:
    """Type one XML parameter value by its JSON Schema.

    The newlines around the value are dropped. Strings stay strings even when
    they look like numbers; a value that does not convert to its declared type
    is kept as text (the tool reports it). Undeclared parameters: JSON-decoded
    when that gives a non-string, else the text.
    """
    value = raw.strip("\r\n")
    text = value.strip()
    kinds = _schema_types(schema)
    for kind in _KIND_ORDER:
        if kind in kinds:
            ok, converted = _convert(kind, text)
            if ok:
                return converted
    if "string" in kinds:
        return value
    try:
        decoded = json.loads(text, strict=False)
    except ValueError, RecursionError:
        return value
    return value if isinstance(decoded, str) else decoded
