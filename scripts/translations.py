"""Write translations/en.json from strings.json, resolving [%key:...%] references.

Home Assistant reads only translations/*.json for custom integrations; this
does what core's `script.translations develop` does for strings.json.
Run: python scripts/translations.py  (tests check en.json is up to date).
"""

from __future__ import annotations

import json
from pathlib import Path
import re
import sys
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
COMPONENT = ROOT / "custom_components" / "http_tools_agent"
KEY_RE = re.compile(r"\[%key:component::http_tools_agent::([a-z0-9_:]+)%\]")


def _lookup(strings: dict[str, Any], path: str) -> str:
    node: Any = strings
    for part in path.split("::"):
        node = node[part]
    if not isinstance(node, str):
        raise TypeError(f"{path} is not a string")
    return node


def resolve(strings: dict[str, Any], node: Any = None) -> Any:
    """Return `node` (default: all strings) with every reference resolved."""
    node = strings if node is None else node
    if isinstance(node, dict):
        return {k: resolve(strings, v) for k, v in node.items()}
    if isinstance(node, str):
        for _ in range(10):
            new = KEY_RE.sub(lambda m: _lookup(strings, m.group(1)), node)
            if new == node:
                break
            node = new
        return node
    return node


def english() -> str:
    """Return the text en.json must hold."""
    strings = json.loads((COMPONENT / "strings.json").read_text(encoding="utf-8"))
    return json.dumps(resolve(strings), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    """Write en.json."""
    (COMPONENT / "translations").mkdir(exist_ok=True)
    (COMPONENT / "translations" / "en.json").write_text(english(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
