"""The integration's parts import in one direction: from a lower layer only.

`LAYERS` is the order, lowest first, written here once (ARCHITECTURE.md
repeats it). It is the order the code already followed but for four
imports, which were turned around when this test came:

- `engine/` runs HTTP tools and reads call markup, pure Python: it imports
  nothing of the rest (and no Home Assistant, `tests/engine/test_standalone.py`);
- `lexicon/` holds each language's words, over the engine's text helpers;
- `const`, `redact`: the keys and defaults, and hiding secrets, that every
  part below the agent needs;
- `agent_settings`, `agent_options`: an agent's settings, read by the turn,
  the small-model rules and the forms;
- `server/` talks to the LLM server (client, errors, what it runs, warm-up);
- `small/` decides what a small model is asked differently, from the
  server's profile;
- `tools/` the entry's HTTP tools as Home Assistant LLM tools, and what
  became of a call (`tools/call_result.py`);
- `turn/` one conversation turn: requests, replies, the call gate, speech;
- `runtime`: what a loaded entry holds, a part of each layer below (its
  server, its tools, its held calls);
- `flows/` the config and options forms;
- every other top-level module: the entry's set-up, platforms, services,
  REST view and diagnostics, which put the parts together.

An import only for annotations (under `if TYPE_CHECKING:`) may go up to
`runtime` alone: every layer is handed the loaded entry, whose type names
all of them (Home Assistant's typed config entry); it never runs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = "custom_components.http_tools_agent"
ROOT = Path(__file__).parent.parent / "custom_components" / "http_tools_agent"

# Lowest first. A name is a folder (a subpackage) or a top-level module;
# "*" stands for the top-level modules not named.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("engine",),
    ("lexicon",),
    ("const", "redact"),
    ("agent_settings", "agent_options"),
    ("server",),
    ("small",),
    ("tools",),
    ("turn",),
    ("runtime",),
    ("flows",),
    ("*",),
)
# What an annotation-only import may reach above its layer.
TYPE_ONLY_UP = frozenset({"runtime"})


@dataclass(frozen=True, slots=True)
class Violation:
    """One import from a layer above the importer's."""

    module: str
    line: int
    imported: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.imported}"


def _module_name(path: Path, root: Path, package: str) -> tuple[str, bool]:
    parts = list(path.relative_to(root).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts.pop()
    return ".".join([package, *parts]), is_package


def _part(module: str, package: str) -> str:
    """The folder or top-level module a module of the package belongs to."""
    return module.removeprefix(package).lstrip(".").split(".")[0] or "__init__"


def _layer_of(part: str, folders: set[str]) -> int:
    for index, names in enumerate(LAYERS):
        if part in names:
            return index
    if part in folders:
        pytest.fail(f"the folder {part}/ has no place in LAYERS")
    return LAYERS.index(("*",))


def _imports(tree: ast.Module) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import with whether it is for annotations only."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def visit(node: ast.AST, type_only: bool) -> None:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append((node, type_only))
            return
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith(
            "TYPE_CHECKING"
        ):
            for statement in node.body:
                visit(statement, True)
            for statement in node.orelse:
                visit(statement, type_only)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, type_only)

    visit(tree, False)
    return found


def _targets(
    node: ast.Import | ast.ImportFrom, module: str, is_package: bool
) -> list[str]:
    """The modules an import names, resolved to absolute names."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level == 0:
        base = node.module or ""
    else:
        parts = module.split(".")
        if not is_package:
            parts.pop()
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join([*parts, node.module] if node.module else parts)
    if node.module is None:
        # `from . import lexicon`: each name may be a module.
        return [f"{base}.{alias.name}" for alias in node.names]
    return [base]


def layer_violations(root: Path, package: str) -> list[Violation]:
    """Every import in the package at `root` from a layer above its module's."""
    folders = {p.name for p in root.iterdir() if (p / "__init__.py").is_file()}
    found: list[Violation] = []
    for path in sorted(root.rglob("*.py")):
        module, is_package = _module_name(path, root, package)
        own = _part(module, package)
        own_layer = _layer_of(own, folders)
        for node, type_only in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            for target in _targets(node, module, is_package):
                if target != package and not target.startswith(f"{package}."):
                    continue
                part = _part(target, package)
                if part == own or _layer_of(part, folders) <= own_layer:
                    continue
                if type_only and part in TYPE_ONLY_UP:
                    continue
                found.append(Violation(module, node.lineno, target))
    return found


def test_imports_go_down_the_layers() -> None:
    """No module imports from a layer above its own."""
    violations = layer_violations(ROOT, PACKAGE)
    assert not violations, "imports against the layers (tests/test_layering.py):\n" + (
        "\n".join(map(str, violations))
    )


def test_every_part_has_its_layer() -> None:
    """Each folder of the integration is placed in the order, and no name in
    the order is a part that is gone."""
    parts = {
        p.stem if p.is_file() else p.name
        for p in ROOT.iterdir()
        if (p.suffix == ".py" and p.stem != "__init__") or (p / "__init__.py").is_file()
    }
    named = {name for names in LAYERS for name in names} - {"*"}
    assert named <= parts, f"LAYERS names parts that are gone: {named - parts}"
    folders = {p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file()}
    assert folders <= named, f"folders without a layer: {folders - named}"


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkg"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_an_import_from_above_is_found(tmp_path: Path) -> None:
    """The check catches an upward import however it is written, and lets a
    downward one, one inside a folder and a typed-entry annotation pass."""
    root = _package(
        tmp_path,
        {
            "engine/__init__.py": "",
            "engine/run.py": "from ..turn import loop\n",
            "server/__init__.py": "",
            "server/client.py": (
                "from typing import TYPE_CHECKING\n"
                "from ..const import LOGGER\n"
                "from . import info\n"
                "if TYPE_CHECKING:\n"
                "    from ..runtime import Entry\n"
                "    from ..turn.state import Turn\n"
                "def late():\n"
                "    import pkg.tools.llm_api\n"
            ),
            "server/info.py": "",
            "small/__init__.py": "",
            "tools/__init__.py": "",
            "tools/llm_api.py": "",
            "turn/__init__.py": "",
            "turn/loop.py": "from ..server import client\n",
            "turn/state.py": "",
            "lexicon/__init__.py": "",
            "flows/__init__.py": "",
            "const.py": "from . import entity\n",
            "runtime.py": "",
            "entity.py": "from .turn import loop\n",
        },
    )
    assert [str(v) for v in layer_violations(root, "pkg")] == [
        "pkg.const:1 imports pkg.entity",
        "pkg.engine.run:1 imports pkg.turn",
        "pkg.server.client:6 imports pkg.turn.state",
        "pkg.server.client:8 imports pkg.tools.llm_api",
    ]
