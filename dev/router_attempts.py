"""LiteLLM callbacks that note every attempt the proxy makes on a deployment.

Not imported here: `dev/router.py` copies this file beside the proxy's config
and names `router_attempts.record_success` and `router_attempts.record_failure`
as its `success_callback` and `failure_callback` (LiteLLM's custom callback
functions; the proxy imports them from the config's folder). Each attempt is
one JSON line in the file `HTA_ROUTER_ATTEMPTS` names: its outcome, the
deployment's `api_base` and whether it streamed. A failed deployment and the
retry on the next one are two lines, so a test sees which server LiteLLM tried
and which one answered. Only the standard library: it runs in the router's
venv.
"""

from __future__ import annotations

from collections.abc import Mapping
import json
import os
from typing import Any

ATTEMPTS_ENV = "HTA_ROUTER_ATTEMPTS"


def attempt_line(outcome: str, kwargs: Mapping[str, Any]) -> str:
    """One attempt as a JSON line, from the call's logging kwargs."""
    params = kwargs.get("litellm_params")
    api_base = params.get("api_base") if isinstance(params, Mapping) else None
    return json.dumps(
        {
            "outcome": outcome,
            "api_base": str(api_base or "").rstrip("/"),
            "stream": bool(kwargs.get("stream")),
        }
    )


def _record(outcome: str, kwargs: Mapping[str, Any]) -> None:
    path = os.environ.get(ATTEMPTS_ENV)
    if not path:
        return
    with open(path, "a", encoding="utf-8") as out:
        out.write(attempt_line(outcome, kwargs) + "\n")


async def record_success(
    kwargs: Mapping[str, Any], response: object, start_time: object, end_time: object
) -> None:
    """LiteLLM's success callback: a deployment answered."""
    _record("success", kwargs)


async def record_failure(
    kwargs: Mapping[str, Any], response: object, start_time: object, end_time: object
) -> None:
    """LiteLLM's failure callback: a deployment failed (it retries the next)."""
    _record("failure", kwargs)
