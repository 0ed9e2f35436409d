"""The engine is pure Python: it imports without Home Assistant."""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys

ENGINE = (
    Path(__file__).resolve().parents[2] / "custom_components/http_tools_agent/engine"
)

# Import every engine module as a top-level package `engine` (so the
# integration's own __init__, which needs Home Assistant, never runs) while
# any `homeassistant` import fails.
_PROBE = """
import importlib, importlib.abc, importlib.util, pkgutil, sys

class NoHomeAssistant(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "homeassistant":
            raise ImportError(f"the engine imported {name}")
        return None

sys.meta_path.insert(0, NoHomeAssistant())
spec = importlib.util.spec_from_file_location(
    "engine", sys.argv[1] + "/__init__.py", submodule_search_locations=[sys.argv[1]]
)
engine = importlib.util.module_from_spec(spec)
sys.modules["engine"] = engine
spec.loader.exec_module(engine)
names = [m.name for m in pkgutil.walk_packages(engine.__path__, "engine.")]
for name in names:
    importlib.import_module(name)
print(len(names))
"""


def test_engine_imports_without_home_assistant() -> None:
    done = subprocess.run(  # noqa: S603 - this interpreter, our own probe
        [sys.executable, "-c", _PROBE, str(ENGINE)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 15  # every module was imported
