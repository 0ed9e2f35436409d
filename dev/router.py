"""LiteLLM's proxy on loopback in front of model servers: the router of the
e2e tests (`tests/e2e/test_router.py`) and of `python -m dev.router`.

`LiteLLMProxy.start(backends)` writes a config: one model name, one
deployment per backend (`openai/<model>` at its `api_base`), tried in the
order given (LiteLLM's `order`), with retries so that a deployment that
fails is skipped for the next one and then left alone for a minute (its
cooldown). It starts `litellm` from `.venv-router` (`scripts/install_router`)
on a free loopback port with a generated master key, waits until the proxy
lists its models, and `stop()` ends it. `LiteLLMProxy.in_front_of(url)` puts a
server that is down first: a port held bound but not listening, so every
connection to it is refused and nothing else can take it meanwhile.

Every attempt on a deployment is noted (`router_attempts.py`, LiteLLM's
success and failure callbacks): `attempts()` tells which server was tried
and which one answered.

Offline and deterministic: the proxy runs with a clean environment (no
DATABASE_URL or provider keys of the developer's), in a folder of its own
(`LITELLM_MODE=PRODUCTION`: no `.env` is read), and with every fetch LiteLLM
makes from the network switched to its bundled copy (`OFFLINE_ENV`); its
telemetry is off by default and vetoed here too.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field
import json
import os
from pathlib import Path
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

from . import router_attempts
from .loopback import free_port

ROOT = Path(__file__).resolve().parents[1]
ROUTER_VENV = Path(os.environ.get("HTA_ROUTER_VENV", ROOT / ".venv-router"))
REQUIREMENTS = ROOT / "requirements_router.txt"
# The model name the proxy serves (the model server's alias: its size is in it).
MODEL = "qwen2.5-coder-0.5b"
INSTALL_HINT = (
    "LiteLLM's proxy is missing: run `scripts/install_router` (on this "
    "machine: `../shared/toolchain/py314 scripts/install_router`; ~40 s)."
)
# What LiteLLM would fetch from the network, each from its bundled copy:
# the model cost map (at every start, three tries with back-off), the
# Anthropic beta headers, the policy templates, the auto-router presets and
# the blog posts of its admin UI; telemetry (off unless enabled) vetoed;
# Hugging Face tokenizers never downloaded.
OFFLINE_ENV = {
    "LITELLM_MODE": "PRODUCTION",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS": "True",
    "LITELLM_LOCAL_POLICY_TEMPLATES": "True",
    "LITELLM_LOCAL_AUTOROUTER_PRESETS": "True",
    "LITELLM_LOCAL_BLOG_POSTS": "True",
    "LITELLM_TELEMETRY_DISABLED": "True",
    "DISABLE_ADMIN_UI": "True",
    "HF_HUB_OFFLINE": "1",
}
# The environment variables the proxy keeps from ours.
_KEPT_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE")


def missing() -> str | None:
    """Say what is missing to start the proxy here, or None."""
    litellm = ROUTER_VENV / "bin" / "litellm"
    if not litellm.exists():
        return f"{litellm} does not exist. {INSTALL_HINT}"
    stamp = ROUTER_VENV / f".installed-{REQUIREMENTS.name}"
    if not stamp.is_file() or stamp.read_bytes() != REQUIREMENTS.read_bytes():
        return (
            f"{ROUTER_VENV} was not installed from {REQUIREMENTS.name}. {INSTALL_HINT}"
        )
    return None


def answers(url: str, key: str, timeout: float = 2.0) -> bool:
    """Whether the proxy lists its models for `key`."""
    request = urllib.request.Request(  # noqa: S310 (http on loopback)
        f"{url}/models", headers={"Authorization": f"Bearer {key}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:  # noqa: S310
            return bool(reply.status == 200)
    except OSError, urllib.error.URLError:
        return False


class RefusedPort:
    """A loopback port held bound but not listening: connections are refused."""

    def __init__(self) -> None:
        """Bind it."""
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]

    @property
    def url(self) -> str:
        """An OpenAI-compatible base URL on it."""
        return f"http://127.0.0.1:{self.port}/v1"

    def close(self) -> None:
        """Let the port go."""
        self._socket.close()


@dataclass(frozen=True, slots=True)
class Attempt:
    """One call the proxy made on a deployment."""

    outcome: str  # "success" or "failure"
    api_base: str
    stream: bool


def proxy_config(model: str, backends: Sequence[str], key: str) -> dict[str, object]:
    """LiteLLM's config: `model` on each backend in turn, the first first."""
    return {
        "model_list": [
            {
                "model_name": model,
                "litellm_params": {
                    "model": f"openai/{model}",
                    "api_base": backend,
                    "api_key": "sk-no-key-required",
                    # The lowest order that is not cooling down is used.
                    "order": number,
                },
            }
            for number, backend in enumerate(backends, start=1)
        ],
        "router_settings": {
            # A failed attempt is retried at once on the next deployment...
            "num_retries": 2,
            "retry_after": 0,
            # ...and the one that failed is skipped for a minute.
            "allowed_fails": 0,
            "cooldown_time": 60,
        },
        "litellm_settings": {
            "request_timeout": 300,
            "success_callback": ["router_attempts.record_success"],
            "failure_callback": ["router_attempts.record_failure"],
        },
        "general_settings": {"master_key": key},
    }


