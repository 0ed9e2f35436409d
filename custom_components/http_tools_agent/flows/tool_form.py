"""The tool editor's form: one tool as form fields, and back.

Fields: name, description, method (the common verbs, or any typed), URL,
headers (name/value pairs: an object selector with fields), the body and
its format, authentication (type, username, password), steps, the response
shape and the tool's own sentence, parameters (a JSON Schema in Home
Assistant's code editor), timeout, enabled, verify_ssl, and what the tool
does (read-only, destructive, idempotent: automatic from the verb unless
set).
The form's values become a definition in the file format, checked by the same
validator as every other source; each problem is shown under its field and
names the tool and the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from homeassistant.helpers.selector import (
    BooleanSelector,
    NumberSelector,
    NumberSelectorConfig,
    NumberSelectorMode,
    ObjectSelector,
    ObjectSelectorConfig,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
    TextSelectorConfig,
    TextSelectorType,
)
import probatio

from ..engine.confirm import CONFIRM_MODES, DEFAULT_CONFIRM
from ..engine.definitions import (
    DefinitionProblem,
    ToolDefinition,
    ToolDefinitionError,
    missing_secrets,
    parse_tools,
)
from ..engine.fields import DEFAULT_PARAMETERS, MAX_TIMEOUT

COMMON_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
DEFAULT_FORM_METHOD = "GET"

F_NAME = "name"
F_DESCRIPTION = "description"
F_METHOD = "method"
F_URL = "url"
F_HEADERS = "headers"
F_PARAMETERS = "parameters"
F_BODY_FORMAT = "body_format"
F_BODY = "body"
F_AUTH = "auth"
F_AUTH_USERNAME = "auth_username"
F_AUTH_PASSWORD = "auth_password"  # noqa: S105  (a field's name)
F_STEPS = "steps"
F_RESPONSE = "response"
F_SPEECH = "speech"
F_TIMEOUT = "timeout"
F_ENABLED = "enabled"
F_VERIFY_SSL = "verify_ssl"
F_READ_ONLY = "read_only"
F_DESTRUCTIVE = "destructive"
F_IDEMPOTENT = "idempotent"
# What the select of a derived flag offers: the verb decides, or yes, or no.
FLAG_AUTO, FLAG_YES, FLAG_NO = "auto", "yes", "no"
FLAGS = (F_READ_ONLY, F_DESTRUCTIVE, F_IDEMPOTENT)
AUTH_NONE = "none"
BODY_FORMATS = ("json", "form", "text")
# Whether a call waits for the user's yes (`engine/confirm.py`).
F_CONFIRM = "confirm"
F_CONFIRM_QUESTION = "confirm_question"
F_PIN = "pin"
# The fields in form order; each has its own error key and placeholder.
FIELDS = (
    F_NAME,
    F_DESCRIPTION,
    F_METHOD,
    F_URL,
    F_HEADERS,
    F_BODY_FORMAT,
    F_BODY,
    F_AUTH,
    F_AUTH_USERNAME,
    F_AUTH_PASSWORD,
    F_STEPS,
    F_RESPONSE,
    F_SPEECH,
    F_PARAMETERS,
    F_TIMEOUT,
    F_ENABLED,
    F_VERIFY_SSL,
    F_READ_ONLY,
    F_DESTRUCTIVE,
    F_IDEMPOTENT,
    F_CONFIRM,
    F_CONFIRM_QUESTION,
    F_PIN,
)
HEADER_NAME = "name"
HEADER_VALUE = "value"
BASE = "base"


def tool_schema() -> probatio.Schema:
    """The form of one tool."""
    return probatio.Schema(
        {
            probatio.Required(F_NAME): TextSelector(),
            probatio.Optional(F_DESCRIPTION): TextSelector(
                TextSelectorConfig(multiline=True)
            ),
            probatio.Required(F_METHOD, default=DEFAULT_FORM_METHOD): SelectSelector(
                SelectSelectorConfig(
                    options=list(COMMON_METHODS),
                    mode=SelectSelectorMode.DROPDOWN,
                    custom_value=True,
                )
            ),
            # Optional: a composite tool has its URLs in its steps.
            probatio.Optional(F_URL): TextSelector(
                TextSelectorConfig(type=TextSelectorType.URL)
            ),
            probatio.Optional(F_HEADERS): ObjectSelector(
                ObjectSelectorConfig(
                    multiple=True,
                    label_field=HEADER_NAME,
                    description_field=HEADER_VALUE,
                    translation_key="tool_headers",
                    fields={
                        HEADER_NAME: {
                            "selector": {"text": {}},
                            "required": True,
                            "label": "Header",
                        },
                        HEADER_VALUE: {
                            "selector": {"text": {}},
                            "required": True,
                            "label": "Value",
                        },
                    },
                )
            ),
            probatio.Required(F_BODY_FORMAT, default="json"): _select(
                BODY_FORMATS, "tool_body_format"
            ),
            probatio.Optional(F_BODY): ObjectSelector(),
            probatio.Required(F_AUTH, default=AUTH_NONE): _select(
                (AUTH_NONE, "basic", "digest"), "tool_auth"
            ),
            probatio.Optional(F_AUTH_USERNAME): TextSelector(),
            probatio.Optional(F_AUTH_PASSWORD): TextSelector(),
            probatio.Optional(F_STEPS): ObjectSelector(),
            probatio.Optional(F_RESPONSE): ObjectSelector(),
            probatio.Optional(F_SPEECH): TextSelector(),
            probatio.Optional(F_PARAMETERS): ObjectSelector(),
            probatio.Optional(F_TIMEOUT): NumberSelector(
                NumberSelectorConfig(
                    min=1,
                    max=MAX_TIMEOUT,
                    step=1,
                    mode=NumberSelectorMode.BOX,
                    unit_of_measurement="s",
                )
            ),
            probatio.Required(F_ENABLED, default=True): BooleanSelector(),
            probatio.Required(F_VERIFY_SSL, default=True): BooleanSelector(),
            probatio.Required(F_READ_ONLY, default=FLAG_AUTO): _flag(),
            probatio.Required(F_DESTRUCTIVE, default=FLAG_AUTO): _flag(),
            probatio.Required(F_IDEMPOTENT, default=FLAG_AUTO): _flag(),
            probatio.Required(F_CONFIRM, default=DEFAULT_CONFIRM): SelectSelector(
                SelectSelectorConfig(
                    options=list(CONFIRM_MODES),
                    mode=SelectSelectorMode.DROPDOWN,
                    translation_key="tool_confirm",
                )
            ),
            probatio.Optional(F_CONFIRM_QUESTION): TextSelector(),
            probatio.Optional(F_PIN): TextSelector(),
        }
    )


def _flag() -> SelectSelector:
    """Automatic (by the verb), yes or no."""
    return _select((FLAG_AUTO, FLAG_YES, FLAG_NO), "tool_flag")


def _select(options: Iterable[str], key: str) -> SelectSelector:
    """A dropdown of fixed, translated options."""
    return SelectSelector(
        SelectSelectorConfig(
            options=list(options),
            mode=SelectSelectorMode.DROPDOWN,
            translation_key=key,
        )
    )


def form_values(raw: Mapping[str, Any] | None) -> dict[str, Any]:
    """What the form shows for a stored definition (None: a new tool)."""
    if raw is None:
        return {
            F_METHOD: DEFAULT_FORM_METHOD,
            F_PARAMETERS: dict(DEFAULT_PARAMETERS),
            F_ENABLED: True,
            F_VERIFY_SSL: True,
            F_BODY_FORMAT: "json",
            F_AUTH: AUTH_NONE,
            **dict.fromkeys(FLAGS, FLAG_AUTO),
            F_CONFIRM: DEFAULT_CONFIRM,
        }
    headers = raw.get(F_HEADERS)
    values: dict[str, Any] = {
        F_NAME: raw.get(F_NAME, ""),
        F_DESCRIPTION: raw.get(F_DESCRIPTION) or "",
        F_METHOD: str(raw.get(F_METHOD) or "POST").upper(),
        F_URL: raw.get(F_URL, ""),
        F_HEADERS: [
            {HEADER_NAME: key, HEADER_VALUE: value}
            for key, value in (headers.items() if isinstance(headers, Mapping) else ())
        ],
        F_PARAMETERS: raw.get(F_PARAMETERS) or dict(DEFAULT_PARAMETERS),
        F_ENABLED: raw.get(F_ENABLED) is not False,
        F_VERIFY_SSL: raw.get(F_VERIFY_SSL) is not False,
        F_BODY_FORMAT: raw.get(F_BODY_FORMAT) or "json",
        F_AUTH: AUTH_NONE,
        F_CONFIRM: raw.get(F_CONFIRM) or DEFAULT_CONFIRM,
    }
    for key in (F_BODY, F_STEPS, F_RESPONSE, F_SPEECH, F_TIMEOUT):
        if raw.get(key) is not None:
            values[key] = raw[key]
    auth = raw.get(F_AUTH)
    if isinstance(auth, Mapping):
        values[F_AUTH] = auth.get("type") or AUTH_NONE
        values[F_AUTH_USERNAME] = auth.get("username") or ""
        values[F_AUTH_PASSWORD] = auth.get("password") or ""
    for flag in FLAGS:
        flag_value = raw.get(flag)
        values[flag] = (
            FLAG_AUTO if flag_value is None else FLAG_YES if flag_value else FLAG_NO
        )
    for key in (F_CONFIRM_QUESTION, F_PIN):
        if raw.get(key):
            values[key] = raw[key]
    return values


class ToolFormError(Exception):
    """The form holds problems; `problems` name the tool and the field."""

    def __init__(self, problems: Iterable[DefinitionProblem]) -> None:
        """Keep the problems."""
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems))


def _raw_definition(
    user_input: Mapping[str, Any], tool: str
) -> tuple[dict[str, Any], list[DefinitionProblem]]:
    """The form's values in the file format, and what the form itself got wrong."""
    problems: list[DefinitionProblem] = []
    raw: dict[str, Any] = {
        F_NAME: str(user_input.get(F_NAME) or "").strip(),
        F_DESCRIPTION: str(user_input.get(F_DESCRIPTION) or "").strip(),
        F_URL: str(user_input.get(F_URL) or "").strip(),
        F_METHOD: str(user_input.get(F_METHOD) or DEFAULT_FORM_METHOD).strip(),
    }
    steps = user_input.get(F_STEPS)
    if steps not in (None, "", [], {}):
        raw[F_STEPS] = steps
        # The verb and URL are each step's; the form always has a verb.
        raw.pop(F_METHOD)
        if not raw[F_URL]:
            raw.pop(F_URL)
    headers: dict[str, str] = {}
    pairs = user_input.get(F_HEADERS) or []
    for pair in pairs if isinstance(pairs, list) else [pairs]:
        name = str((pair or {}).get(HEADER_NAME) or "").strip()
        value = (pair or {}).get(HEADER_VALUE)
        value = "" if value is None else str(value)
        if not name:
            problems.append(
                DefinitionProblem(None, tool, F_HEADERS, "a header has no name")
            )
        elif name in headers:
            problems.append(
                DefinitionProblem(
                    None, tool, f"headers.{name}", "the header is given twice"
                )
            )
        else:
            headers[name] = value
    if headers:
        raw[F_HEADERS] = headers
    parameters = user_input.get(F_PARAMETERS)
    if parameters not in (None, "", {}):
        raw[F_PARAMETERS] = parameters
    if user_input.get(F_TIMEOUT) not in (None, ""):
        raw[F_TIMEOUT] = user_input[F_TIMEOUT]
    if user_input.get(F_ENABLED) is False:
        raw[F_ENABLED] = False
    if user_input.get(F_VERIFY_SSL) is False:
        raw[F_VERIFY_SSL] = False
    if user_input.get(F_BODY) not in (None, ""):
        raw[F_BODY] = user_input[F_BODY]
    if (body_format := user_input.get(F_BODY_FORMAT)) not in (None, "", "json"):
        raw[F_BODY_FORMAT] = body_format
    if (auth := user_input.get(F_AUTH)) not in (None, "", AUTH_NONE):
        raw[F_AUTH] = {
            "type": auth,
            "username": str(user_input.get(F_AUTH_USERNAME) or ""),
            "password": str(user_input.get(F_AUTH_PASSWORD) or ""),
        }
    if user_input.get(F_RESPONSE) not in (None, "", {}):
        raw[F_RESPONSE] = user_input[F_RESPONSE]
    if speech := str(user_input.get(F_SPEECH) or "").strip():
        raw[F_SPEECH] = speech
    for flag in FLAGS:
        if (choice := user_input.get(flag)) in (FLAG_YES, FLAG_NO):
            raw[flag] = choice == FLAG_YES
    if (confirm := user_input.get(F_CONFIRM)) not in (None, "", DEFAULT_CONFIRM):
        raw[F_CONFIRM] = confirm
    for key in (F_CONFIRM_QUESTION, F_PIN):
        if text := str(user_input.get(key) or "").strip():
            raw[key] = text
    return raw, problems


