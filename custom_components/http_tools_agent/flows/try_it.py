"""Options flow steps of *Try it*: send a tool's request with arguments the
user types, and show what came back as an agent would use it.

Two ways in: the tool form's *Try it before saving* (the form is checked
first; nothing is saved yet) and the menu's *Try a tool* (a saved tool).

1. `try_it`: one field per declared parameter (a number, a switch, a list
   of the allowed values, YAML for an object or a list, else text). Nothing
   is sent before *Submit*. Then the arguments get the checks a model's
   call gets (a bad one is shown under its field, nothing sent) and the
   request runs the way any call runs (`turn/alone.py`: host policy, time
   limit, secrets, retries, the tool event), without the question a tool
   that asks first would put: the user pressed the button.
2. `try_result`: the status, what the model would read (shaped, cut to its
   limit), the sentence the agent would say of it (`said_of_run`: the
   tool's own sentence or its read-out, in Home Assistant's language), the
   time taken and the arguments sent; every secret value of the entry
   masked. Then: try again, back to the form, save (a form's tool), or the
   menu.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import json
import re
from typing import TYPE_CHECKING, Any

from homeassistant.config_entries import ConfigEntryState, ConfigFlowResult, OptionsFlow
from homeassistant.helpers.selector import (
    BooleanSelector,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    ObjectSelector,
    Selector,
    SelectSelector,
    SelectSelectorConfig,
    TextSelector,
)
import probatio

from ..const import CONF_TOOLS
from ..engine.arguments import check_arguments, compile_validator
from ..engine.call_steps import hide
from ..engine.definitions import ToolDefinition
from ..redact import redact_url
from ..tools.llm_api import redact_arguments
from ..turn.alone import async_run_alone
from .lists import NONE_SHOWN, pick_mode

if TYPE_CHECKING:
    from ..runtime import HttpToolsRuntime

STEP_TRY_TOOL = "try_tool"
STEP_TRY_IT = "try_it"
STEP_TRY_RESULT = "try_result"
STEP_TRY_UNAVAILABLE = "try_unavailable"
STEP_TRY_EDIT = "try_edit"
STEP_TRY_SAVE = "try_save"
STEP_MENU = "init"
# The editor's step of a saved tool (`flows/options.py`).
STEP_CHANGE_TOOL = "change_tool"
# The tool form's box, and the saved tool to try.
F_TRY_IT = "try_it"
F_TRY_TOOL = "tool"
ERROR_ARGUMENT = "try_invalid_argument"
# Scalars offered as a list of choices (`enum`).
_SCALARS = (str, int, float)


@dataclass(slots=True)
class _Trying:
    """The tool being tried and where it came from."""

    definition: ToolDefinition
    # The editor step whose unsaved form is tried (None: a saved tool), and
    # that form's values.
    form_step: str | None = None
    form: dict[str, Any] = field(default_factory=dict)
    # The arguments as last typed (the form shows them again).
    typed: dict[str, Any] = field(default_factory=dict)
    # What the last try gave, as the result's placeholders.
    shown: dict[str, str] = field(default_factory=dict)


def with_try_box(schema: probatio.Schema) -> probatio.Schema:
    """The tool form with its *Try it before saving* box."""
    return schema.extend(
        {probatio.Optional(F_TRY_IT, default=False): BooleanSelector()}
    )


def _properties(parameters: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    properties = parameters.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    return {
        str(name): schema if isinstance(schema, Mapping) else {}
        for name, schema in properties.items()
    }


def _selector(schema: Mapping[str, Any]) -> Selector[Any]:
    """The field for one parameter, by its JSON Schema type."""
    enum = schema.get("enum")
    if isinstance(enum, list) and enum and all(isinstance(v, _SCALARS) for v in enum):
        # Offered as text; the argument check turns "2" back into 2.
        options = [str(v) for v in enum]
        return SelectSelector(
            SelectSelectorConfig(options=options, mode=pick_mode(options))
        )
    kind = schema.get("type")
    if kind == "boolean":
        return BooleanSelector()
    if kind in ("integer", "number"):
        return NumberSelector(
            NumberSelectorConfig(
                mode=NumberSelectorMode.BOX, step=1 if kind == "integer" else "any"
            )
        )
    if kind in ("object", "array"):
        return ObjectSelector()
    # A string, several types or none: text, which the check converts.
    return TextSelector()


def arguments_schema(parameters: Mapping[str, Any]) -> probatio.Schema:
    """One field per declared parameter, required as the schema says."""
    required = parameters.get("required")
    needed = {str(n) for n in required} if isinstance(required, list) else set()
    fields: dict[Any, Any] = {}
    for parameter, schema in _properties(parameters).items():
        # The fields are the tool's parameters: named by the user, labelled
        # by their names (tests/test_strings.py knows).
        if parameter in needed:
            fields[probatio.Required(parameter)] = _selector(schema)
        else:
            fields[probatio.Optional(parameter)] = _selector(schema)
    return probatio.Schema(fields)


def typed_arguments(user_input: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments typed: an empty field is an argument not given."""
    return {k: v for k, v in user_input.items() if v not in (None, "")}


