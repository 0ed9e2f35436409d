"""What the LLM server is and what it can do, where it says so.

Asked at setup (and in the config flow), with short timeouts; a server that
says nothing is simply `unknown`:

- llama.cpp's `llama-server`: `GET /props` (next to `/v1`):
  `chat_template_caps.supports_tools` and `supports_parallel_tool_calls`
  (false when it runs without `--jinja` or with a template that has no
  tools), `default_generation_settings.n_ctx`, `modalities.vision` (true
  when it runs with a `--mmproj` projector); its model list's
  `meta.n_params`;
- Ollama: `GET /api/version` answers; `POST /api/show` for each model an agent
  uses: `capabilities` (`tools`, `thinking`, `vision`), the context (`num_ctx` of its
  parameters, else Ollama's default of 4096, never more than the model's
  `<architecture>.context_length`), `general.parameter_count` (or
  `details.parameter_size`);
- vLLM: `max_model_len` in its model list (`owned_by: vllm`);
- OpenAI (`api.openai.com`) and llama-cpp-python (`owned_by: me`) by their
  model list; neither reports more.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

import aiohttp
from homeassistant.const import CONF_API_KEY, CONF_LLM_HASS_API
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.aiohttp_client import async_get_clientsession
from yarl import URL

from ..const import CONF_BASE_URL, CONF_MODEL, DEFAULT_MODEL, DOMAIN, LOGGER

KIND_LLAMA_CPP = "llama.cpp"
KIND_OLLAMA = "ollama"
KIND_VLLM = "vllm"
KIND_OPENAI = "openai"
KIND_LLAMA_CPP_PYTHON = "llama-cpp-python"
KIND_UNKNOWN = "unknown"

# Ollama's context when a model does not set `num_ctx` (its documented default).
OLLAMA_DEFAULT_CONTEXT = 4096
_PROBE_TIMEOUT = aiohttp.ClientTimeout(total=5)
# Models of one server whose details are asked (Ollama lists every pulled one).
_MAX_MODELS = 8


@dataclass(frozen=True, slots=True)
class ModelCaps:
    """What the server says about one model (None: it does not say)."""

    context: int | None = None
    tools: bool | None = None
    parallel_tool_calls: bool | None = None
    thinking: bool | None = None
    # The model's parameter count (it decides the `auto` profile).
    parameters: int | None = None
    # It reads images (an image answer goes to it as a picture).
    vision: bool | None = None


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """The server's kind and its models' capabilities (`""`: every model)."""

    kind: str = KIND_UNKNOWN
    models: Mapping[str, ModelCaps] = field(default_factory=dict)

    def model(self, name: str) -> ModelCaps:
        """What is known of the model `name`."""
        return self.models.get(name) or self.models.get("") or ModelCaps()

    def without_tools(self, names: Iterable[str]) -> list[str]:
        """Those of the models `names` the server says cannot take tools."""
        return sorted({n for n in names if self.model(n).tools is False})

    def as_dict(self) -> dict[str, Any]:
        """For diagnostics."""
        return {
            "kind": self.kind,
            "models": {name or "*": asdict(c) for name, c in self.models.items()},
        }


def reads_images(setting: str, caps: ModelCaps) -> bool:
    """Whether a tool's image goes to the model as a picture: the agent's
    `vision` setting (`on`, `off`), or with `auto` what the server says of
    the model (llama.cpp's `modalities.vision`, Ollama's `vision`
    capability). Servers that say nothing (vLLM, OpenAI) need `on`."""
    if setting in ("on", "off"):
        return setting == "on"
    return caps.vision is True


# How a server of each kind is named in an entry's title.
_KIND_NAMES = {
    KIND_LLAMA_CPP: "llama.cpp",
    KIND_LLAMA_CPP_PYTHON: "llama-cpp-python",
    KIND_OLLAMA: "Ollama",
    KIND_VLLM: "vLLM",
    KIND_OPENAI: "OpenAI",
}


def entry_title(kind: str, model: str | None, server: str) -> str:
    """An entry's title: what the server is and the model its first agent
    uses ("llama.cpp · qwen2.5-3b"); a server of no known kind by its
    address (`server`: the URL without credentials)."""
    name = _KIND_NAMES.get(kind) or server.split("://", 1)[-1].removesuffix("/v1")
    return f"{name} · {model}" if model else name


def _int(value: object) -> int | None:
    return (
        value
        if isinstance(value, int) and not isinstance(value, bool) and value > 0
        else None
    )


def _bool(value: object) -> bool | None:
    return value if isinstance(value, bool) else None


def parse_llama_cpp_props(props: Mapping[str, Any]) -> ModelCaps | None:
    """llama.cpp's `/props`, or None when the body is not one."""
    caps = props.get("chat_template_caps")
    settings = props.get("default_generation_settings")
    if not isinstance(caps, Mapping) and not isinstance(settings, Mapping):
        return None
    caps = caps if isinstance(caps, Mapping) else {}
    settings = settings if isinstance(settings, Mapping) else {}
    modalities = props.get("modalities")
    return ModelCaps(
        context=_int(settings.get("n_ctx")),
        tools=_bool(caps.get("supports_tools")),
        parallel_tool_calls=_bool(caps.get("supports_parallel_tool_calls")),
        vision=(
            _bool(modalities.get("vision")) if isinstance(modalities, Mapping) else None
        ),
    )