def form_definition(
    user_input: Mapping[str, Any],
    *,
    other_names: Iterable[str],
    secrets: Iterable[str],
) -> ToolDefinition:
    """Validate the form as one definition among `other_names`.

    Raises ToolFormError with every problem, each naming tool and field.
    """
    tool = str(user_input.get(F_NAME) or "").strip() or None
    raw, problems = _raw_definition(user_input, tool or "")
    definition: ToolDefinition | None = None
    try:
        definition = parse_tools([raw])[0]
    except ToolDefinitionError as err:
        problems.extend(
            DefinitionProblem(None, p.tool or tool, p.field, p.message)
            for p in err.problems
        )
    if tool is not None and tool in set(other_names):
        problems.append(
            DefinitionProblem(None, tool, F_NAME, "another tool already has this name")
        )
    if definition is not None:
        problems.extend(missing_secrets([definition], secrets, numbered=False))
    if problems or definition is None:
        raise ToolFormError(problems)
    return definition


def form_errors(
    problems: Iterable[DefinitionProblem],
) -> tuple[dict[str, str], dict[str, str]]:
    """The form's errors (field -> error key) and their texts (placeholders)."""
    texts: dict[str, list[str]] = {}
    for problem in problems:
        where = problem.field or ""
        top = where.split(".", 1)[0].split("[", 1)[0]
        if where in ("auth.username", "auth.password"):
            top = where.replace(".", "_")
        field = top if top in FIELDS else BASE
        texts.setdefault(field, []).append(str(problem))
    errors = {field: f"invalid_tool_{field}" for field in texts}
    placeholders = {f"{field}_error": "" for field in (*FIELDS, BASE)}
    placeholders.update({f"{f}_error": "; ".join(t) for f, t in texts.items()})
    return errors, placeholders
