"""A change said by the item it acts on, not by its id: "Should I remove
the bread?" and "Removed the bread." where the call said `{"id": "7"}`.

The name is known when the id was read from the list of the collection the
tool changes (`ChatTools.listers`, `engine.lookup`) earlier in the
conversation: the same read the gate trusts the id from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from homeassistant.components import conversation
from homeassistant.helpers import llm

from ..engine.lookup import id_key, item_name, opaque
from ..small.guards import tool_act
from .messages import tool_result_text
from .outcomes import succeeded


def named_item(
    contents: Sequence[conversation.Content],
    call: llm.ToolInput,
    listers: Mapping[str, str],
) -> str | None:
    """The name of the one item `call` changes by its id, as the latest
    list result gave it; None when it names no read item."""
    lister = listers.get(call.tool_name)
    ids = [
        found
        for key, value in call.tool_args.items()
        if id_key(key) and (found := opaque(value)) is not None
    ]
    if lister is None or len(ids) != 1:
        return None
    for content in reversed(contents):
        if (
            isinstance(content, conversation.ToolResultContent)
            and content.tool_name == lister
            and succeeded(content)
            and (name := item_name(tool_result_text(content.result), ids[0]))
        ):
            return name
    return None


def removal_of(
    contents: Sequence[conversation.Content],
    call: llm.ToolInput,
    listers: Mapping[str, str],
) -> str | None:
    """The name of the item `call` removes, when it removes one the
    conversation read (`delete_item` with the bread's id)."""
    if tool_act(call.tool_name) != "delete":
        return None
    return named_item(contents, call, listers)
