"""Which loop an agent runs: the plain tool loop, or it with the rules for
small models (`small/rules.py`).

An agent's `profile` setting is `capable`, `small` or `auto` (the default).
`auto` decides per model from the best evidence there is, in this order:

1. the parameters the server reports (llama.cpp's `/v1/models`
   `meta.n_params`, Ollama's `/api/show` `model_info` / `parameter_size`);
2. a size in the model's name (`qwen2.5-coder-0.5b`, `llama3.2:3b`,
   `smollm2-135m`, `Qwen3-30B-A3B`: the first size is the total);
3. a hosted API (OpenAI, or a server outside the local network): capable;
4. nothing known (an alias without a size on llama-cpp-python, say):
   capable, the plain loop, so a model that plans never loses a call.
   The user picks `small` in the agent's form then.

Below `SMALL_MODEL_PARAMETERS` a model is small. Why 2 B (bench/RESULTS.md,
P4 and P9): Qwen2.5-Coder-0.5B (630 M parameters as llama.cpp counts them)
makes the right requests 80 % / 60 % of the time (tuning / held-out
requests) with the small rules and 66 % / 50 % without them, while the same
rules cost a model that is right 18 of the 32 oracle scenarios (its chains,
its retries, follow-ups that need an earlier result). A capable model taken for small loses
those; a small one taken for capable loses some accuracy. No model between
0.5 B and 7 B can run here; public function-calling results put the step
where models start to plan chained calls between the 1.5 B and 3 B
classes, so 2 B keeps 1.5 B / 1.7 B models small and every 3 B model
capable. The user picks the profile when `auto` guesses wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
import functools
import ipaddress
import re

from yarl import URL

from .info import KIND_OPENAI, ModelCaps, ServerInfo

# Models with fewer parameters than this get the small-model rules (`auto`).
SMALL_MODEL_PARAMETERS = 2_000_000_000


class Profile(StrEnum):
    """An agent's profile setting."""

    AUTO = "auto"
    SMALL = "small"
    CAPABLE = "capable"


class Evidence(StrEnum):
    """What `auto` decided from (the key of its reason's text)."""

    SETTING = "setting"  # the user chose the profile
    SERVER_SIZE = "server_size"
    NAME_SIZE = "name_size"
    HOSTED = "hosted"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class ProfileChoice:
    """The profile an agent runs with, and why."""

    profile: Profile  # SMALL or CAPABLE
    evidence: Evidence
    parameters: int | None = None  # the size it was decided from

    @property
    def small(self) -> bool:
        """Whether the small-model rules apply."""
        return self.profile is Profile.SMALL

    @property
    def size(self) -> str:
        """The size as people write it (`0.5B`, `135M`), "" when unknown."""
        return format_size(self.parameters) if self.parameters else ""

    def describe(self) -> str:
        """One line for logs and diagnostics (English, no secrets)."""
        why = {
            Evidence.SETTING: "chosen in the agent's settings",
            Evidence.SERVER_SIZE: f"the server reports {self.size} parameters",
            Evidence.NAME_SIZE: f"the model's name says {self.size}",
            Evidence.HOSTED: "a hosted API",
            Evidence.UNKNOWN: "the model's size is unknown",
        }[self.evidence]
        return f"{self.profile.value} ({why})"


# A size in a model name: "0.5b", "3B", "135m", "1.5b" as a word of its own
# ("qwen2.5" is a version, "a3b" MoE's active part, "q4_k_m" a quantisation).
_NAME_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)([bm])(?![a-z0-9])")
_EXPERTS = re.compile(r"(?<![a-z0-9.])(\d+)x(\d+(?:\.\d+)?)b(?![a-z0-9])")


def size_in_name(model: str) -> int | None:
    """The parameter count a model's name states, or None."""
    name = model.lower()
    if experts := _EXPERTS.search(name):
        return int(int(experts[1]) * float(experts[2]) * 1e9)
    if found := _NAME_SIZE.search(name):
        unit = 1e9 if found[2] == "b" else 1e6
        return int(float(found[1]) * unit)
    return None


def format_size(parameters: int) -> str:
    """`630167424` -> `630M`, `1_540_000_000` -> `1.5B`."""
    if parameters >= 1e9:
        return f"{parameters / 1e9:.1f}".removesuffix(".0") + "B"
    return f"{parameters / 1e6:.0f}M"


@functools.lru_cache(maxsize=64)
def hosted(base_url: str) -> bool:
    """Whether the server is a hosted API (a public host name or address)."""
    host = URL(base_url).host or ""
    if host == "localhost" or host.endswith((".local", ".lan", ".home", ".internal")):
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return "." in host  # a public DNS name; a bare name is on the LAN
    return address.is_global


def choose_profile(
    setting: str, model: str, server: ServerInfo, base_url: str
) -> ProfileChoice:
    """The profile an agent set to `setting` runs `model` with."""
    if setting in (Profile.SMALL, Profile.CAPABLE):
        return ProfileChoice(Profile(setting), Evidence.SETTING)
    caps: ModelCaps = server.model(model)
    if caps.parameters:
        return _by_size(caps.parameters, Evidence.SERVER_SIZE)
    if (named := size_in_name(model)) is not None:
        return _by_size(named, Evidence.NAME_SIZE)
    if server.kind == KIND_OPENAI or hosted(base_url):
        return ProfileChoice(Profile.CAPABLE, Evidence.HOSTED)
    return ProfileChoice(Profile.CAPABLE, Evidence.UNKNOWN)


def _by_size(parameters: int, evidence: Evidence) -> ProfileChoice:
    small = parameters < SMALL_MODEL_PARAMETERS
    return ProfileChoice(
        Profile.SMALL if small else Profile.CAPABLE, evidence, parameters
    )
