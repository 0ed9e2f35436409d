"""The demo as a newcomer meets it, driven by a program.

`scripts/demo` writes a config dir (`dev.demo_setup`), starts the demo tool
server and Home Assistant. This module does the same in a temporary config
dir, completes onboarding the way the browser's first page does (keeping
what onboarding adds, as a newcomer's Home Assistant has it), and asks
questions the way the Assist dialog does: `assist_pipeline/run` on the
preferred pipeline (text in, the intent stage only), or through
`POST /api/conversation/process`. A recording proxy (`bench.llm_proxy`)
between Home Assistant and the model server keeps every raw reply of the
model, so what the model really wrote is known for each answer.

    python -m dev.demo_trial --model-url http://127.0.0.1:8080/v1 \
        --out trial.jsonl "What's the weather in Rome?" "Add bread to the list."

Used by the README's end-to-end test (`tests/e2e/test_demo_readme.py`) and
to try new phrasings by hand. `--restart-ask` restarts Home Assistant and
asks its question at once, while the warm-up runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from dataclasses import asdict, dataclass, field
import json
import os
from pathlib import Path
import shutil
import sys
import tempfile
import time
from typing import Any

import aiohttp

from bench.llm_proxy import Exchange, RecordingProxy

from .demo_setup import AGENT_ENTITY
from .http_config import seed_http_config
from .loopback import free_port
from .tool_server import DemoToolServer

ROOT = Path(__file__).resolve().parents[1]
USERNAME = "newcomer"
PASSWORD = "demo-trial-password"  # noqa: S105 (a throwaway demo account)
# What onboarding installs that the project's venv lacks (Met, Radio
# Browser, Google Translate): skipped, as the browser test does; their
# entries fail to load, the rest of onboarding's house is as a user's.
ONBOARDING_PACKAGES = "gTTS,radios,pycountry,PyMetno"


@dataclass
class Answer:
    """One question and everything that happened for it."""

    question: str
    via: str
    seconds: float
    speech: str
    conversation_id: str | None
    continue_conversation: bool
    # The chat log as the pipeline streamed it: every delta, in order.
    deltas: list[dict[str, Any]] = field(default_factory=list)
    # The calls and results the chat log showed.
    calls: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    # What reached the demo tool server (`METHOD /path?query body`).
    tool_requests: list[str] = field(default_factory=list)
    # Each chat completion of the turn: what the model wrote, raw.
    model_replies: list[dict[str, Any]] = field(default_factory=list)
    # The same as replayable captures (`capture`), with `--captures`.
    captures: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    # Home Assistant answered it itself (the pipeline prefers local intents
    # and one matched): the agent was not asked.
    processed_locally: bool = False
    # When it was asked, on the clock of the proxy's exchanges
    # (`time.perf_counter`).
    asked_at: float = 0.0

    def as_json(self) -> dict[str, Any]:
        """For a JSON line."""
        return asdict(self)


def capture(exchange: Exchange, question: str) -> dict[str, Any]:
    """One exchange as a replayable capture (`tests/fixtures/demo/`): the
    request, and the answer byte for byte."""
    return {
        "server": "llama-cpp-python",
        "model": exchange.body.get("model"),
        "question": question,
        "request": exchange.body,
        "status": exchange.status,
        "content_type": exchange.content_type,
        "body": exchange.answer.decode("utf-8", "replace"),
    }


def _reply(exchange: Exchange) -> dict[str, Any]:
    body = exchange.body
    return {
        "stream": bool(body.get("stream")),
        "max_tokens": body.get("max_tokens"),
        "tool_choice": body.get("tool_choice"),
        "last_message": (body.get("messages") or [{}])[-1],
        "text": exchange.text,
        "seconds": None
        if exchange.ended is None
        else round(exchange.ended - exchange.sent, 2),
    }


class DemoHass:
    """The demo's Home Assistant in a process of its own, on loopback."""

    def __init__(self, model_url: str, workdir: Path) -> None:
        """Point the demo at the model server `model_url` (ends in /v1)."""
        self.model_url = model_url.rstrip("/")
        self.workdir = workdir
        self.config_dir = workdir / "config"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proxy = RecordingProxy(target=self.model_url)
        self.tools = DemoToolServer()
        self.token = ""
        self._proc: asyncio.subprocess.Process | None = None
        self._session: aiohttp.ClientSession | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._next_id = 1
        self.started_at = 0.0

    async def __aenter__(self) -> DemoHass:
        """Start the servers, write the config, start and onboard HA."""
        await self.proxy.start()
        await self.tools.start()
        await self._write_config()
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        """Stop everything."""
        await self.stop()
        await self.tools.stop()
        await self.proxy.stop()

    async def _write_config(self) -> None:
        """What `scripts/demo` writes: `configuration.yaml`, the HTTP
        settings, and `dev.demo_setup` run as the script runs it (a process
        of its own: its registries and storage are Home Assistant's own)."""
        self.config_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / "config" / "configuration.yaml", self.config_dir)
        seed_http_config(self.config_dir, self.port)
        setup = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "dev.demo_setup",
            str(self.config_dir),
            self.proxy.base_url,
            self.tools.url,
            cwd=ROOT,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await setup.communicate()
        if setup.returncode:
            raise RuntimeError(f"dev.demo_setup failed: {output.decode()}")

    async def start(self) -> None:
        """Start Home Assistant and wait until the agent can be asked."""
        env = dict(os.environ)
        env["PYTHONPATH"] = str(ROOT) + (
            f":{env['PYTHONPATH']}" if env.get("PYTHONPATH") else ""
        )
        venv = Path(os.environ.get("HTA_VENV", ROOT / ".venv"))
        log = (self.workdir / "hass.log").open("ab")
        self.started_at = time.monotonic()
        self._proc = await asyncio.create_subprocess_exec(
            str(venv / "bin" / "hass"),
            "--config",
            str(self.config_dir),
            "--skip-pip-packages",
            ONBOARDING_PACKAGES,
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
            env=env,
            cwd=ROOT,
        )
        log.close()
        self._session = aiohttp.ClientSession()
        await self._wait_for_http()
        if not self.token:
            self.token = await self._onboard()
        else:
            self.token = await self._login()
        await self._connect()
        await self._wait_for_agent()

    async def stop(self) -> None:
        """Stop Home Assistant (cleanly, as Ctrl-C does)."""
        if self._ws is not None:
            await self._ws.close()
            self._ws = None
        if self._session is not None:
            await self._session.close()
            self._session = None
        proc, self._proc = self._proc, None
        if proc is not None and proc.returncode is None:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 60)
            except TimeoutError:
                proc.kill()
                await proc.wait()

    async def restart(self) -> None:
        """Stop and start Home Assistant again (the model server keeps
        running, as it would on another machine)."""
        await self.stop()
        await self.start()

    async def _wait_for_http(self) -> None:
        assert self._session is not None
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.returncode is not None:
                raise RuntimeError(
                    f"Home Assistant exited; see {self.workdir}/hass.log"
                )
            # `/api/onboarding` answers until onboarding is done,
            # `/auth/providers` once it is.
            for path in ("/api/onboarding", "/auth/providers"):
                with contextlib.suppress(aiohttp.ClientError, TimeoutError):
                    async with self._session.get(
                        f"{self.url}{path}", timeout=aiohttp.ClientTimeout(total=5)
                    ) as resp:
                        if resp.status == 200:
                            return
            await asyncio.sleep(0.5)
        raise RuntimeError("Home Assistant did not answer within 600 s")

    async def _onboard(self) -> str:
        """The browser's onboarding, through its API."""
        assert self._session is not None
        client_id = f"{self.url}/"
        async with self._session.post(
            f"{self.url}/api/onboarding/users",
            json={
                "client_id": client_id,
                "name": "Newcomer",
                "username": USERNAME,
                "password": PASSWORD,
                "language": "en",
            },
        ) as resp:
            resp.raise_for_status()
            code = (await resp.json())["auth_code"]
        token = await self._token(client_id, code)
        headers = {"Authorization": f"Bearer {token}"}
        for step, payload in (
            ("core_config", {}),
            ("analytics", {}),
            ("integration", {"client_id": client_id, "redirect_uri": client_id}),
        ):
            async with self._session.post(
                f"{self.url}/api/onboarding/{step}", json=payload, headers=headers
            ) as resp:
                if resp.status not in (200, 403):
                    raise RuntimeError(f"onboarding {step}: HTTP {resp.status}")
        return token

    async def _login(self) -> str:
        """A new token after a restart (the login flow, as the frontend)."""
        assert self._session is not None
        client_id = f"{self.url}/"
        async with self._session.post(
            f"{self.url}/auth/login_flow",
            json={
                "client_id": client_id,
                "handler": ["homeassistant", None],
                "redirect_uri": client_id,
            },
        ) as resp:
            flow = await resp.json()
        async with self._session.post(
            f"{self.url}/auth/login_flow/{flow['flow_id']}",
            json={"client_id": client_id, "username": USERNAME, "password": PASSWORD},
        ) as resp:
            code = (await resp.json())["result"]
        return await self._token(client_id, code)

    async def _token(self, client_id: str, code: str) -> str:
        assert self._session is not None
        async with self._session.post(
            f"{self.url}/auth/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "client_id": client_id,
            },
        ) as resp:
            resp.raise_for_status()
            token: str = (await resp.json())["access_token"]
            return token

    async def _connect(self) -> None:
        assert self._session is not None
        self._ws = await self._session.ws_connect(f"{self.url}/api/websocket")
        await self._ws.receive_json()  # auth_required
        await self._ws.send_json({"type": "auth", "access_token": self.token})
        reply = await self._ws.receive_json()
        if reply.get("type") != "auth_ok":
            raise RuntimeError(f"websocket auth: {reply}")

    async def _wait_for_agent(self) -> None:
        """Until the agent's entity exists (the entry set up)."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            state = await self.get(f"/api/states/{AGENT_ENTITY}")
            if state is not None and state.get("state") != "unavailable":
                return
            await asyncio.sleep(0.5)
        raise RuntimeError(f"{AGENT_ENTITY} did not come up")

    async def get(self, path: str) -> Any:
        """GET an API path with the newcomer's token (None on 404)."""
        assert self._session is not None
        async with self._session.get(
            f"{self.url}{path}", headers={"Authorization": f"Bearer {self.token}"}
        ) as resp:
            if resp.status == 404:
                return None
            resp.raise_for_status()
            return await resp.json()

    async def call_service(
        self, domain: str, service: str, data: dict[str, Any]
    ) -> Any:
        """Call a Home Assistant action through REST."""
        assert self._session is not None
        async with self._session.post(
            f"{self.url}/api/services/{domain}/{service}",
            json=data,
            headers={"Authorization": f"Bearer {self.token}"},
        ) as resp:
            resp.raise_for_status()
            return await resp.json()

    async def core_state(self) -> str:
        """Home Assistant's state: `STARTING`, `RUNNING`..."""
        config: dict[str, Any] = await self.get("/api/config")
        return str(config["state"])

    async def state(self, entity_id: str) -> dict[str, Any] | None:
        """An entity's state object."""
        state: dict[str, Any] | None = await self.get(f"/api/states/{entity_id}")
        return state

    async def command(self, message: dict[str, Any]) -> Any:
        """One websocket command on a connection of its own (so it can go
        while a question waits for its answer); its result."""
        assert self._session is not None
        async with self._session.ws_connect(f"{self.url}/api/websocket") as ws:
            await ws.receive_json()
            await ws.send_json({"type": "auth", "access_token": self.token})
            await ws.receive_json()
            await ws.send_json({"id": 1, **message})
            reply = await ws.receive_json()
            if not reply.get("success"):
                raise RuntimeError(f"{message['type']}: {reply}")
            return reply.get("result")

    async def _command(self, message: dict[str, Any]) -> int:
        assert self._ws is not None
        message_id = self._next_id
        self._next_id += 1
        await self._ws.send_json({"id": message_id, **message})
        return message_id

    async def ask(
        self,
        question: str,
        conversation_id: str | None = None,
        *,
        via: str = "pipeline",
        seconds: float = 300,
    ) -> Answer:
        """Ask as the Assist dialog does (`pipeline`) or through REST
        (`rest`: `POST /api/conversation/process` with the demo's agent)."""
        exchanges = len(self.proxy.exchanges)
        tool_requests = len(self.tools.requests)
        asked_at = time.perf_counter()
        began = time.monotonic()
        if via == "rest":
            answer = await self._ask_rest(question, conversation_id, began)
        else:
            answer = await self._ask_pipeline(question, conversation_id, began, seconds)
        answer.tool_requests = [
            f"{r.target} {r.body.decode('utf-8', 'replace')}".rstrip()
            for r in self.tools.requests[tool_requests:]
        ]
        answer.asked_at = asked_at
        turn = [e for e in self.proxy.exchanges[exchanges:] if e.sent >= asked_at]
        answer.model_replies = [_reply(e) for e in turn]
        answer.captures = [capture(e, question) for e in turn]
        return answer

    async def _ask_rest(
        self, question: str, conversation_id: str | None, began: float
    ) -> Answer:
        assert self._session is not None
        body: dict[str, Any] = {"text": question, "agent_id": AGENT_ENTITY}
        if conversation_id:
            body["conversation_id"] = conversation_id
        async with self._session.post(
            f"{self.url}/api/conversation/process",
            json=body,
            headers={"Authorization": f"Bearer {self.token}"},
        ) as resp:
            data = await resp.json()
        response = data.get("response", {})
        return Answer(
            question=question,
            via="rest",
            seconds=round(time.monotonic() - began, 2),
            speech=response.get("speech", {}).get("plain", {}).get("speech", ""),
            conversation_id=data.get("conversation_id"),
            continue_conversation=bool(data.get("continue_conversation")),
        )

    async def _ask_pipeline(
        self,
        question: str,
        conversation_id: str | None,
        began: float,
        seconds: float,
    ) -> Answer:
        assert self._ws is not None
        message_id = await self._command(
            {
                "type": "assist_pipeline/run",
                "start_stage": "intent",
                "end_stage": "intent",
                "input": {"text": question},
                "conversation_id": conversation_id,
            }
        )
        answer = Answer(question, "pipeline", 0.0, "", conversation_id, False)
        deadline = began + seconds
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                answer.error = f"no answer within {seconds:.0f} s"
                break
            message = await self._ws.receive_json(timeout=left)
            if message.get("id") != message_id:
                continue
            if message.get("type") == "result":
                if not message.get("success"):
                    answer.error = json.dumps(message.get("error"))
                    break
                continue
            event = message.get("event", {})
            kind, data = event.get("type"), event.get("data") or {}
            if kind == "intent-progress" and (delta := data.get("chat_log_delta")):
                answer.deltas.append(delta)
                answer.calls.extend(delta.get("tool_calls") or [])
                if delta.get("role") == "tool_result":
                    answer.results.append(delta)
            elif kind == "intent-end":
                output = data.get("intent_output") or {}
                response = output.get("response") or {}
                answer.speech = (
                    response.get("speech", {}).get("plain", {}).get("speech", "")
                )
                answer.conversation_id = output.get("conversation_id")
                answer.continue_conversation = bool(output.get("continue_conversation"))
                answer.processed_locally = bool(data.get("processed_locally"))
            elif kind == "error":
                answer.error = json.dumps(data)
            elif kind == "run-end":
                break
        answer.seconds = round(time.monotonic() - began, 2)
        return answer


