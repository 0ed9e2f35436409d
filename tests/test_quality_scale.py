"""`quality_scale.yaml` against Home Assistant's quality scale.

hassfest skips this file for custom integrations, so it is checked here:
every rule of the installed Home Assistant's scale (read from its core
integrations' own files, so a new rule shows up with a Home Assistant bump)
is `done` or `exempt` with a reason; what the manifest claims matches; and
each `done` rule that can be checked in the source or the docs is. The
behaviour behind the rest (reauth, availability logging, test before setup,
coverage) is in the behaviour tests and CI.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
import importlib.metadata
from pathlib import Path
import re

import homeassistant
from homeassistant.const import Platform
from homeassistant.util.yaml import load_yaml_dict
from packaging.requirements import Requirement
import pytest

from .integration_files import (
    COMPONENT,
    HA_ERRORS,
    MANIFEST,
    ROOT,
    STRINGS,
    Source,
    call_name,
    keyword,
)

QUALITY_SCALE = load_yaml_dict(COMPONENT / "quality_scale.yaml")["rules"]
# The documentation a user reads: the README and the pages of docs/.
DOCS = "\n".join(
    p.read_text() for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
)
SOURCE = Source()


def core_rules() -> set[str]:
    """The rules every core integration's quality_scale.yaml lists."""
    files = (Path(homeassistant.__file__).parent / "components").glob(
        "*/quality_scale.yaml"
    )
    rule_sets = [set(load_yaml_dict(f)["rules"]) for f in files]
    assert len(rule_sets) > 100
    # hassfest requires every rule in every core file: they all agree.
    assert all(rules == rule_sets[0] for rules in rule_sets)
    return rule_sets[0]


def status(rule: str) -> str:
    """`done`, `exempt` or `todo`."""
    value = QUALITY_SCALE[rule]
    return str(value if isinstance(value, str) else value["status"])


def test_every_rule_is_done_or_exempt_with_a_reason() -> None:
    """Every rule of the scale, nothing else; none left to do; an exemption
    always says why (one line)."""
    assert set(QUALITY_SCALE) == core_rules()
    for rule, value in QUALITY_SCALE.items():
        assert status(rule) in ("done", "exempt"), rule
        if isinstance(value, dict):
            assert set(value) <= {"status", "comment"}, rule
            comment = value.get("comment", "")
            assert isinstance(comment, str), rule
            assert "\n" not in comment.strip(), rule
        if status(rule) == "exempt":
            assert isinstance(value, dict), rule
            assert value.get("comment", "").strip(), f"{rule}: exempt without a reason"
    assert MANIFEST["quality_scale"] == "platinum"


def docs_have(*headings: str) -> None:
    """Each heading (a regex) starts a section of the documentation (the
    README or a page of docs/)."""
    for heading in headings:
        assert re.search(rf"^#+ {heading}", DOCS, re.M), heading


def raises_setup_errors() -> None:
    """hassfest's test-before-setup check: the integration raises these."""
    raised = {name for name, _ in SOURCE.raised()}
    assert raised & {"ConfigEntryNotReady", "ConfigEntryAuthFailed"}


def platform_modules_set_parallel_updates() -> None:
    """Every platform module sets PARALLEL_UPDATES."""
    platforms = {p.value for p in Platform}
    modules = [p.name for p in COMPONENT.glob("*.py") if p.stem in platforms]
    assert modules
    for module in modules:
        assert SOURCE.defines("PARALLEL_UPDATES", module), module


def errors_are_translated() -> None:
    """Every Home Assistant error the code raises (or a subclass of one of
    ours) carries a translation key."""
    ours = {
        cls.name
        for cls in SOURCE.classes()
        for base in cls.bases
        if isinstance(base, ast.Name) and base.id in HA_ERRORS
    }
    checked = 0
    for name, call in SOURCE.raised():
        if name in HA_ERRORS | ours and call is not None:
            checked += 1
            assert keyword(call, "translation_key") is not None, name
    assert checked


def requirements_are_typed() -> None:
    """Strict typing reaches the requirements: each ships py.typed, and the
    installed version is one the manifest allows."""
    for text in MANIFEST["requirements"]:
        requirement = Requirement(text)
        dist = importlib.metadata.distribution(requirement.name)
        assert requirement.specifier.contains(dist.version), text
        assert any(str(f).endswith("py.typed") for f in dist.files or ()), text


