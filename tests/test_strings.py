"""The strings against hassfest's rules, the translations against English,
and every translation key and service the code uses against what they
describe. Generic: every flow, step, field, key, service and language file
there is, whatever the integration gains.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from homeassistant import const as ha_const
from homeassistant.core import HomeAssistant
from homeassistant.helpers import config_validation as cv
from homeassistant.util.yaml import load_yaml_dict

from custom_components.http_tools_agent.agent_settings import AGENT_SETTINGS, Section
from custom_components.http_tools_agent.const import (
    CONF_ADVANCED,
    DOMAIN,
    SUBENTRY_CONVERSATION,
)

from .integration_files import (
    COMPONENT,
    STRINGS,
    Source,
    call_name,
    flat,
    flows,
    keyword,
)
from .kit import load_integration

REFERENCE_RE = re.compile(r"\[%key:([^%]+)%\]")
PLACEHOLDER_RE = re.compile(r"\{(\w+)\}")
# hassfest's rule for translation keys (selector options, service fields...).
TRANSLATION_KEY_RE = re.compile(r"^(?!.+[_-]{2})(?![_-])[a-z0-9-_]+(?<![_-])$")


def test_strings_are_what_hassfest_accepts() -> None:
    """Every string: trimmed, no HTML, no placeholder in single quotes; a
    reference is the whole string and points straight at a string of ours."""
    own = flat(STRINGS)
    for path, text in own.items():
        assert isinstance(text, str), path
        assert text == text.strip(), path
        cv.string_with_no_html(text)
        assert not re.search(r"'\{\w+\}'", text), path
        if match := REFERENCE_RE.search(text):
            assert match.group(0) == text, f"{path}: a reference must stand alone"
            prefix = f"component::{DOMAIN}::"
            assert match.group(1).startswith(prefix), path
            target = own.get(match.group(1).removeprefix(prefix).replace("::", "."))
            assert isinstance(target, str), f"{path}: {match.group(1)} not found"
            assert not REFERENCE_RE.search(target), f"{path}: one level only"


def test_every_field_of_every_step_has_a_description() -> None:
    """Each field a form shows has a label and a `data_description`, in
    every step of every flow (sections too)."""
    for name, flow in flows(STRINGS).items():
        for step_id, step in flow.get("step", {}).items():
            parts = [step, *step.get("sections", {}).values()]
            for part in parts:
                data = set(part.get("data", {}))
                described = set(part.get("data_description", {}))
                assert described <= data, f"{name}.{step_id}: {described - data}"
                assert data <= described, f"{name}.{step_id}: {data - described}"


def test_every_form_field_in_the_code_has_a_label() -> None:
    """Every field a flow module (`config_flow.py`, `flows/`) puts in a form
    schema is a labelled (and so, above, described) field of some step in
    the strings."""
    source = Source()
    labelled = {
        field
        for flow in flows(STRINGS).values()
        for step in flow.get("step", {}).values()
        for part in [step, *step.get("sections", {}).values()]
        for field in part.get("data", {})
    } | {
        # A form's sections (the agent form's "advanced") are keys too.
        section
        for flow in flows(STRINGS).values()
        for step in flow.get("step", {}).values()
        for section in step.get("sections", {})
    }
    fields: set[str] = set()
    for path, tree in source.trees.items():
        if path.name != "config_flow.py" and path.parent.name != "flows":
            continue
        for call in ast.walk(tree):
            if (
                isinstance(call, ast.Call)
                and call_name(call) in ("Required", "Optional")
                and call.args
            ):
                arg = call.args[0]
                if ast.unparse(arg) == "setting.key":
                    continue  # the settings table's fields: the next test
                if ast.unparse(arg) == "parameter" and path.name == "try_it.py":
                    # Try it's fields are the tool's parameters, named by
                    # whoever wrote the tool, labelled by those names.
                    continue
                name = source.text(arg)
                if name is None and isinstance(arg, ast.Name):
                    # Home Assistant's own constants (CONF_API_KEY...).
                    name = getattr(ha_const, arg.id, None)
                assert isinstance(name, str), ast.unparse(call)
                fields.add(name)
    assert fields
    assert fields <= labelled, sorted(fields - labelled)


def test_every_agent_setting_is_labelled_where_the_form_shows_it() -> None:
    """Each setting of the table the agent form is built from has a label
    and a description in the part of the form that shows it, in both of the
    agent's steps."""
    steps = STRINGS["config_subentries"][SUBENTRY_CONVERSATION]["step"]
    for step_id in ("user", "reconfigure"):
        step = steps[step_id]
        for setting in AGENT_SETTINGS:
            part = (
                step["sections"][CONF_ADVANCED]
                if setting.section is Section.ADVANCED
                else step
            )
            assert setting.key in part["data"], (step_id, setting.key)
            assert setting.key in part["data_description"], (step_id, setting.key)


