"""Calls written as Python: ``[get_weather(city="Rome"), get_time(city="Rome")]``.

Llama 3.2 and 4, Gemma 3 (Google's prompt), LFM2 and Gemma 3's
```` ```tool_code ```` fences write them so. The text is parsed by Python's
own parser (:mod:`ast`) and each argument must be a literal: nothing is
ever evaluated, and a name, an operator or a call as a value is a problem.
JSON's ``true``, ``false`` and ``null`` are taken as the literals they mean.
"""

from __future__ import annotations

import ast
from typing import Any
import warnings

from .markup import Parsed, RawCall, problem
from .names import ToolNames

_JSON_WORDS: dict[str, Any] = {"true": True, "false": False, "null": None}
# Longer text is no call (nothing a request asks for needs such arguments),
# and Python's parser is never handed it.
MAX_PYTHONIC = 1500


class _NotLiteral(ValueError):
    """An argument that is not a literal."""


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Name) and node.id in _JSON_WORDS:
        return _JSON_WORDS[node.id]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return [_literal(item) for item in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[Any, Any] = {}
        for key, value in zip(node.keys, node.values, strict=True):
            if key is None:
                raise _NotLiteral("**")
            out[_literal(key)] = _literal(value)
        return out
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError) as err:
        raise _NotLiteral(ast.unparse(node)[:40]) from err


def _dotted(node: ast.expr) -> str | None:
    """``name`` or ``module.name`` of a called function."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value)):
        return f"{base}.{node.attr}"
    return None


def _calls_of(tree: ast.expr) -> list[ast.Call] | None:
    """The calls a parsed text holds: a list of calls, or one call (also
    inside ``print(...)``, as Google's Gemma examples write them)."""
    items = tree.elts if isinstance(tree, ast.List | ast.Tuple) else [tree]
    calls: list[ast.Call] = []
    for item in items:
        call = item
        if (
            isinstance(item, ast.Call)
            and _dotted(item.func) == "print"
            and len(item.args) == 1
            and isinstance(item.args[0], ast.Call)
        ):
            call = item.args[0]
        if not isinstance(call, ast.Call) or _dotted(call.func) is None:
            return None
        calls.append(call)
    return calls or None


def _arguments(call: ast.Call, name: str, tools: ToolNames) -> dict[str, Any] | str:
    """A call's arguments, or why they cannot be used. Positional values
    fill the tool's required parameters in the order its schema lists them
    (``get_weather("Rome")``); more of them than that is a problem."""
    args: dict[str, Any] = {}
    try:
        if call.args:
            required = tools.required(name)
            if len(call.args) > len(required):
                return f"positional arguments of '{name}': write name=value"
            for key, node in zip(required, call.args, strict=False):
                args[key] = _literal(node)
        for keyword in call.keywords:
            if keyword.arg is None:
                return f"'**' in the arguments of '{name}'"
            args[keyword.arg] = _literal(keyword.value)
    except _NotLiteral as err:
        return f"an argument of '{name}' is not a literal value ({err})"
    return args


def parse_pythonic(text: str, tools: ToolNames, *, tagged: bool) -> Parsed | None:
    """Calls from Python call syntax, or None when ``text`` is none.

    ``tagged``: markers made it call markup, so an unknown name is kept (the
    agent answers that the tool is unknown) and text that is no call is a
    problem. Untagged, every name must resolve to an offered tool, else the
    text is not a call at all (None).
    """
    source = text.strip()
    if not source or len(source) > MAX_PYTHONIC:
        if tagged and source:
            return Parsed(problems=[problem("the call is too long", source)])
        return None
    try:
        with warnings.catch_warnings():
            # A model's "\/" is no reason for Python to warn in the log.
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(source, mode="eval").body
    except SyntaxError, ValueError, RecursionError, MemoryError:
        tree = None
    calls = _calls_of(tree) if tree is not None else None
    if calls is None:
        if not tagged:
            return None
        return Parsed(problems=[problem("expected calls as name(key=value)", source)])
    out = Parsed()
    found: list[RawCall] = []
    for call in calls:
        written = _dotted(call.func) or ""
        name = tools.resolve(written)
        if name is None and not tagged:
            return None
        args = _arguments(call, name or written, tools)
        if isinstance(args, str):
            if not tagged:
                return None  # no marker made it a call: it is words
            out.problems.append(problem(args, source))
        else:
            found.append((name or written, args))
    out.calls = found
    return out
