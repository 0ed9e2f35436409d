"""The tool editor's form: its fields, and a stored tool as their values.

Fields: name, description, method (the common verbs, or any typed), URL,
headers (name/value pairs: an object selector with fields), the body and
its format, authentication (type, username, password), steps, the response
shape and the tool's own sentence, its sentences (what a user may say to
run it without a model: an object of languages to templates), parameters (a JSON Schema in Home
Assistant's code editor), timeout, enabled, verify_ssl, what the tool does
(read-only, destructive, idempotent: automatic from the verb unless set),
and whether it asks first (confirm, its question, a PIN).
The way back, the form's values as a checked definition, is
`tool_from_form.py`.
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
F_PAGES = "pages"
F_SPEECH = "speech"
F_SENTENCES = "sentences"
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
    F_PAGES,
    F_SPEECH,
    F_SENTENCES,
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
                (AUTH_NONE, "basic", "digest", "oauth2"), "tool_auth"
            ),
            probatio.Optional(F_AUTH_USERNAME): TextSelector(),
            probatio.Optional(F_AUTH_PASSWORD): TextSelector(),
            probatio.Optional(F_STEPS): ObjectSelector(),
            probatio.Optional(F_RESPONSE): ObjectSelector(),
            probatio.Optional(F_PAGES): ObjectSelector(),
            probatio.Optional(F_SPEECH): TextSelector(),
            probatio.Optional(F_SENTENCES): ObjectSelector(),
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
    for key in (
        F_BODY,
        F_STEPS,
        F_RESPONSE,
        F_PAGES,
        F_SPEECH,
        F_SENTENCES,
        F_TIMEOUT,
    ):
        if raw.get(key) is not None:
            values[key] = raw[key]
    auth = raw.get(F_AUTH)
    if isinstance(auth, Mapping):
        values[F_AUTH] = auth.get("type") or AUTH_NONE
        # An OAuth2 sign-in's name is in the username box.
        values[F_AUTH_USERNAME] = auth.get("username") or auth.get("sign_in") or ""
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