def parse_ollama_show(show: Mapping[str, Any]) -> ModelCaps:
    """Ollama's `/api/show` of one model."""
    capabilities = show.get("capabilities")
    known = isinstance(capabilities, list)
    capabilities = capabilities if isinstance(capabilities, list) else []
    info = show.get("model_info")
    info = info if isinstance(info, Mapping) else {}
    architecture = info.get("general.architecture")
    trained = _int(info.get(f"{architecture}.context_length"))
    num_ctx = None
    parameters = show.get("parameters")
    if isinstance(parameters, str):
        for line in parameters.splitlines():
            name, _, value = line.strip().partition(" ")
            if name == "num_ctx" and value.strip().isdigit():
                num_ctx = int(value.strip())
    context = num_ctx or OLLAMA_DEFAULT_CONTEXT
    details = show.get("details")
    size = details.get("parameter_size") if isinstance(details, Mapping) else None
    return ModelCaps(
        context=min(context, trained) if trained else context,
        tools=("tools" in capabilities) if known else None,
        thinking=("thinking" in capabilities) if known else None,
        vision=("vision" in capabilities) if known else None,
        parameters=_int(info.get("general.parameter_count")) or _size(size),
    )


def _size(text: object) -> int | None:
    """Ollama's `parameter_size` ("751.63M", "7.6B") as a count."""
    if not isinstance(text, str) or not text[:-1]:
        return None
    unit = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}.get(text[-1].upper())
    try:
        return int(float(text[:-1]) * unit) if unit else None
    except ValueError:
        return None


def llama_cpp_parameters(models: Sequence[Mapping[str, Any]]) -> int | None:
    """The parameter count llama.cpp's model list reports (`meta.n_params`)."""
    for model in models:
        if isinstance(meta := model.get("meta"), Mapping):
            return _int(meta.get("n_params"))
    return None


def parse_model_list(
    base_url: str, models: Sequence[Mapping[str, Any]]
) -> ServerInfo | None:
    """The kind and contexts the model list alone tells, or None."""
    owners = {m.get("owned_by") for m in models}
    if "vllm" in owners or any("max_model_len" in m for m in models):
        return ServerInfo(
            KIND_VLLM,
            {
                str(m.get("id")): ModelCaps(context=_int(m.get("max_model_len")))
                for m in models
            },
        )
    if "llamacpp" in owners:
        metas = [m["meta"] for m in models if isinstance(m.get("meta"), Mapping)]
        n_ctx = _int(metas[0].get("n_ctx")) if metas else None
        return ServerInfo(
            KIND_LLAMA_CPP,
            {"": ModelCaps(context=n_ctx, parameters=llama_cpp_parameters(models))},
        )
    if URL(base_url).host == "api.openai.com":
        return ServerInfo(KIND_OPENAI)
    if owners == {"me"}:
        return ServerInfo(KIND_LLAMA_CPP_PYTHON)
    return None


