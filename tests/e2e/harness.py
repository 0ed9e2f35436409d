"""Drive real Home Assistant turns against a real (or scripted) model server.

Used by the end-to-end tests and by the benchmarks (`bench/`), so both set up
the agents exactly the same way: our agent (`http_tools_agent`) and, as the
structured-calls-only baseline, Home Assistant core's `llama_cpp` agent using
our HTTP tools LLM API.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
import os
from pathlib import Path
import subprocess
import tempfile
import time
from typing import Any
import urllib.error
import urllib.request

from homeassistant.const import CONF_LLM_HASS_API, CONF_PROMPT
from homeassistant.core import HomeAssistant
from homeassistant.helpers import llm

from custom_components.http_tools_agent.const import (
    CONF_STREAM,
    CONF_TEMPERATURE,
    CONF_TOOLS,
)
from dev.loopback import free_port
from tests.kit import ENTRY_UNIQUE_ID, add_agent, core_llama_cpp_entry, server_entry

ROOT = Path(__file__).resolve().parents[2]
MODEL_VENV = Path(os.environ.get("HTA_MODEL_VENV", ROOT / ".venv-model"))
MODELS_DIR = Path(os.environ.get("HTA_MODELS_DIR", ROOT / ".models"))
QWEN_FILE = "qwen2.5-coder-0.5b-instruct.gguf"
QWEN_ALIAS = "qwen2.5-coder-0.5b"
ENV_URL = "HTA_MODEL_SERVER_URL"
INSTALL_HINT = (
    "The real model environment is missing: run `scripts/model_server "
    "--install-only` (on this machine: `../shared/toolchain/py314 "
    "scripts/model_server --install-only`; the first run builds "
    "llama-cpp-python, ~11 min on 2 cores) or point "
    f"{ENV_URL} at a running OpenAI-compatible server with the Qwen model "
    "(e.g. `scripts/model_server --detach` prints http://127.0.0.1:8080/v1)."
)
# HA puts the time of day (to the second) in the system prompt; a fixed one
# makes a turn's prompt, hence a temperature-0 answer, reproducible.
FIXED_DATE_TIME_PROMPT = "Current time is 12:00:00. Today's date is 2026-11-30.\n"


@contextmanager
def fixed_date_time_prompt() -> Iterator[None]:
    """Make Home Assistant's date/time prompt line constant."""
    original = llm.DATE_TIME_PROMPT
    llm.DATE_TIME_PROMPT = FIXED_DATE_TIME_PROMPT
    try:
        yield
    finally:
        llm.DATE_TIME_PROMPT = original


def server_answers(base_url: str, timeout: float = 2.0) -> bool:
    """Whether an OpenAI-compatible server lists its models."""
    try:
        url = f"{base_url}/models"
        with urllib.request.urlopen(url, timeout=timeout) as reply:  # noqa: S310
            return bool(reply.status == 200)
    except OSError, urllib.error.URLError:
        return False


@dataclass
class ModelServer:
    """`python -m llama_cpp.server` with the Qwen model, on loopback."""

    url: str
    process: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @classmethod
    def missing(cls) -> str | None:
        """Say what is missing to start a server here, or None."""
        python = MODEL_VENV / "bin" / "python"
        if not python.exists():
            return f"{python} does not exist. {INSTALL_HINT}"
        if not (MODELS_DIR / QWEN_FILE).is_file():
            return f"{MODELS_DIR / QWEN_FILE} does not exist. {INSTALL_HINT}"
        return None

    @classmethod
    def start(cls, port: int | None = None, timeout: float = 180.0) -> ModelServer:
        """Start a server on a free port and wait until it answers."""
        if (why := cls.missing()) is not None:
            raise RuntimeError(why)
        port = port or free_port()
        log = Path(tempfile.gettempdir()) / f"hta-model-server-{port}.log"
        threads = os.environ.get("HTA_MODEL_THREADS", str(os.cpu_count() or 2))
        with log.open("wb") as out:
            process = subprocess.Popen(  # noqa: S603 (fixed arguments)
                [
                    str(MODEL_VENV / "bin" / "python"),
                    "-m",
                    "llama_cpp.server",
                    "--model",
                    str(MODELS_DIR / QWEN_FILE),
                    "--model_alias",
                    QWEN_ALIAS,
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--n_ctx",
                    "4096",
                    "--n_threads",
                    threads,
                    "--seed",
                    "1",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        server = cls(f"http://127.0.0.1:{port}/v1", process, log)
        deadline = time.monotonic() + timeout
        while not server_answers(server.url):
            if process.poll() is not None or time.monotonic() > deadline:
                server.stop()
                tail = log.read_text(errors="replace")[-2000:]
                raise RuntimeError(
                    f"llama_cpp.server did not come up on {server.url}:\n{tail}"
                )
            time.sleep(0.5)
        return server

    @classmethod
    def from_env_or_start(cls) -> ModelServer:
        """Reuse HTA_MODEL_SERVER_URL when set, else start one."""
        if url := os.environ.get(ENV_URL):
            url = url.rstrip("/")
            if not server_answers(url, timeout=10):
                raise RuntimeError(f"{ENV_URL}={url} does not answer /models")
            return cls(url)
        return cls.start()

    def stop(self) -> None:
        """Stop the server if we started it."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


async def setup_ours(
    hass: HomeAssistant,
    base_url: str,
    tools: list[dict[str, Any]],
    *,
    model: str = QWEN_ALIAS,
    stream: bool = True,
    temperature: float = 0.0,
    options: dict[str, Any] | None = None,
    agent: dict[str, Any] | None = None,
    unique_id: str = ENTRY_UNIQUE_ID,
) -> str:
    """Add and set up our entry + agent; return the agent's entity id
    (another `unique_id` for a second entry in the same Home Assistant)."""
    entry = server_entry(
        base_url,
        options={CONF_TOOLS: tools, **(options or {})},
        model=model,
        agent={CONF_STREAM: stream, CONF_TEMPERATURE: temperature, **(agent or {})},
        unique_id=unique_id,
    )
    return await add_agent(hass, entry)


async def setup_llama_cpp(
    hass: HomeAssistant,
    base_url: str,
    *,
    model: str = QWEN_ALIAS,
    stream: bool = True,
    temperature: float = 0.0,
    apis: list[str] | None = None,
) -> str:
    """Add HA core's llama_cpp agent using our entry's HTTP tools API (or
    `apis`), with the settings of ours (prompt, temperature, max tokens);
    return its entity.

    Call after `setup_ours` (the API is registered by our entry).
    """
    entry = core_llama_cpp_entry(
        base_url,
        model=model,
        streaming=stream,
        agent={
            CONF_PROMPT: llm.DEFAULT_INSTRUCTIONS_PROMPT,
            "recommended": False,
            "temperature": temperature,
            "max_tokens": 1024,
            "top_p": 1.0,
            **({CONF_LLM_HASS_API: apis} if apis else {}),
        },
    )
    return await add_agent(hass, entry)
