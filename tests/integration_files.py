"""The integration's files, read the way hassfest reads them: JSON as data,
the source with `ast`, nothing imported.

The validator tests (`test_validation`, `test_strings`, `test_quality_scale`)
use it to find what the code names (translation keys, flow steps, raised
errors, platform modules) and hold it against the strings, the manifest and
`quality_scale.yaml`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
import json
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
COMPONENT = ROOT / "custom_components" / "http_tools_agent"
MANIFEST: dict[str, Any] = json.loads((COMPONENT / "manifest.json").read_text())
STRINGS: dict[str, Any] = json.loads((COMPONENT / "strings.json").read_text())

# Errors Home Assistant shows to users; raising them needs a translation.
HA_ERRORS = frozenset(
    {
        "HomeAssistantError",
        "ServiceValidationError",
        "ConfigEntryNotReady",
        "ConfigEntryAuthFailed",
        "ConfigEntryError",
        "IntegrationError",
    }
)


def flat(node: Any, prefix: str = "") -> dict[str, Any]:
    """Map each leaf's key path (`a.b.c`) to its value."""
    if not isinstance(node, dict):
        return {prefix: node}
    out: dict[str, Any] = {}
    for key, value in node.items():
        out |= flat(value, f"{prefix}.{key}" if prefix else key)
    return out


def flows(strings: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every data-entry flow in strings: config, options, each subentry type."""
    found: dict[str, dict[str, Any]] = {
        name: strings[name] for name in ("config", "options") if name in strings
    }
    for kind, flow in strings.get("config_subentries", {}).items():
        found[f"config_subentries.{kind}"] = flow
    for issue, info in strings.get("issues", {}).items():
        if "fix_flow" in info:
            found[f"issues.{issue}.fix_flow"] = info["fix_flow"]
    return found


def call_name(call: ast.Call) -> str:
    """`f` for `f(...)` and `x.f(...)`."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    """The value of keyword argument `name`, if given."""
    return next((k.value for k in call.keywords if k.arg == name), None)


@dataclass
class Source:
    """Every module of the integration, parsed."""

    root: Path = COMPONENT
    trees: dict[Path, ast.Module] = field(init=False)

    def __post_init__(self) -> None:
        """Parse every module."""
        self.trees = {
            path: ast.parse(path.read_text(encoding="utf-8"), str(path))
            for path in sorted(self.root.rglob("*.py"))
            if "__pycache__" not in path.parts
        }

    def module(self, name: str) -> ast.Module:
        """A top-level module by file name, e.g. `config_flow.py`."""
        return self.trees[self.root / name]

    def nodes(self, module: str | None = None) -> Iterator[ast.AST]:
        """Every node of one module, or of all of them."""
        trees = [self.module(module)] if module else self.trees.values()
        for tree in trees:
            yield from ast.walk(tree)

    def calls(self, module: str | None = None) -> Iterator[ast.Call]:
        """Every call."""
        return (n for n in self.nodes(module) if isinstance(n, ast.Call))

    @cached_property
    def constants(self) -> dict[str, str | tuple[str, ...]]:
        """Module-level names bound to a string or a tuple of strings (whose
        items may be such names)."""
        bound = [
            (target, value)
            for tree in self.trees.values()
            for node in tree.body
            for target, value in [_assignment(node)]
            if target is not None and value is not None
        ]
        strings: dict[str, str] = {
            target: value.value
            for target, value in bound
            if isinstance(value, ast.Constant) and isinstance(value.value, str)
        }
        found: dict[str, str | tuple[str, ...]] = dict(strings)
        for target, value in bound:
            if isinstance(value, ast.Tuple | ast.List):
                items = [
                    e.value
                    if isinstance(e, ast.Constant) and isinstance(e.value, str)
                    else strings.get(e.id)
                    if isinstance(e, ast.Name)
                    else None
                    for e in value.elts
                ]
                if all(isinstance(i, str) for i in items):
                    found[target] = tuple(i for i in items if i is not None)
        return found

    def text(self, node: ast.expr | None) -> str | None:
        """A string literal, or a module constant naming one."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            value = self.constants.get(node.id)
            return value if isinstance(value, str) else None
        return None

    def choices(self, node: ast.expr | None) -> list[str]:
        """The strings an expression can be: a literal or constant, or either
        branch of `a if cond else b`."""
        if isinstance(node, ast.IfExp):
            return [*self.choices(node.body), *self.choices(node.orelse)]
        text = self.text(node)
        return [] if text is None else [text]

    def texts(self, node: ast.expr | None) -> tuple[str, ...] | None:
        """A literal list/tuple of strings, a constant naming one, or
        `list(CONSTANT)`."""
        if isinstance(node, ast.Call) and call_name(node) in ("list", "tuple"):
            node = node.args[0] if node.args else None
        if isinstance(node, ast.Name):
            value = self.constants.get(node.id)
            return value if isinstance(value, tuple) else None
        if isinstance(node, ast.List | ast.Tuple):
            items = [self.text(e) for e in node.elts]
            if all(isinstance(i, str) for i in items):
                return tuple(i for i in items if i is not None)
        return None

    def functions(
        self, module: str | None = None
    ) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
        """Every function and method."""
        for node in self.nodes(module):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield node

    def classes(self) -> Iterator[ast.ClassDef]:
        """Every class."""
        return (n for n in self.nodes() if isinstance(n, ast.ClassDef))

    def raised(self) -> Iterator[tuple[str, ast.Call | None]]:
        """What every `raise` raises: the class name and the call, if any."""
        for node in self.nodes():
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc
                call = exc if isinstance(exc, ast.Call) else None
                target = call.func if call else exc
                if isinstance(target, ast.Attribute):
                    yield target.attr, call
                elif isinstance(target, ast.Name):
                    yield target.id, call

    def class_attribute(self, name: str) -> list[ast.expr]:
        """The values classes give `name` in their bodies."""
        return [
            value
            for cls in self.classes()
            for node in cls.body
            if (target_value := _assignment(node))[0] == name
            and (value := target_value[1]) is not None
        ]

    def assigns_attribute(self, name: str) -> bool:
        """Whether some code assigns `<anything>.name = ...`."""
        for node in self.nodes():
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, ast.AnnAssign):
                targets = [node.target]
            if any(isinstance(t, ast.Attribute) and t.attr == name for t in targets):
                return True
        return False

    def defines(self, name: str, module: str | None = None) -> bool:
        """Whether a function, method or module-level name `name` exists."""
        if any(f.name == name for f in self.functions(module)):
            return True
        trees = [self.module(module)] if module else self.trees.values()
        return any(_assignment(n)[0] == name for tree in trees for n in tree.body)


def _assignment(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    """`NAME = value` / `NAME: T = value` at module level."""
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
    ):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return None, None
