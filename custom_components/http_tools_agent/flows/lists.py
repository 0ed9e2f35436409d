"""How the option forms show lists: a choice of names, and an empty list."""

from __future__ import annotations

from homeassistant.helpers.selector import SelectSelectorMode

# Shown for an empty list in a form's text ("Secrets: —").
NONE_SHOWN = "—"
# Up to this many names are picked from a list (radio buttons, check boxes),
# more from a drop-down.
MAX_LISTED = 8


def pick_mode(names: list[str]) -> SelectSelectorMode:
    """The selector mode for picking among `names`."""
    if len(names) <= MAX_LISTED:
        return SelectSelectorMode.LIST
    return SelectSelectorMode.DROPDOWN
