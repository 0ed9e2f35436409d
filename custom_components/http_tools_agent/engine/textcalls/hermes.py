"""``<tool_call>`` blocks: Hermes JSON, or Qwen3-Coder XML, inside the tags.

Hermes: one or more JSON call objects (or a JSON list of them), see
:mod:`.json_calls`. Qwen3-Coder: ``<function=...>`` blocks, see
:mod:`.qwen_xml`. The opening tag may carry more (``<tool_call id="1">``).
"""

from __future__ import annotations

import re

from .json_calls import json_call
from .markup import (
    DECODER,
    FUNC,
    FUNC_END,
    TOOL_CALL,
    TOOL_CALL_END,
    Parsed,
    json_reason,
    problem,
    strip_think,
)
from .names import ToolNames
from .qwen_xml import parse_function

_TAG_REST_RE = re.compile(r"[^<>{\[]*>")


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
    pos = 0
    n = len(text)
    while True:
        while pos < n and (text[pos].isspace() or text[pos] == ","):
            pos += 1
        if pos >= n or text[pos] not in "{[":
            break
        try:
            value, pos = DECODER.raw_decode(text, pos)
        except (ValueError, RecursionError) as err:
            reason = f"invalid JSON ({json_reason(err, position=False)})"
            if not closed:
                reason += ", the reply ended inside the call"
            out.problems.append(problem(reason, markup))
            return
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
