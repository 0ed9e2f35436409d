"""What the voice rig uses when `scripts/demo` runs beside it.

The demo holds 127.0.0.1:8123 (its Home Assistant), its model server
(:8080, `HTA_DEMO_MODEL_PORT`) and its tool server (:8091,
`HTA_DEMO_TOOLS_PORT`). The rig runs a Home Assistant of its own, in its
process; on Home Assistant's default port it failed beside the demo ("Failed
to create HTTP server at port 8123 ... [Errno 98]", then a bare
`AssertionError`). So its Home Assistant listens on a free port, and beside
the demo it asks the demo's model server and tool server instead of starting
its own: the same model (not a second one on the CPU) and the same shopping
list. Nothing here needs the audio stack.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
import socket
from typing import Any

from dev.loopback import free_port

DEMO_HA_PORT = 8123
DEMO_MODEL_PORT = 8080
DEMO_TOOLS_PORT = 8091
ENV_MODEL_URL = "HTA_MODEL_SERVER_URL"


def listens(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:`port`."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@dataclass(frozen=True, slots=True)
class RigServices:
    """The servers the rig's Home Assistant uses."""

    # The demo's model server's `/v1` URL; None: HTA_MODEL_SERVER_URL's,
    # else one the rig starts.
    model_url: str | None
    # A running demo tool server's URL; None: the rig starts its own.
    tools_url: str | None
    # What the rig says about them (None: nothing to say).
    note: str | None


def rig_services(
    env: Mapping[str, str],
    model_answers: Callable[[str], bool],
    port_listens: Callable[[int], bool] = listens,
) -> RigServices:
    """The demo's model and tool servers when they run (`env` may name
    other ports), else the rig's own; `HTA_MODEL_SERVER_URL` wins.
    `model_answers(url)`: whether a model server lists its models there."""
    model_url = None
    demo_model = (
        f"http://127.0.0.1:{env.get('HTA_DEMO_MODEL_PORT') or DEMO_MODEL_PORT}/v1"
    )
    tools_port = int(env.get("HTA_DEMO_TOOLS_PORT") or DEMO_TOOLS_PORT)
    ha_port = int(env.get("HTA_DEMO_HA_PORT") or DEMO_HA_PORT)
    used: list[str] = []
    if not env.get(ENV_MODEL_URL) and model_answers(demo_model):
        model_url = demo_model
        used.append(f"its model server ({demo_model})")
    tools_url = None
    if port_listens(tools_port):
        tools_url = f"http://127.0.0.1:{tools_port}"
        used.append(f"its tool server ({tools_url}: the same shopping list)")
    if not used:
        note = None
        if port_listens(ha_port):
            note = (
                f"something listens on 127.0.0.1:{ha_port} (the demo's Home "
                "Assistant?); the rig runs its own Home Assistant on a free port"
            )
    else:
        note = (
            "the demo runs: the rig uses "
            + " and ".join(used)
            + ", with a Home Assistant of its own on a free port (the demo's "
            "lights and switches are not in it; type in the demo's Assist "
            "dialog for those)"
        )
    return RigServices(model_url, tools_url, note)


def rig_http_config() -> dict[str, Any]:
    """The rig's Home Assistant's HTTP settings: loopback, a free port (the
    default, 8123, is the demo's)."""
    return {"http": {"server_host": "127.0.0.1", "server_port": free_port()}}
