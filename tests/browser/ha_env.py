"""Real Home Assistant + scripted servers for the browser test.

Run by `scripts/browser_test` (inside the Python >= 3.14.2 toolchain):

    python -m tests.browser.ha_env --port 8124 --state STATE.json --workdir DIR

It starts, on 127.0.0.1:
- a scripted OpenAI-compatible LLM server (`tests/servers.py`): a user turn
  about the weather gets the real llama-server capture of Qwen2.5-Coder's bare
  JSON call (`{"name": "get_weather", "arguments": {"city": "Rome"}}`), a turn
  that already holds the tool result gets a streamed text answer built from it;
- a tool server (`ToolEndpoint`: `GET /weather/<city>` answers `Rome: ☀️ +14°C`);
- a control server: `GET /requests` reports what both servers received;
- a FastAPI service serving its own `/openapi.json` (`dev/openapi_service.py`)
  for the OpenAPI import;
- Home Assistant the `scripts/develop` way (`hass --config DIR` with the repo
  on PYTHONPATH, `config/configuration.yaml` copied to a fresh config dir,
  its HTTP settings seeded with the port), then completes onboarding through
  its API.

When everything is ready it writes STATE.json (URLs, user, password, token)
and runs until SIGTERM/SIGINT, then stops Home Assistant cleanly.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from dataclasses import dataclass, field
import json
import os
from pathlib import Path
import signal
import socket
import time
from typing import Any

import aiohttp
from aiohttp import web

from custom_components.http_tools_agent.small.answer import ANSWER_NUDGE
from dev.http_config import seed_http_config
from dev.loopback import LoopbackServer
from dev.openapi_service import LightsService
from tests.servers import (
    FakeLLMServer,
    ToolEndpoint,
    completion,
    text_stream,
    transcript,
)

ROOT = Path(__file__).resolve().parents[2]

# Onboarding's core_config step adds these integrations on its own; their
# requirements are not installed (nothing lands in the project venv) and their
# entries are removed, so the Integrations page shows only what the test adds.
ONBOARDING_PACKAGES = "gTTS,radios,pycountry,PyMetno"
USERNAME = "admin"
PASSWORD = "browser-test-password"
WEATHER_TRANSCRIPT = "llama-server__weather_stream"
# The FastAPI service the OpenAPI import reads wants the key the browser
# test stores as the secret `bell_key`.
LIGHTS_KEY = "bell-secret-4711"
# The tool server's and the FastAPI service's ports, when free: their URLs
# show in the documentation's pictures (docs/images), which then stay the
# same from run to run.
TOOLS_PORT = 18126
LIGHTS_PORT = 18127


def port_if_free(port: int) -> int:
    """`port` when nothing listens on it, else 0 (a free one). A port
    whose last connections are still closing (TIME_WAIT, after the last run)
    is free: the servers bind with SO_REUSEADDR."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return 0
    return port


class ScriptedLLM(FakeLLMServer):
    """Answers by what the conversation holds, not by a fixed queue.

    So a retry, or a second question, still gets a sensible answer.
    """

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body: dict[str, Any] = await request.json()
        messages: list[dict[str, Any]] = body.get("messages", [])
        last = messages[-1] if messages else {}
        if not body.get("stream"):
            # The agent's warm-up (warm_up.py): one token, not streamed.
            self.add(completion("Hi"))
        elif last.get("role") == "tool":
            # The request after a result ends it with the agent's request
            # to answer (ANSWER_NUDGE): not part of the result.
            content = str(last.get("content", ""))
            if content.endswith(ANSWER_NUDGE):
                content = content.rpartition("\n\n")[0]
            result = content.strip()
            self.add(text_stream("Right now in ", result, ". Enjoy Rome!"))
        elif "weather" in json.dumps(last).lower():
            self.add(transcript(WEATHER_TRANSCRIPT))
        else:
            self.add(text_stream("I can tell you the weather in any city."))
        return await super()._chat(request)


def write_config(config_dir: Path, port: int) -> None:
    """Copy config/configuration.yaml (the scripts/develop config), new port."""
    config_dir.mkdir(parents=True, exist_ok=True)
    text = (ROOT / "config" / "configuration.yaml").read_text(encoding="utf-8")
    (config_dir / "configuration.yaml").write_text(text, encoding="utf-8")
    # Listen on 127.0.0.1:port, as scripts/develop sets it up.
    seed_http_config(config_dir, port)


def hass_command(config_dir: Path) -> list[str]:
    """Return the command that starts Home Assistant from the project venv."""
    venv = Path(os.environ.get("HTA_VENV", ROOT / ".venv"))
    return [
        str(venv / "bin" / "hass"),
        "--config",
        str(config_dir),
        "--skip-pip-packages",
        ONBOARDING_PACKAGES,
    ]


async def wait_for_http(url: str, proc: asyncio.subprocess.Process) -> None:
    """Wait until Home Assistant answers (first start installs the frontend)."""
    deadline = time.monotonic() + 600
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            if proc.returncode is not None:
                raise SystemExit("ha_env: Home Assistant exited (see hass.log)")
            with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                async with session.get(
                    f"{url}/api/onboarding", timeout=aiohttp.ClientTimeout(total=5)
                ) as resp:
                    if resp.status == 200:
                        return
            await asyncio.sleep(1)
    raise SystemExit("ha_env: Home Assistant did not answer within 600 s")


