"""The tool editor's form back to a tool: its values as a definition in the
file format, checked by the same validator as every other source; each
problem is shown under its field and names the tool and the field."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..engine.confirm import DEFAULT_CONFIRM
from ..engine.definitions import (
    DefinitionProblem,
    ToolDefinition,
    ToolDefinitionError,
    missing_secrets,
    parse_tools,
)
from .tool_form import (
    AUTH_NONE,
    BASE,
    DEFAULT_FORM_METHOD,
    F_AUTH,
    F_AUTH_PASSWORD,
    F_AUTH_USERNAME,
    F_BODY,
    F_BODY_FORMAT,
    F_CONFIRM,
    F_CONFIRM_QUESTION,
    F_DESCRIPTION,
    F_ENABLED,
    F_HEADERS,
    F_METHOD,
    F_NAME,
    F_PAGES,
    F_PARAMETERS,
    F_PIN,
    F_RESPONSE,
    F_SENTENCES,
    F_SPEECH,
    F_STEPS,
    F_TIMEOUT,
    F_URL,
    F_VERIFY_SSL,
    FIELDS,
    FLAG_NO,
    FLAG_YES,
    FLAGS,
    HEADER_NAME,
    HEADER_VALUE,
)


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
    if (auth := user_input.get(F_AUTH)) == "oauth2":
        raw[F_AUTH] = {
            "type": auth,
            "sign_in": str(user_input.get(F_AUTH_USERNAME) or ""),
        }
    elif auth not in (None, "", AUTH_NONE):
        raw[F_AUTH] = {
            "type": auth,
            "username": str(user_input.get(F_AUTH_USERNAME) or ""),
            "password": str(user_input.get(F_AUTH_PASSWORD) or ""),
        }
    if user_input.get(F_RESPONSE) not in (None, "", {}):
        raw[F_RESPONSE] = user_input[F_RESPONSE]
    if user_input.get(F_PAGES) not in (None, "", {}):
        raw[F_PAGES] = user_input[F_PAGES]
    if speech := str(user_input.get(F_SPEECH) or "").strip():
        raw[F_SPEECH] = speech
    if user_input.get(F_SENTENCES) not in (None, "", {}):
        raw[F_SENTENCES] = user_input[F_SENTENCES]
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