def test_translation_keys_are_valid() -> None:
    """Selector options, services and their fields, exceptions and issues
    use keys hassfest accepts."""
    keys = [
        *(
            k
            for s in STRINGS.get("selector", {}).values()
            for k in s.get("options", {})
        ),
        *(k for s in STRINGS.get("selector", {}).values() for k in s.get("fields", {})),
        *STRINGS.get("services", {}),
        *(f for s in STRINGS.get("services", {}).values() for f in s.get("fields", {})),
        *STRINGS.get("exceptions", {}),
        *STRINGS.get("issues", {}),
    ]
    for key in keys:
        assert TRANSLATION_KEY_RE.match(key), key


def test_every_translation_file_has_the_same_keys() -> None:
    """Every language says everything English says, with the same
    placeholders and no unresolved reference."""
    english = flat(json.loads((COMPONENT / "translations/en.json").read_text()))
    for path in sorted((COMPONENT / "translations").glob("*.json")):
        other = flat(json.loads(path.read_text()))
        assert sorted(other) == sorted(english), path.name
        for key, text in other.items():
            assert set(PLACEHOLDER_RE.findall(text)) == set(
                PLACEHOLDER_RE.findall(english[key])
            ), f"{path.name}: {key}"
            assert not REFERENCE_RE.search(text), f"{path.name}: {key}"


# --- the code against the strings ---------------------------------------------


def keys_the_code_uses(source: Source) -> dict[str, set[str]]:
    """Translation keys the code names, by where they must be.

    `exceptions` (raised errors, spoken messages, and helpers that pass a
    parameter on as `translation_key`), `issues`, `selector.<key>` (select
    options), `error`/`abort`/`step` (of any flow), `menu.<step>`.
    """
    used: dict[str, set[str]] = {}

    def add(where: str, keys: ast.expr | str | tuple[str, ...] | None) -> None:
        # A key computed at runtime (`err.reason`) is the behaviour tests' job.
        if isinstance(keys, str):
            keys = (keys,)
        elif not isinstance(keys, tuple):
            keys = tuple(source.choices(keys))
        used.setdefault(where, set()).update(keys)

    forwarders = _translation_key_forwarders(source)
    reason_classes = {
        cls.name
        for cls in source.classes()
        for f in cls.body
        if isinstance(f, ast.FunctionDef)
        and f.name == "__init__"
        and [a.arg for a in f.args.args[1:2]] == ["reason"]
    }
    for call in source.calls():
        name = call_name(call)
        key = keyword(call, "translation_key")
        if name == "SelectSelectorConfig":
            for selector in source.choices(key):
                add(f"selector.{selector}", source.texts(keyword(call, "options")))
        elif name == "ObjectSelectorConfig" and key is not None:
            # An object selector's fields are named under `selector.<key>.fields`.
            add("object selectors", key)
        elif key is not None:
            add("issues" if name == "async_create_issue" else "exceptions", key)
        if name == "async_abort":
            add("abort", keyword(call, "reason"))
        if name in ("async_show_form", "async_show_menu"):
            for step in source.choices(keyword(call, "step_id")):
                add("step", step)
                add(f"menu.{step}", source.texts(keyword(call, "menu_options")))
        if name in ("_async_abort_entries_match", "_abort_if_unique_id_configured"):
            add("abort", "already_configured")
        if name in reason_classes and call.args:
            add("error", call.args[0])
        if name in forwarders:
            index, param, options = forwarders[name]

            def argument(index: int, param: str, call: ast.Call = call) -> Any:
                value = keyword(call, param)
                if value is None and len(call.args) > index:
                    value = call.args[index]
                return value

            if options is None:
                add("exceptions", argument(index, param))
            else:
                # A helper building a translated dropdown: its choices.
                for selector in source.choices(argument(index, param)):
                    add(f"selector.{selector}", source.texts(argument(*options)))
    for node in source.nodes():
        if not isinstance(node, ast.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0], node.value
        if isinstance(target, ast.Name) and target.id in ("key", "translation_key"):
            add("exceptions", value)
        if (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and target.value.id == "errors"
        ):
            add("error", value)
    return {where: keys for where, keys in used.items() if keys}