async def onboard(url: str) -> str:
    """Complete onboarding through the API; return an access token."""
    client_id = f"{url}/"
    async with aiohttp.ClientSession() as session:
        async with session.post(
            f"{url}/api/onboarding/users",
            json={
                "client_id": client_id,
                "name": "Admin",
                "username": USERNAME,
                "password": PASSWORD,
                "language": "en",
            },
        ) as resp:
            resp.raise_for_status()
            auth_code = (await resp.json())["auth_code"]
        async with session.post(
            f"{url}/auth/token",
            data={
                "grant_type": "authorization_code",
                "code": auth_code,
                "client_id": client_id,
            },
        ) as resp:
            resp.raise_for_status()
            token: str = (await resp.json())["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        steps: list[tuple[str, dict[str, Any]]] = [
            ("core_config", {}),
            ("analytics", {}),
            ("integration", {"client_id": client_id, "redirect_uri": client_id}),
        ]
        for step, payload in steps:
            async with session.post(
                f"{url}/api/onboarding/{step}", json=payload, headers=headers
            ) as resp:
                if resp.status not in (200, 403):  # 403: step already done
                    raise SystemExit(
                        f"ha_env: onboarding step {step}: HTTP {resp.status} "
                        f"{await resp.text()}"
                    )
        async with session.get(f"{url}/api/onboarding") as resp:
            pending = [s["step"] for s in await resp.json() if not s["done"]]
        if pending:
            raise SystemExit(f"ha_env: onboarding steps not done: {pending}")
    return token


async def remove_onboarding_entries(url: str, token: str) -> list[str]:
    """Remove the entries onboarding created (see ONBOARDING_PACKAGES).

    Their flows run in the background: wait until none is in progress and no
    new entry appeared for a few seconds.
    """
    headers = {"Authorization": f"Bearer {token}"}
    removed: list[str] = []
    quiet_since = time.monotonic()
    deadline = time.monotonic() + 60
    async with aiohttp.ClientSession(headers=headers) as session:
        while time.monotonic() < deadline:
            async with session.get(f"{url}/api/config/config_entries/entry") as resp:
                resp.raise_for_status()
                entries = await resp.json()
            found = [e for e in entries if e["source"] == "onboarding"]
            for entry in found:
                async with session.delete(
                    f"{url}/api/config/config_entries/entry/{entry['entry_id']}"
                ) as resp:
                    resp.raise_for_status()
                removed.append(entry["domain"])
            if found:
                quiet_since = time.monotonic()
            elif time.monotonic() - quiet_since > 5:
                break
            await asyncio.sleep(1)
    return removed


@dataclass
class Control(LoopbackServer):
    """`GET /requests`: what the LLM and the tool server received."""

    llm: ScriptedLLM = field(default_factory=ScriptedLLM)
    tools: ToolEndpoint = field(default_factory=ToolEndpoint)

    async def _requests(self, _: web.Request) -> web.Response:
        return web.json_response(
            {
                "llm": self.llm.requests,
                "tools": [
                    {"method": r.method, "path": r.path, "query": r.query}
                    for r in self.tools.requests
                ],
            }
        )

    def routes(self, app: web.Application) -> None:
        """The one report."""
        app.router.add_get("/requests", self._requests)


async def main() -> None:
    """Start everything, write the state file, run until stopped."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8124)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--workdir", type=Path, required=True)
    args = parser.parse_args()

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)

    async with (
        ScriptedLLM() as llm,
        ToolEndpoint(port=port_if_free(TOOLS_PORT)) as tools,
        Control(llm=llm, tools=tools) as control,
        LightsService(api_key=LIGHTS_KEY, port=port_if_free(LIGHTS_PORT)) as lights,
    ):
        await run_home_assistant(args, stop, control, lights)


async def run_home_assistant(
    args: argparse.Namespace,
    stop: asyncio.Event,
    control: Control,
    lights: LightsService,
) -> None:
    """Start Home Assistant, onboard, write the state file, wait for `stop`."""
    config_dir = args.workdir / "config"
    write_config(config_dir, args.port)
    log = args.workdir / "hass.log"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (
        f":{env['PYTHONPATH']}" if env.get("PYTHONPATH") else ""
    )
    url = f"http://127.0.0.1:{args.port}"
    started = time.monotonic()
    with log.open("wb") as log_file:
        proc = await asyncio.create_subprocess_exec(
            *hass_command(config_dir),
            stdout=log_file,
            stderr=asyncio.subprocess.STDOUT,
            env=env,
            cwd=ROOT,
        )
    try:
        await wait_for_http(url, proc)
        print(
            f"ha_env: Home Assistant answers on {url} "
            f"after {time.monotonic() - started:.0f} s",
            flush=True,
        )
        token = await onboard(url)
        removed = await remove_onboarding_entries(url, token)
        print(f"ha_env: removed onboarding's entries: {removed}", flush=True)
        state = {
            "url": url,
            "username": USERNAME,
            "password": PASSWORD,
            "token": token,
            "llm_url": control.llm.base_url,
            "tools_url": control.tools.url,
            "control_url": control.url,
            "openapi_url": f"{lights.url}/openapi.json",
            "hass_log": str(log),
            "config_dir": str(config_dir),
        }
        tmp = args.state.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=2), encoding="utf-8")
        tmp.replace(args.state)
        print(f"ha_env: onboarded; state in {args.state}", flush=True)
        stopped = asyncio.create_task(stop.wait())
        exited = asyncio.create_task(proc.wait())
        await asyncio.wait({stopped, exited}, return_when=asyncio.FIRST_COMPLETED)
        stopped.cancel()
        if proc.returncode is not None:
            raise SystemExit(f"ha_env: Home Assistant exited ({proc.returncode})")
    finally:
        if proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 60)
            except TimeoutError:
                proc.kill()
                await proc.wait()


if __name__ == "__main__":
    asyncio.run(main())
