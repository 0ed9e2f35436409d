# Sourced by the scripts: finds Python >= 3.14.2 and the project venv.
# shellcheck shell=bash
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="${HTA_VENV:-$ROOT/.venv}"

find_python() {
  local cand
  for cand in "${HTA_PYTHON:-}" python3.14 python3.15 python3; do
    [ -n "$cand" ] || continue
    if command -v "$cand" >/dev/null 2>&1 &&
      "$cand" -c 'import sys; sys.exit(sys.version_info < (3, 14, 2))' 2>/dev/null; then
      command -v "$cand"
      return 0
    fi
  done
  if command -v uv >/dev/null 2>&1; then
    # uv can provide a managed interpreter when the system has none.
    uv python find '>=3.14.2' 2>/dev/null && return 0
  fi
  cat >&2 <<'MSG'
error: Home Assistant needs Python >= 3.14.2 and none was found.
Install it (e.g. `apt install python3.14 python3.14-venv`, `uv python install 3.14`,
or pyenv), or point HTA_PYTHON at the interpreter, then run this again.
MSG
  return 1
}
