"""Options flow's "Add a tool from a curl command": the command's form, and
what the tool editor shows of the draft it makes.

1. `curl`: the command as pasted (a service's docs, a browser's "Copy as
   cURL (bash)") and, optionally, the tool's name (else one from the URL).
   The engine reads it (`engine/curl/`); a command that cannot be a tool is
   refused, saying why.
2. `curl_tool`: the tool editor filled with the draft; its text names the
   secrets the command held (saved with the tool, under names made of the
   tool's; the tool holds only `{secret:…}`), those the docs only stood in
   for, and what was left out. Saving checks the form like any tool.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from homeassistant.helpers.selector import TextSelector, TextSelectorConfig
import probatio

from ..engine.curl.command import read_command
from ..engine.curl.draft import CurlDraft, draft_tool
from .lists import NONE_SHOWN

STEP_CURL = "curl"
STEP_CURL_TOOL = "curl_tool"
F_COMMAND = "curl_command"
F_TOOL_NAME = "curl_name"


def curl_schema() -> probatio.Schema:
    """The command, and the tool's name if the user has one in mind."""
    return probatio.Schema(
        {
            probatio.Required(F_COMMAND): TextSelector(
                TextSelectorConfig(multiline=True)
            ),
            probatio.Optional(F_TOOL_NAME): TextSelector(),
        }
    )


def read_draft(
    user_input: Mapping[str, Any],
    *,
    taken: Iterable[str],
    secrets: Mapping[str, str],
) -> CurlDraft:
    """The draft of the form's command; raises `CurlError` saying why not."""
    command = read_command(str(user_input.get(F_COMMAND) or ""))
    name = str(user_input.get(F_TOOL_NAME) or "").strip() or None
    return draft_tool(command, name=name, secrets=secrets, taken=taken)


def draft_placeholders(draft: CurlDraft | None) -> dict[str, str]:
    """What the editor's text says of the draft (names, never values)."""
    if draft is None:
        return {"new_secrets": NONE_SHOWN, "stand_ins": NONE_SHOWN, "notes": NONE_SHOWN}
    return {
        "new_secrets": ", ".join(draft.secrets) or NONE_SHOWN,
        "stand_ins": ", ".join(draft.stand_ins) or NONE_SHOWN,
        "notes": "; ".join(draft.notes) or NONE_SHOWN,
    }
