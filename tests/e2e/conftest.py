"""Fixtures of the end-to-end tests: the real model server, the tool server,
LiteLLM's proxy in front of the model server and the voice rig's processes.

The model server is `python -m llama_cpp.server` with Qwen2.5-Coder-0.5B,
started once per session on a free loopback port (or the one
HTA_MODEL_SERVER_URL names); Piper, PocketSphinx and wyoming-satellite too
(`dev.voice.parts`); LiteLLM's proxy (`dev.router`) once per session in front
of it, with a server that is down as its first deployment. A missing model
environment, router or voice rig FAILS the tests with the command that
installs it: they are never skipped silently.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Iterator
import os

import pytest

from dev import router as litellm_router
from dev.router import LiteLLMProxy
from dev.tool_server import DemoToolServer
from dev.voice.parts import VoiceParts, missing as missing_voice_parts

from .harness import ENV_URL, ModelServer, fixed_date_time_prompt


@pytest.fixture(scope="session")
def _model_servers() -> Iterator[dict[str, ModelServer]]:
    """Holds the session's model server; stops it at the end."""
    holder: dict[str, ModelServer] = {}
    yield holder
    for server in holder.values():
        server.stop()


@pytest.fixture
def model_server(
    socket_enabled: None, _model_servers: dict[str, ModelServer]
) -> ModelServer:
    """The real model server (started on first use)."""
    if "qwen" not in _model_servers:
        if not os.environ.get(ENV_URL) and (why := ModelServer.missing()):
            pytest.fail(why, pytrace=False)
        try:
            _model_servers["qwen"] = ModelServer.from_env_or_start()
        except RuntimeError as err:
            pytest.fail(str(err), pytrace=False)
    return _model_servers["qwen"]


@pytest.fixture(scope="session")
def _routers() -> Iterator[list[LiteLLMProxy]]:
    """Holds the session's LiteLLM proxy; stops it at the end."""
    holder: list[LiteLLMProxy] = []
    yield holder
    for proxy in holder:
        proxy.stop()


def start_router(model_server: ModelServer) -> LiteLLMProxy:
    """LiteLLM's proxy in front of `model_server`, a server that is down
    first; a missing install FAILS with the command that makes it."""
    if why := litellm_router.missing():
        pytest.fail(why, pytrace=False)
    try:
        return LiteLLMProxy.in_front_of(model_server.url)
    except RuntimeError as err:
        pytest.fail(str(err), pytrace=False)


@pytest.fixture
def router(model_server: ModelServer, _routers: list[LiteLLMProxy]) -> LiteLLMProxy:
    """The session's LiteLLM proxy (started on first use), its attempts so
    far forgotten."""
    if not _routers:
        _routers.append(start_router(model_server))
    _routers[0].clear_attempts()
    return _routers[0]


@pytest.fixture
def fresh_router(model_server: ModelServer) -> Iterator[LiteLLMProxy]:
    """A LiteLLM proxy of the test's own: its server that is down has not
    failed yet, so the first request meets it first."""
    proxy = start_router(model_server)
    yield proxy
    proxy.stop()


@pytest.fixture(autouse=True)
def _fixed_prompt_time() -> Iterator[None]:
    """The same prompt on every run, so temperature 0 gives the same answer."""
    with fixed_date_time_prompt():
        yield


@pytest.fixture
async def tool_server(socket_enabled: None) -> AsyncGenerator[DemoToolServer]:
    """The demo tool server on a free loopback port."""
    async with DemoToolServer() as server:
        yield server


@pytest.fixture(scope="session")
def _voice_parts() -> Iterator[list[VoiceParts]]:
    """Holds the session's voice rig processes; stops them at the end."""
    holder: list[VoiceParts] = []
    yield holder
    for parts in holder:
        parts.stop()


@pytest.fixture
def voice_parts(socket_enabled: None, _voice_parts: list[VoiceParts]) -> VoiceParts:
    """Piper, PocketSphinx and wyoming-satellite (started on first use); a
    missing install FAILS with the command that makes it."""
    if not _voice_parts:
        if why := missing_voice_parts():
            pytest.fail(why, pytrace=False)
        parts = VoiceParts()
        try:
            parts.start()
        except RuntimeError as err:
            pytest.fail(str(err), pytrace=False)
        _voice_parts.append(parts)
    return _voice_parts[0]