def _translation_key_forwarders(
    source: Source,
) -> dict[str, tuple[int, str, tuple[int, str] | None]]:
    """Functions that pass one of their parameters on as `translation_key`
    (with, for a select selector, the parameter its options come from)."""
    found: dict[str, tuple[int, str, tuple[int, str] | None]] = {}
    for function in source.functions():
        params = [a.arg for a in function.args.args]
        for call in ast.walk(function):
            if not isinstance(call, ast.Call):
                continue
            value = keyword(call, "translation_key")
            if not (isinstance(value, ast.Name) and value.id in params):
                continue
            options = None
            if call_name(call) == "SelectSelectorConfig":
                names = [
                    n.id
                    for n in ast.walk(keyword(call, "options") or ast.Constant(None))
                    if isinstance(n, ast.Name) and n.id in params
                ]
                options = (params.index(names[0]), names[0]) if names else None
            found[function.name] = (params.index(value.id), value.id, options)
    return found


def test_every_key_the_code_uses_has_a_string() -> None:
    """Errors, spoken messages, repair issues, select options, flow steps,
    menus, form errors and abort reasons named in the code all have text."""
    used = keys_the_code_uses(Source())
    all_flows = flows(STRINGS).values()
    sections = {
        "exceptions": set(STRINGS.get("exceptions", {})),
        "issues": set(STRINGS.get("issues", {})),
        "error": {k for f in all_flows for k in f.get("error", {})},
        "abort": {k for f in all_flows for k in f.get("abort", {})}
        # Home Assistant's own: the reauth and reconfigure shortcuts use them.
        | {"reauth_successful", "reconfigure_successful"},
        "step": {k for f in all_flows for k in f.get("step", {})},
        "object selectors": {
            k for k, v in STRINGS.get("selector", {}).items() if v.get("fields")
        },
    }
    # The scan finds what it looks for (an empty result would prove nothing).
    assert {"exceptions", "error", "step", "abort"} <= set(used)
    for where, keys in used.items():
        if where.startswith("selector."):
            have = set(STRINGS["selector"][where.split(".", 1)[1]]["options"])
        elif where.startswith("menu."):
            step = where.split(".", 1)[1]
            have = {
                k
                for f in all_flows
                for k in f.get("step", {}).get(step, {}).get("menu_options", {})
            }
        else:
            have = sections[where]
        assert keys <= have, f"{where}: {sorted(keys - have)}"


async def test_services_yaml_matches_the_registered_services(
    hass: HomeAssistant,
) -> None:
    """What Home Assistant registers is what services.yaml, the strings and
    icons.json describe, field for field."""
    await load_integration(hass)
    registered = hass.services.async_services_for_domain(DOMAIN)
    described = load_yaml_dict(COMPONENT / "services.yaml")
    icons = json.loads((COMPONENT / "icons.json").read_text())["services"]
    assert set(registered) == set(described) == set(STRINGS["services"]) == set(icons)
    for name, service in registered.items():
        schema = getattr(service.schema, "schema", {})
        fields = described[name].get("fields", {})
        assert {str(key) for key in schema} == set(fields), name
        for field_name, field in fields.items():
            assert "selector" in field, f"{name}.{field_name}"
        texts = STRINGS["services"][name]
        assert texts["name"], name
        assert texts["description"], name
        assert set(texts.get("fields", {})) == set(fields), name
        assert "service" in icons[name], name