@dataclass
class LiteLLMProxy:
    """`litellm --config …` on 127.0.0.1, serving `model` from `backends`."""

    url: str
    key: str
    model: str
    backends: list[str]
    folder: Path
    process: subprocess.Popen[bytes] | None = None
    refused: RefusedPort | None = field(default=None, repr=False)

    @property
    def log(self) -> Path:
        """What the proxy printed."""
        return self.folder / "litellm.log"

    @property
    def attempts_file(self) -> Path:
        """Where its callbacks note the attempts."""
        return self.folder / "attempts.jsonl"

    @classmethod
    def start(
        cls,
        backends: Sequence[str],
        *,
        model: str = MODEL,
        port: int | None = None,
        key: str | None = None,
        timeout: float = 120.0,
        refused: RefusedPort | None = None,
    ) -> LiteLLMProxy:
        """Start the proxy on a free port and wait until it lists its models."""
        if (why := missing()) is not None:
            raise RuntimeError(why)
        port = port or free_port()
        key = key or f"sk-hta-{secrets.token_hex(12)}"
        folder = Path(tempfile.mkdtemp(prefix="hta-router-"))
        config = folder / "config.yaml"
        # JSON is YAML: no YAML writer needed here.
        config.write_text(json.dumps(proxy_config(model, backends, key), indent=2))
        shutil.copy(Path(router_attempts.__file__), folder / "router_attempts.py")
        proxy = cls(
            f"http://127.0.0.1:{port}/v1",
            key,
            model,
            list(backends),
            folder,
            refused=refused,
        )
        env = {name: os.environ[name] for name in _KEPT_ENV if name in os.environ}
        env |= OFFLINE_ENV | {router_attempts.ATTEMPTS_ENV: str(proxy.attempts_file)}
        with proxy.log.open("wb") as out:
            proxy.process = subprocess.Popen(  # noqa: S603 (fixed arguments)
                [
                    str(ROUTER_VENV / "bin" / "litellm"),
                    "--config",
                    str(config),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                ],
                cwd=folder,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while not answers(proxy.url, key):
            if proxy.process.poll() is not None or time.monotonic() > deadline:
                tail = proxy.log.read_text(errors="replace")[-3000:]
                proxy.stop()
                raise RuntimeError(
                    f"LiteLLM's proxy did not come up on {proxy.url}:\n{tail}"
                )
            time.sleep(0.25)
        return proxy

    @classmethod
    def in_front_of(
        cls, server_url: str, *, model: str = MODEL, timeout: float = 120.0
    ) -> LiteLLMProxy:
        """The proxy with a server that is down first and `server_url` second."""
        refused = RefusedPort()
        try:
            return cls.start(
                [refused.url, server_url], model=model, timeout=timeout, refused=refused
            )
        except BaseException:
            refused.close()
            raise

    @property
    def down_url(self) -> str | None:
        """The backend that refuses connections (`in_front_of`), if any."""
        return self.refused.url if self.refused else None

    def attempts(self) -> list[Attempt]:
        """The attempts on deployments so far, in order."""
        if not self.attempts_file.exists():
            return []
        return [
            Attempt(**json.loads(line))
            for line in self.attempts_file.read_text().splitlines()
            if line.strip()
        ]

    def clear_attempts(self) -> None:
        """Forget the attempts so far."""
        self.attempts_file.unlink(missing_ok=True)

    def stop(self) -> None:
        """Stop the proxy (and anything it started) and remove its folder."""
        if self.process is not None and self.process.poll() is None:
            # Its own session: the group is the proxy and its children.
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self.refused is not None:
            self.refused.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> None:
    """Run the proxy in front of servers until Ctrl-C."""
    parser = argparse.ArgumentParser(
        prog="python -m dev.router", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("backends", nargs="+", help="base URLs, tried in this order")
    parser.add_argument("--model", default=MODEL, help="the model name served")
    parser.add_argument("--port", type=int, default=4000)
    parser.add_argument("--key", help="the master key (default: generated)")
    parser.add_argument(
        "--down-first",
        action="store_true",
        help="put a server that refuses connections before them",
    )
    args = parser.parse_args(argv)
    backends = list(args.backends)
    refused = RefusedPort() if args.down_first else None
    if refused is not None:
        backends.insert(0, refused.url)
    proxy = LiteLLMProxy.start(
        backends, model=args.model, port=args.port, key=args.key, refused=refused
    )
    print(f"{proxy.url}  key {proxy.key}  model {proxy.model}")
    print(f"log: {proxy.log}; attempts: {proxy.attempts_file}")
    try:
        while proxy.process is not None and proxy.process.poll() is None:
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        proxy.stop()


if __name__ == "__main__":
    main()
