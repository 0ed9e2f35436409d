# Sourced by the scripts: the repository root, the project venv, and Python.
# shellcheck shell=bash
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${HTA_VENV:-$ROOT/.venv}"
# The lock the venv was installed from (scripts/setup copies it there).
STAMP="$VENV/.installed-requirements_test.lock"

# Python >= 3.14.2 (what Home Assistant needs): HTA_PYTHON, python3.14, ...
find_python() {
  local cand
  for cand in "${HTA_PYTHON:-}" python3.14 python3.15 python3; do
    if [ -n "$cand" ] && command -v "$cand" >/dev/null 2>&1 &&
      "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 14, 2))' 2>/dev/null; then
      command -v "$cand"
      return 0
    fi
  done
  # uv can provide a managed interpreter when the system has none.
  command -v uv >/dev/null 2>&1 && uv python find '>=3.14.2' 2>/dev/null && return 0
  cat >&2 <<'MSG'
error: Home Assistant needs Python >= 3.14.2 and none was found.
Install it (e.g. `apt install python3.14 python3.14-venv`, `uv python install 3.14`,
or pyenv), or point HTA_PYTHON at the interpreter, then run this again.
MSG
  return 1
}

# Run scripts/setup when the venv is missing or was installed from another lock.
ensure_venv() {
  if [ ! -x "$VENV/bin/python" ] || ! cmp -s "$ROOT/requirements_test.lock" "$STAMP"; then
    "$ROOT/scripts/setup"
  fi
}
