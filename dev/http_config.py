"""Seed Home Assistant's HTTP settings for a development config directory.

Home Assistant 2026.10 keeps its HTTP settings in `.storage/http`. A YAML
`http:` block is migrated once as a *trial* that the frontend must confirm
within five minutes (else it reverts and restarts), and leaves a deprecation
repair. Writing the stored settings directly (listen on 127.0.0.1 only) avoids
both. An existing file is left alone.

    python -m dev.http_config CONFIG_DIR [PORT]
"""

from __future__ import annotations

from datetime import UTC, datetime
import json
from pathlib import Path
import sys


def seed_http_config(config_dir: Path, port: int) -> bool:
    """Write `.storage/http` unless present; return whether it was written."""
    path = config_dir / ".storage" / "http"
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    stable = {
        "server_host": ["127.0.0.1"],
        "server_port": port,
        "cors_allowed_origins": ["https://cast.home-assistant.io"],
        "login_attempts_threshold": -1,
        "ip_ban_enabled": True,
        "ssl_profile": "modern",
        "use_x_frame_options": True,
        "created_at": datetime.now(UTC).isoformat(),
        "error": None,
        "error_message": None,
    }
    data = {
        "version": 2,
        "minor_version": 2,
        "key": "http",
        "data": {"stable": stable, "pending": None, "yaml_migration_done": True},
    }
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    return True


def main() -> int:
    """Seed the settings of the config dir given on the command line."""
    config_dir = Path(sys.argv[1])
    port = int(sys.argv[2]) if len(sys.argv) > 2 else 8123
    if seed_http_config(config_dir, port):
        print(f"http_config: Home Assistant will listen on 127.0.0.1:{port}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
