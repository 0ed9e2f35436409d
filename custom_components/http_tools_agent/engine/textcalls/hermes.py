"""``<tool_call>`` blocks: Hermes JSON, or Qwen3-Coder XML, inside the tags.

Hermes: one or more JSON call objects (or a JSON list of them), see
:mod:`.json_calls`. Qwen3-Coder: ``<function=...>`` blocks, see
:mod:`.qwen_xml`. GLM: ``NAME`` then ``<arg_key>``/``<arg_value>`` pairs. The opening tag may carry more (``<tool_call id="1">``).
"""

from __future__ import annotations

import re
from typing import Any

from .call_lists import parse_json_values
from .coercion import coerce_value
from .markup import (
    FUNC,
    FUNC_END,
    TOOL_CALL,
    TOOL_CALL_END,
    Parsed,
    problem,
    strip_think,
)
from .names import ToolNames
from .qwen_xml import parse_function

_TAG_REST_RE = re.compile(r"[^<>{\[]*>")
ARG_KEY = "<arg_key>"
_GLM_ARG = re.compile(
    r"<arg_key>(.*?)</arg_key>\s*(?:<arg_value>(.*?)(?:</arg_value>|(?=<arg_key>)|\Z))?",
    re.DOTALL,
)


def parse_tool_call(body: str, tools: ToolNames, *, closed: bool) -> Parsed:
    """Calls inside ``<tool_call>`` ... ``</tool_call>`` (body without tags).

    ``closed`` is False when the stream ended before the closing tag: complete
    calls still count, text after them is returned in ``rest``.
    """
    out = Parsed()
    body = strip_think(body, out)
    markup = TOOL_CALL + body + (TOOL_CALL_END if closed else "")
    if m := _TAG_REST_RE.match(body):  # rest of "<tool_call id=1>", "<tool_calls>"
        body = body[m.end() :]
    if FUNC in body:
        _parse_functions(body, tools, closed, out)
    elif ARG_KEY in body:
        _parse_glm(body, tools, closed, markup, out)
    else:
        _parse_json(body, tools, closed, markup, out)
    return out


def _parse_functions(body: str, tools: ToolNames, closed: bool, out: Parsed) -> None:
    pos = body.find(FUNC)
    while pos != -1:
        start = pos + len(FUNC)
        nxt = body.find(FUNC, start)
        end = body.find(FUNC_END, start, nxt if nxt != -1 else len(body))
        if end != -1:
            fbody, fclosed = body[start:end], True
            after = end + len(FUNC_END)
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


def _parse_json(
    text: str, tools: ToolNames, closed: bool, markup: str, out: Parsed
) -> None:
    rest = parse_json_values(text, tools, closed=closed, out=out, markup=markup)
    if not out.calls and not out.problems:
        reason = (
            'expected a JSON object with "name" and "arguments"'
            if rest.strip()
            else "empty <tool_call> block"
        )
        out.problems.append(problem(reason, markup))
    elif not closed and rest.strip():
        out.rest = rest


def _parse_glm(
    body: str, tools: ToolNames, closed: bool, markup: str, out: Parsed
) -> None:
    """GLM 4.5 to 4.7: ``NAME<arg_key>KEY</arg_key><arg_value>VALUE</arg_value>…``,
    each value typed by the tool's schema as Qwen3-Coder XML values are."""
    written = body[: body.find(ARG_KEY)].strip()
    if not written or any(c.isspace() or c in "<>{}" for c in written):
        out.problems.append(problem("invalid function name", markup))
        return
    name = tools.resolve(written) or written
    args: dict[str, Any] = {}
    for m in _GLM_ARG.finditer(body):
        key = m.group(1).strip()
        if m.group(2) is None:
            if closed or m.end() < len(body):
                out.problems.append(problem(f"no value for '{key}'", markup))
            else:
                out.problems.append(problem("the reply ended inside the call", markup))
            return
        args[key] = coerce_value(m.group(2), tools.param_schema(name, key))
    out.calls.append((name, args))