class _Prober:
    """GETs and POSTs next to the `/v1` API, with the entry's key."""

    def __init__(self, hass: HomeAssistant, data: Mapping[str, Any]) -> None:
        self._session = async_get_clientsession(hass)
        base = str(data[CONF_BASE_URL]).rstrip("/")
        self.base_url = base
        self._root = base.removesuffix("/v1")
        key = data.get(CONF_API_KEY)
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}

    async def json(self, path: str, body: Mapping[str, Any] | None = None) -> Any:
        """The decoded JSON at `path`, None on any failure."""
        try:
            async with self._session.request(
                "POST" if body is not None else "GET",
                f"{self._root}{path}",
                json=body,
                headers=self._headers,
                timeout=_PROBE_TIMEOUT,
                allow_redirects=False,
            ) as response:
                if response.status != 200:
                    return None
                return await response.json(content_type=None)
        except (aiohttp.ClientError, TimeoutError, ValueError) as err:
            LOGGER.debug("Server probe %s: %s", path, err)
            return None


async def async_probe_server(
    hass: HomeAssistant,
    data: Mapping[str, Any],
    models: Sequence[Mapping[str, Any]],
    used_models: Iterable[str],
) -> ServerInfo:
    """Ask the server what it is and can do (`models`: its model list)."""
    prober = _Prober(hass, data)
    props = await prober.json("/props")
    if isinstance(props, Mapping) and (caps := parse_llama_cpp_props(props)):
        caps = replace(caps, parameters=llama_cpp_parameters(models))
        return ServerInfo(KIND_LLAMA_CPP, {"": caps})
    from_list = parse_model_list(prober.base_url, models)
    if from_list is not None:
        return from_list
    version = await prober.json("/api/version")
    if isinstance(version, Mapping) and "version" in version:
        names = list(dict.fromkeys(used_models))[:_MAX_MODELS]
        shows = await asyncio.gather(
            *(prober.json("/api/show", {"model": name}) for name in names)
        )
        return ServerInfo(
            KIND_OLLAMA,
            {
                name: parse_ollama_show(show)
                for name, show in zip(names, shows, strict=True)
                if isinstance(show, Mapping)
            },
        )
    return ServerInfo()


def tool_support_issue_id(entry_id: str) -> str:
    """The repair issue of an entry whose server cannot take tools."""
    return f"no_tool_support_{entry_id}"


def agent_models(subentries: Iterable[Mapping[str, Any]]) -> list[str]:
    """The models of the agents that offer tools (an LLM API chosen)."""
    return [
        str(data.get(CONF_MODEL, DEFAULT_MODEL))
        for data in subentries
        if data.get(CONF_LLM_HASS_API)
    ]


@callback
def async_report_tool_support(
    hass: HomeAssistant, entry_id: str, server: str, info: ServerInfo, models: list[str]
) -> None:
    """A repair issue while the server says its template takes no tools.

    The agents keep working: calls the model writes as text still run.
    """
    issue_id = tool_support_issue_id(entry_id)
    missing = info.without_tools(models)
    if not missing:
        ir.async_delete_issue(hass, DOMAIN, issue_id)
        return
    LOGGER.warning(
        "The language model server %s (%s) reports no tool support for %s: "
        "tool calls work only when the model writes them as text",
        server,
        info.kind,
        ", ".join(missing),
    )
    ir.async_create_issue(
        hass,
        DOMAIN,
        issue_id,
        is_fixable=False,
        severity=ir.IssueSeverity.WARNING,
        translation_key="no_tool_support",
        translation_placeholders={
            "server": server,
            "kind": info.kind,
            "models": ", ".join(missing),
        },
    )
