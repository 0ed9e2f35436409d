"""The options flow's settings form (with the JSON editor) and secrets form.

The tools in the settings form are JSON text (the file and service format),
for import and export. A secret is a name and a value typed in a password
field: the value is stored in the `secrets` option, apart from the tool
definitions, and never shown back; tools use it as `{secret:name}`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
import json
from pathlib import Path
from typing import Any

from homeassistant.helpers.selector import (
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
import probatio

from ..const import (
    CONF_ALLOWED_HOSTS,
    CONF_MAX_TOOL_ITERATIONS,
    CONF_TOOL_RESULT_MAX_CHARS,
    CONF_TOOL_TIMEOUT,
    CONF_TOOLS,
    CONF_TOOLS_ENABLED,
    CONF_TOOLS_FILE,
    DEFAULT_MAX_TOOL_ITERATIONS,
    DEFAULT_TOOL_RESULT_MAX_CHARS,
    DEFAULT_TOOL_TIMEOUT,
    TOOLS_ENABLED_AUTO,
    TOOLS_ENABLED_CHOICES,
)
from ..engine.definitions import ToolDefinition, parse_tools_json
from ..engine.fields import HEADER_CONTROL_RE, NAME_RE

# The examples ship at the top of the integration (beside manifest.json).
EXAMPLE_FILE = Path(__file__).parents[1] / "tools.example.json"

MIN_ITERATIONS, MAX_ITERATIONS = 1, 10
MIN_TIMEOUT, MAX_TIMEOUT = 1, 300
MIN_RESULT_CHARS, MAX_RESULT_CHARS = 100, 100_000

# Form field keys, not passwords.
SECRET_NAME = "secret_name"  # noqa: S105
SECRET_VALUE = "secret_value"  # noqa: S105
REMOVE_SECRETS = "remove_secrets"


def tools_to_text(tools: Any) -> str:
    """Show stored tools in the editor (empty when there are none)."""
    if not tools:
        return ""
    return json.dumps(tools, indent=2, ensure_ascii=False)


def text_to_tools(text: str) -> list[Any]:
    """Validate the editor's JSON; return it decoded, as the user wrote it.

    Empty text means no tools in the options. Raises ToolDefinitionError.
    """
    text = text.removeprefix("\ufeff")
    if not text.strip():
        return []
    parse_tools_json(text)
    decoded: list[Any] = json.loads(text)
    return decoded


def read_example() -> str:
    """Return the bundled example tools (runs in the executor)."""
    return EXAMPLE_FILE.read_text(encoding="utf-8")


def _box(low: float, high: float, unit: str | None = None) -> NumberSelector:
    config = NumberSelectorConfig(
        min=low, max=high, step=1, mode=NumberSelectorMode.BOX
    )
    if unit:
        config["unit_of_measurement"] = unit
    return NumberSelector(config)


def settings_schema() -> probatio.Schema:
    """Return the settings form."""
    return probatio.Schema(
        {
            probatio.Optional(CONF_TOOLS): TextSelector(
                TextSelectorConfig(multiline=True)
            ),
            probatio.Optional(CONF_TOOLS_FILE): TextSelector(),
            probatio.Required(
                CONF_TOOLS_ENABLED, default=TOOLS_ENABLED_AUTO
            ): SelectSelector(
                SelectSelectorConfig(
                    options=list(TOOLS_ENABLED_CHOICES),
                    mode=SelectSelectorMode.DROPDOWN,
                    translation_key=CONF_TOOLS_ENABLED,
                )
            ),
            probatio.Required(
                CONF_MAX_TOOL_ITERATIONS, default=DEFAULT_MAX_TOOL_ITERATIONS
            ): _box(MIN_ITERATIONS, MAX_ITERATIONS),
            probatio.Required(CONF_TOOL_TIMEOUT, default=DEFAULT_TOOL_TIMEOUT): _box(
                MIN_TIMEOUT, MAX_TIMEOUT, "s"
            ),
            probatio.Required(
                CONF_TOOL_RESULT_MAX_CHARS, default=DEFAULT_TOOL_RESULT_MAX_CHARS
            ): _box(MIN_RESULT_CHARS, MAX_RESULT_CHARS),
            probatio.Optional(CONF_ALLOWED_HOSTS): TextSelector(
                TextSelectorConfig(multiple=True)
            ),
        }
    )


def secrets_schema(names: list[str]) -> probatio.Schema:
    """Add or replace one secret; remove some (only names are ever shown)."""
    fields: dict[Any, Any] = {
        probatio.Optional(SECRET_NAME): TextSelector(),
        probatio.Optional(SECRET_VALUE): TextSelector(
            TextSelectorConfig(type=TextSelectorType.PASSWORD)
        ),
    }
    if names:
        fields[probatio.Optional(REMOVE_SECRETS)] = SelectSelector(
            SelectSelectorConfig(options=names, multiple=True)
        )
    return probatio.Schema(fields)


def validate_secrets_form(
    user_input: Mapping[str, Any],
    secrets: Mapping[str, str],
    users: Mapping[str, list[str]],
) -> dict[str, str] | tuple[dict[str, str], str]:
    """The secrets after the form, or (errors, the error's text).

    `users` maps a secret to the tools that reference it: those cannot be
    removed. Nothing changes while there is an error.
    """
    name = str(user_input.get(SECRET_NAME) or "").strip()
    # Pasted keys often carry a stray space or newline at an end.
    value = str(user_input.get(SECRET_VALUE) or "").strip()
    remove = [str(n) for n in user_input.get(REMOVE_SECRETS) or []]
    if name and not NAME_RE.fullmatch(name):
        return {SECRET_NAME: "invalid_secret_name"}, name
    if name and not value:
        return {SECRET_VALUE: "secret_value_required"}, name
    if value and not name:
        return {SECRET_NAME: "secret_name_required"}, ""
    if value and HEADER_CONTROL_RE.search(value):
        return {SECRET_VALUE: "invalid_secret_value"}, name
    if in_use := [n for n in remove if users.get(n) and n != name]:
        text = "; ".join(f"{n} ({', '.join(users[n])})" for n in in_use)
        return {REMOVE_SECRETS: "secret_in_use"}, text
    result = {k: v for k, v in secrets.items() if k not in set(remove)}
    if name:
        result[name] = value
    return result


def secret_users(definitions: Iterable[ToolDefinition]) -> dict[str, list[str]]:
    """Secret name -> the tools that reference it."""
    users: dict[str, list[str]] = {}
    for definition in definitions:
        for name in sorted(definition.secret_names):
            users.setdefault(name, []).append(definition.name)
    return users