def sessions_are_injected() -> None:
    """No HTTP client of our own: Home Assistant's sessions are passed in."""
    for call in SOURCE.calls():
        assert call_name(call) not in ("ClientSession", "AsyncClient", "OpenAI")
        if call_name(call) == "AsyncOpenAI":
            assert keyword(call, "http_client") is not None
    names = {
        alias.name
        for node in SOURCE.nodes()
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert "requests" not in names


def coverage_is_enforced() -> None:
    """CI fails below 95 % line coverage (scripts/test prints it)."""
    for path in (ROOT / ".ci/run", ROOT / ".github/workflows/ci.yml"):
        match = re.search(r"scripts/test .*--cov-fail-under=(\d+)", path.read_text())
        assert match is not None, path
        assert int(match.group(1)) >= 95, path


def services_set_up_once() -> None:
    """Actions are registered in async_setup, not per entry."""
    setup = next(f for f in SOURCE.functions("__init__.py") if f.name == "async_setup")
    calls = {call_name(c) for c in ast.walk(setup) if isinstance(c, ast.Call)}
    assert any("services" in name for name in calls)
    entry = next(
        f for f in SOURCE.functions("__init__.py") if f.name == "async_setup_entry"
    )
    entry_calls = {call_name(c) for c in ast.walk(entry) if isinstance(c, ast.Call)}
    assert not any("services" in name or name == "register" for name in entry_calls)


def no_hard_coded_icons() -> None:
    """Icons come from icons.json, not from the code."""
    assert (COMPONENT / "icons.json").is_file()
    assert not SOURCE.assigns_attribute("_attr_icon")
    assert not SOURCE.class_attribute("_attr_icon")


def entity_flag(name: str) -> Callable[[], None]:
    """An entity class sets `name` to True."""

    def check() -> None:
        values = SOURCE.class_attribute(name)
        assert any(isinstance(v, ast.Constant) and v.value is True for v in values)

    return check


def need(condition: Callable[[], object], what: str) -> Callable[[], None]:
    """A check that `condition()` holds; `what` says what is missing."""

    def check() -> None:
        assert condition(), what

    return check


EVIDENCE: dict[str, Callable[[], None]] = {
    "action-setup": services_set_up_once,
    "action-exceptions": need(
        lambda: any(n == "ServiceValidationError" for n, _ in SOURCE.raised()),
        "no ServiceValidationError",
    ),
    "brands": need((COMPONENT / "brand/icon.png").is_file, "no brand"),
    "config-entry-unloading": need(
        lambda: SOURCE.defines("async_unload_entry", "__init__.py"),
        "no async_unload_entry",
    ),
    "config-flow": need(
        lambda: (
            MANIFEST["config_flow"]
            and SOURCE.defines("async_step_user", "config_flow.py")
        ),
        "no config flow",
    ),
    "diagnostics": need(
        lambda: SOURCE.defines("async_get_config_entry_diagnostics", "diagnostics.py"),
        "no diagnostics",
    ),
    "entity-unavailable": need(
        lambda: SOURCE.defines("available", "entity.py"), "agents never unavailable"
    ),
    "entity-unique-id": need(
        lambda: SOURCE.assigns_attribute("_attr_unique_id"), "no unique id"
    ),
    "exception-translations": errors_are_translated,
    "has-entity-name": entity_flag("_attr_has_entity_name"),
    "icon-translations": no_hard_coded_icons,
    "inject-websession": sessions_are_injected,
    "integration-owner": need(lambda: MANIFEST["codeowners"], "no code owner"),
    "parallel-updates": platform_modules_set_parallel_updates,
    "reauthentication-flow": need(
        lambda: SOURCE.defines("async_step_reauth", "config_flow.py"), "no reauth step"
    ),
    "reconfiguration-flow": need(
        lambda: SOURCE.defines("async_step_reconfigure", "config_flow.py"),
        "no reconfigure step",
    ),
    "repair-issues": need(
        lambda: (
            STRINGS.get("issues")
            and any(call_name(c) == "async_create_issue" for c in SOURCE.calls())
        ),
        "no repair issue",
    ),
    "runtime-data": need(
        lambda: SOURCE.assigns_attribute("runtime_data"), "no runtime_data"
    ),
    "strict-typing": requirements_are_typed,
    "test-before-setup": raises_setup_errors,
    "test-coverage": coverage_is_enforced,
    "unique-config-entry": need(
        lambda: any(
            call_name(c) == "_async_abort_entries_match" for c in SOURCE.calls()
        ),
        "no unique entry check",
    ),
    # The documentation rules: the sections of the README and docs/.
    "docs-actions": lambda: docs_have("Actions"),
    "docs-configuration-parameters": lambda: docs_have("Configure", "Options"),
    "docs-data-update": lambda: docs_have("Data updates"),
    "docs-examples": lambda: docs_have("Example"),
    "docs-installation-instructions": lambda: docs_have("Install"),
    "docs-installation-parameters": lambda: docs_have("Configure"),
    "docs-known-limitations": lambda: docs_have("Known limitations"),
    "docs-removal-instructions": lambda: docs_have("Remov"),
    "docs-supported-devices": lambda: docs_have("Supported servers"),
    "docs-supported-functions": lambda: docs_have(
        "Tools", "Actions", "Event", "Diagnostics"
    ),
    "docs-troubleshooting": lambda: docs_have("Troubleshooting"),
    "docs-use-cases": lambda: docs_have("Use cases"),
}


@pytest.mark.parametrize("rule", sorted(EVIDENCE))
def test_done_rules_hold(rule: str) -> None:
    """What can be checked without running Home Assistant, is."""
    if status(rule) != "done":
        pytest.skip(f"{rule} is {status(rule)}")
    EVIDENCE[rule]()


def test_evidence_names_real_rules() -> None:
    """A renamed rule cannot leave its check behind unnoticed."""
    assert set(EVIDENCE) <= core_rules()
