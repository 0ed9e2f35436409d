"""Forty operations of an *arr app, imported as a user imports them: the
distractors of the tool-search tests and benchmarks (`turn/tool_search.py`).

Sonarr's OpenAPI document (`fixtures/openapi/sonarr-v3.json`), its
operations in order, those with at most eight parameters (the whole 235
would not fit a 4k context), sent to `base_url`: a call of one reaches the
test's tool server, where it counts as a request nobody asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from custom_components.http_tools_agent.engine.openapi.document import read_document
from custom_components.http_tools_agent.engine.openapi.mapping import OpenApiDocument

SONARR = Path(__file__).parent / "fixtures" / "openapi" / "sonarr-v3.json"
MAX_PARAMETERS = 8


def arr_tools(base_url: str, count: int = 40) -> list[dict[str, Any]]:
    """The first `count` of Sonarr's small operations as HTTP tools."""
    document = OpenApiDocument(read_document(SONARR.read_text(encoding="utf-8")))
    # The app's own API (not its login pages, feeds, bulk edits or schemas).
    keys = [
        op.key
        for op in document.operations
        if "/api/v3/" in op.key
        and not any(word in op.key for word in ("bulk", "schema", "test", "action"))
    ]
    tools = document.to_tools(keys, server_url=base_url).tools
    small = [
        tool
        for tool in tools
        if len(tool.get("parameters", {}).get("properties", {})) <= MAX_PARAMETERS
        and tool.get("method", "GET") in ("GET", "DELETE")
    ]
    return small[:count]
