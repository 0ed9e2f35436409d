"""The LiteLLM config docs/agents.md shows is the one the router e2e test
runs (`dev/router.py`'s `proxy_config`, `tests/e2e/test_router.py`): the same
deployments and the same fallback settings, so what the page promises about
a server that is down is what was tested."""

from __future__ import annotations

from homeassistant.util.yaml.loader import parse_yaml

from dev.router import proxy_config

from .markdown import DOCS, blocks


def test_the_documented_router_config_is_the_tested_one() -> None:
    """Two deployments of one name, tried in order, the failed one retried
    at once on the next and left alone for a minute; only the key, the
    servers' addresses and the e2e test's callbacks differ."""
    (block,) = [b for b in blocks(DOCS / "agents.md") if "litellm --config" in b.text]
    documented = parse_yaml(block.text)
    assert isinstance(documented, dict)
    backends = [d["litellm_params"]["api_base"] for d in documented["model_list"]]
    key = documented["general_settings"]["master_key"]
    tested = proxy_config("qwen2.5-coder-0.5b", backends, key)

    assert documented["model_list"] == tested["model_list"]
    assert documented["router_settings"] == tested["router_settings"]
    assert documented["general_settings"] == tested["general_settings"]
    assert set(tested) - set(documented) == {"litellm_settings"}