async def _main(args: argparse.Namespace) -> None:
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="hta-demo-trial-"))
    out = args.out.open("a", encoding="utf-8") if args.out else None
    async with DemoHass(args.model_url, workdir) as demo:
        print(f"demo_trial: Home Assistant on {demo.url} (config in {workdir})")
        questions = list(args.questions)
        if args.file:
            lines = args.file.read_text(encoding="utf-8").splitlines()
            questions += [
                "--new" if line.strip() == "---" else line.strip()
                for line in lines
                if line.strip() and not line.startswith("#")
            ]
        conversation: str | None = None
        asked = 0
        for question in questions:
            if question == "--new":
                conversation = None
                continue
            answer = await demo.ask(question, conversation, via=args.via)
            if args.conversation:
                conversation = answer.conversation_id
            asked += 1
            if args.captures:
                _save_captures(answer, args.captures, asked)
            _show(answer, out)
        for question in args.restart_ask:
            # Asked as soon as the agent is there: its warm-up is under way.
            await demo.restart()
            _show(await demo.ask(question, via=args.via), out)
    if out is not None:
        out.close()


def _save_captures(answer: Answer, folder: Path, number: int) -> None:
    """Each of the turn's exchanges as `NNN-K.json` in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    for index, exchange in enumerate(answer.captures):
        path = folder / f"{number:03d}-{index}.json"
        path.write_text(
            json.dumps(exchange, ensure_ascii=False, indent=1), encoding="utf-8"
        )


def _show(answer: Answer, out: Any) -> None:
    calls = ", ".join(
        f"{c.get('tool_name')} {json.dumps(c.get('tool_args'))}" for c in answer.calls
    )
    by = " (Home Assistant itself)" if answer.processed_locally else ""
    print(f"\n> {answer.question}  [{answer.seconds} s]{by}\n  said: {answer.speech}")
    print(f"  calls: {calls or '-'}\n  tool server: {answer.tool_requests or '-'}")
    if answer.error:
        print(f"  error: {answer.error}")
    if out is not None:
        record = answer.as_json()
        record.pop("captures")
        out.write(json.dumps(record, ensure_ascii=False) + "\n")
        out.flush()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "questions", nargs="*", help='"--new" starts a new conversation'
    )
    parser.add_argument("--model-url", default="http://127.0.0.1:8080/v1")
    parser.add_argument("--via", choices=("pipeline", "rest"), default="pipeline")
    parser.add_argument("--conversation", action="store_true", help="one conversation")
    parser.add_argument("--restart-ask", action="append", default=[])
    parser.add_argument("--file", type=Path, help='a question a line; "---": new')
    parser.add_argument("--workdir")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--captures", type=Path, help="a folder for raw exchanges")
    asyncio.run(_main(parser.parse_args()))
