"""`scripts/voice` beside a running demo (`dev/voice/beside_demo.py`): its
Home Assistant on a free port, the demo's model and tool servers when they
run, a failure that names what failed. Without the audio stack."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
import socket

from homeassistant.core import HomeAssistant
import pytest

from dev.tool_server import DemoToolServer
from dev.voice.beside_demo import (
    DEMO_HA_PORT,
    RigServices,
    rig_http_config,
    rig_services,
)
from tests.e2e.harness import server_answers
from tests.e2e.satellite import async_set_up_components

from .servers import FakeLLMServer


@pytest.fixture
def demo_ha_port() -> Iterator[int]:
    """A port something listens on, as the demo's Home Assistant on 8123."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.fixture
async def demo_tools(socket_enabled: None) -> AsyncIterator[DemoToolServer]:
    """The demo's tool server."""
    server = DemoToolServer()
    await server.start()
    yield server
    await server.stop()


async def services(env: dict[str, str]) -> RigServices:
    """What the rig would use (its checks block: off the loop the servers
    answer on)."""
    return await asyncio.to_thread(rig_services, env, server_answers)


def port_of(url: str) -> str:
    return url.rsplit(":", 1)[1].split("/", 1)[0]


async def test_beside_the_demo_the_rig_asks_its_model_and_tool_servers(
    llm_server: FakeLLMServer, demo_tools: DemoToolServer, demo_ha_port: int
) -> None:
    """With the demo running, the rig uses its model server (no second model
    on the CPU) and its tool server (the same shopping list), and says so,
    and that its own Home Assistant is on a free port."""
    used = await services(
        {
            "HTA_DEMO_MODEL_PORT": port_of(llm_server.base_url),
            "HTA_DEMO_TOOLS_PORT": str(demo_tools.port),
            "HTA_DEMO_HA_PORT": str(demo_ha_port),
        }
    )

    assert used.model_url == llm_server.base_url
    assert used.tools_url == demo_tools.url
    assert used.note is not None
    assert llm_server.base_url in used.note
    assert demo_tools.url in used.note
    assert "free port" in used.note


async def test_a_model_server_named_in_the_environment_wins(
    llm_server: FakeLLMServer, demo_ha_port: int
) -> None:
    """HTA_MODEL_SERVER_URL is used even beside the demo's model server."""
    used = await services(
        {
            "HTA_MODEL_SERVER_URL": "http://127.0.0.1:1/v1",
            "HTA_DEMO_MODEL_PORT": port_of(llm_server.base_url),
            "HTA_DEMO_TOOLS_PORT": str(demo_ha_port + 1),
        }
    )

    assert used.model_url is None  # HTA_MODEL_SERVER_URL's (`ModelServer`)


async def test_without_the_demo_the_rig_starts_its_own(socket_enabled: None) -> None:
    """Nothing on the demo's ports: the rig starts its servers, nothing said."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = str(sock.getsockname()[1])
    used = await services(
        {
            "HTA_DEMO_MODEL_PORT": free,
            "HTA_DEMO_TOOLS_PORT": free,
            "HTA_DEMO_HA_PORT": free,
        }
    )

    assert used == RigServices(None, None, None)


async def test_another_home_assistant_on_8123_is_named(
    socket_enabled: None, demo_ha_port: int
) -> None:
    """Only a Home Assistant on the port (not the demo's servers): the rig
    says its own runs on a free port."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free = str(sock.getsockname()[1])
    used = await services(
        {
            "HTA_DEMO_MODEL_PORT": free,
            "HTA_DEMO_TOOLS_PORT": free,
            "HTA_DEMO_HA_PORT": str(demo_ha_port),
        }
    )

    assert used.note is not None
    assert f"127.0.0.1:{demo_ha_port}" in used.note
    assert "free port" in used.note


async def test_the_rig_names_a_component_that_cannot_be_set_up(
    hass: HomeAssistant, socket_enabled: None
) -> None:
    """A component of the rig's pipeline that fails (here HTTP with a port
    that is no port; beside the demo it was 8123, taken) is named, not a
    bare `AssertionError`."""
    with pytest.raises(RuntimeError, match="could not set up `http`"):
        await async_set_up_components(hass, {"http": {"server_port": "eighty"}})


async def test_the_rig_sets_up_on_a_free_port(
    hass: HomeAssistant, socket_enabled: None
) -> None:
    """The rig's own settings: HTTP on a free loopback port, never 8123."""
    config = rig_http_config()
    assert config["http"]["server_port"] != DEMO_HA_PORT
    await async_set_up_components(hass, config)