def _parameter_lines(parameters: Mapping[str, Any]) -> str:
    required = parameters.get("required")
    needed = set(required) if isinstance(required, list) else set()
    lines = []
    for name, schema in _properties(parameters).items():
        kind = schema.get("type")
        kinds = "/".join(kind) if isinstance(kind, list) else str(kind or "any")
        what = f"{kinds}, required" if name in needed else kinds
        about = str(schema.get("description") or "").strip()
        lines.append(f"- `{name}` ({what})" + (f": {about}" if about else ""))
    return "\n".join(lines) or NONE_SHOWN


def _requests(definition: ToolDefinition) -> str:
    return "; ".join(
        f"{step.method} {redact_url(step.url)}" for step in definition.requests
    )


def fenced(text: str) -> str:
    """`text` as a Markdown code block, whatever backticks it holds."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


class TryItSteps(OptionsFlow):
    """The *Try it* steps, mixed into the options flow."""

    _editing: int | None
    _trying: _Trying | None = None

    if TYPE_CHECKING:
        # The options flow's tool form (`flows/options.py`).
        async def _async_tool_form(
            self,
            step_id: str,
            user_input: dict[str, Any] | None,
            *,
            shown: Mapping[str, Any] | None = None,
        ) -> ConfigFlowResult: ...

    def _try_runtime(self) -> HttpToolsRuntime | None:
        """The loaded entry's runtime: its secrets, limits and host policy."""
        entry = self.config_entry
        if entry.state is not ConfigEntryState.LOADED:
            return None
        runtime: HttpToolsRuntime = entry.runtime_data
        return runtime

    def _saved_tools(self) -> dict[str, ToolDefinition]:
        """The configured tools (the options' and the file's), by name."""
        runtime = self._try_runtime()
        if runtime is None:
            return {}
        return dict(runtime.tools.configured.tool_set().by_name)

    def try_menu(self) -> list[str]:
        """The menu's *Try a tool*, when there is a tool to try."""
        return [STEP_TRY_TOOL] if self._saved_tools() else []

    async def async_try_form(
        self, step_id: str, form: Mapping[str, Any], definition: ToolDefinition
    ) -> ConfigFlowResult:
        """Try the checked, unsaved tool of the editor's form `step_id`."""
        self._trying = _Trying(definition, step_id, dict(form))
        return await self.async_step_try_it()

    async def async_step_try_tool(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Pick the saved tool to try."""
        tools = self._saved_tools()
        names = list(tools)
        if user_input is not None and user_input.get(F_TRY_TOOL) in tools:
            self._trying = _Trying(tools[user_input[F_TRY_TOOL]])
            return await self.async_step_try_it()
        schema = probatio.Schema(
            {
                probatio.Required(F_TRY_TOOL): SelectSelector(
                    SelectSelectorConfig(options=names, mode=pick_mode(names))
                )
            }
        )
        return self.async_show_form(step_id=STEP_TRY_TOOL, data_schema=schema)

    async def async_step_try_it(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The arguments; nothing is sent before they are submitted."""
        trying = self._trying
        assert trying is not None
        definition = trying.definition
        runtime = self._try_runtime()
        if runtime is None:
            return await self.async_step_try_unavailable()
        schema = arguments_schema(definition.parameters)
        errors: dict[str, str] = {}
        placeholders = {
            "tool": definition.name,
            "request": _requests(definition),
            "parameters": _parameter_lines(definition.parameters),
            "argument_error": "",
        }
        if user_input is not None:
            trying.typed = dict(user_input)
            # The check a model's call gets, first here to name the field.
            checked = check_arguments(
                definition.name,
                definition.parameters,
                compile_validator(definition.parameters),
                typed_arguments(user_input),
            )
            if checked.error is None:
                return await self._async_send(runtime, trying, checked.arguments)
            fields = {str(key) for key in schema.schema}
            at_fault = [name for name in checked.at_fault if name in fields]
            errors = dict.fromkeys(at_fault or ["base"], ERROR_ARGUMENT)
            placeholders["argument_error"] = self._masked(runtime, checked.error)
        return self.async_show_form(
            step_id=STEP_TRY_IT,
            data_schema=self.add_suggested_values_to_schema(schema, trying.typed),
            errors=errors,
            description_placeholders=placeholders,
        )

    async def _async_send(
        self, runtime: HttpToolsRuntime, trying: _Trying, arguments: dict[str, Any]
    ) -> ConfigFlowResult:
        """Send the request as a call would be, and show what came back."""
        definition = trying.definition
        run, said = await async_run_alone(
            self.hass, runtime, definition, arguments, self.hass.config.language
        )
        sent = json.dumps(
            redact_arguments(definition, arguments), ensure_ascii=False, default=str
        )
        trying.shown = {
            "tool": definition.name,
            "arguments": fenced(self._masked(runtime, sent)),
            "status": NONE_SHOWN if run.status is None else str(run.status),
            "seconds": f"{run.duration:.2f}",
            "text": fenced(self._masked(runtime, run.text)),
            "speech": self._masked(runtime, said),
        }
        return await self.async_step_try_result()

    async def async_step_try_result(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """What the last try gave, and what next."""
        trying = self._trying
        assert trying is not None
        return self.async_show_menu(
            step_id=STEP_TRY_RESULT,
            menu_options=self._next_steps(again=True),
            description_placeholders=trying.shown,
        )

    async def async_step_try_unavailable(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Nothing can be tried while the entry is not loaded."""
        trying = self._trying
        assert trying is not None
        return self.async_show_menu(
            step_id=STEP_TRY_UNAVAILABLE,
            menu_options=self._next_steps(again=False),
            description_placeholders={"tool": trying.definition.name},
        )

    @staticmethod
    def _masked(runtime: HttpToolsRuntime, text: str) -> str:
        """`text` with every secret value of the entry masked as the model
        reads them (a server may echo one the request did not use)."""
        return hide(text, tuple(runtime.tools.secrets.values()))

    def _next_steps(self, *, again: bool) -> list[str]:
        """After a try: again, to the form (the tried one, or the saved
        tool's when the options hold it), save the form's tool, the menu."""
        trying = self._trying
        assert trying is not None
        steps = [STEP_TRY_IT] if again else []
        if trying.form_step is not None:
            return [*steps, STEP_TRY_EDIT, STEP_TRY_SAVE]
        if self._options_index(trying.definition.name) is not None:
            steps.append(STEP_TRY_EDIT)
        return [*steps, STEP_MENU]

    def _options_index(self, name: str) -> int | None:
        """Where the options hold the tool `name` (None: the tools file)."""
        tools = self.config_entry.options.get(CONF_TOOLS) or []
        names = [t.get("name") if isinstance(t, dict) else None for t in tools]
        return names.index(name) if name in names else None

    async def async_step_try_edit(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Back to the form: the tried one as typed, or the saved tool's."""
        trying = self._trying
        assert trying is not None
        if trying.form_step is not None:
            return await self._async_tool_form(
                trying.form_step, None, shown=trying.form
            )
        self._editing = self._options_index(trying.definition.name)
        return await self._async_tool_form(STEP_CHANGE_TOOL, None)

    async def async_step_try_save(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Save the tried form's tool, as its form's submit would."""
        trying = self._trying
        assert trying is not None
        assert trying.form_step is not None
        form = {**trying.form, F_TRY_IT: False}
        return await self._async_tool_form(trying.form_step, form)
