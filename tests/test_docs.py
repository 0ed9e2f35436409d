"""The documentation's examples cannot rot.

- Every JSON tool definition in README.md and docs/ (a ```json block that
  is a tool or an array of tools) passes the integration's own validator
  (`engine/definitions.py`), and every call written as text there is one the
  agent reads as a call.
- Every YAML example is checked by what Home Assistant would do with it: an
  action call against the schema Home Assistant registered for that action
  (this integration set up, as in a real installation), an automation by
  Home Assistant's automation validator and each action in it as above,
  configuration.yaml by the integration's own schema. A block that is none
  of these fails, unless the line before it says why it is not checked
  (`<!-- docs-test: not checked: … -->`).
- Every relative link, image and `#anchor` of README.md, docs/ and
  CONTRIBUTING.md resolves (GitHub's heading anchors).
- Every field, step and menu entry the forms show (strings.json) is named in
  the reference pages, and every picture in docs/images is shown on a page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
import json
from pathlib import Path
import re
from typing import Any

from homeassistant.components.automation.config import async_validate_config_item
from homeassistant.core import HomeAssistant
from homeassistant.helpers import config_validation as cv
from homeassistant.loader import async_get_integration
from homeassistant.setup import async_setup_component
from homeassistant.util.yaml.loader import parse_yaml
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.http_tools_agent.const import DOMAIN
from custom_components.http_tools_agent.engine.definitions import (
    ToolDefinitionError,
    parse_tools,
)
from custom_components.http_tools_agent.engine.textcalls import TextCallFilter

from .integration_files import ROOT, STRINGS, flows
from .markdown import (
    DOCS,
    README,
    Block,
    all_docs,
    anchors,
    blocks,
    links,
    reference_pages,
    user_docs,
)

# The fields of a tool definition (`engine/fields.py`); a call written as
# text has `name` and `arguments` instead.
TOOL_KEYS = frozenset({"url", "method", "headers", "parameters", "timeout"})
CALL_KEYS = frozenset({"arguments", "function"})
# Where the README must stay short: a person reads it in ten minutes.
README_MAX_LINES = 300


def _examples(*infos: str) -> list[Block]:
    return [b for page in user_docs() for b in blocks(page) if b.info in infos]


JSON_BLOCKS = _examples("json")
YAML_BLOCKS = _examples("yaml", "yml")


def _objects(value: Any) -> list[dict[str, Any]] | None:
    """The objects of a JSON value that is an object or a list of objects."""
    if isinstance(value, dict):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        return value
    return None


def json_kind(block: Block) -> str:
    """`tools`, `text call` or `data` (a response, an event, a body)."""
    objects = _objects(json.loads(block.text))
    if not objects:
        return "data"
    keys = set().union(*objects)
    if keys & CALL_KEYS and "name" in keys:
        return "text call"
    if keys & TOOL_KEYS or ("name" in keys and "description" in keys):
        return "tools"
    return "data"


def _id(block: Block) -> str:
    return block.where


def test_every_json_example_is_json() -> None:
    """A ```json block is JSON as written (a reader copies it)."""
    assert JSON_BLOCKS
    for block in JSON_BLOCKS:
        try:
            json.loads(block.text)
        except ValueError as err:
            pytest.fail(f"{block.where}: not JSON: {err}")


@pytest.mark.parametrize(
    "block", [b for b in JSON_BLOCKS if json_kind(b) == "tools"], ids=_id
)
def test_json_tools_pass_the_tool_validator(block: Block) -> None:
    """A tool (or an array of tools) shown in the docs is one the options,
    the tools file, `set_tools` and the REST endpoint accept."""
    value = json.loads(block.text)
    try:
        definitions = parse_tools(value if isinstance(value, list) else [value])
    except ToolDefinitionError as err:
        pytest.fail(f"{block.where}: {err}")
    assert definitions


@pytest.mark.parametrize(
    "block", [b for b in JSON_BLOCKS if json_kind(b) == "text call"], ids=_id
)
def test_json_text_calls_are_read_as_calls(block: Block) -> None:
    """A call written as text in the docs is read as that call (never
    spoken) by the agent's text-call filter."""
    objects = _objects(json.loads(block.text)) or []
    names = [o.get("name") or o["function"]["name"] for o in objects]
    parser = TextCallFilter({name: {"type": "object"} for name in names})
    out = parser.feed(block.text)
    out.extend(parser.finish())
    assert [c.name for c in out.calls] == names, block.where
    assert not out.text.strip(), f"{block.where}: spoken: {out.text!r}"


# --- YAML -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class YamlExample:
    """What a YAML block is, and the problems found in it."""

    block: Block
    kind: str
    problems: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()


def action_calls(node: Any) -> Iterator[dict[str, Any]]:
    """Every action call (`action: domain.name`) in a script or automation,
    at any depth (choose, if, sequence, parallel, repeat)."""
    if isinstance(node, list):
        for item in node:
            yield from action_calls(item)
    elif isinstance(node, dict):
        action = node.get("action")
        if isinstance(action, str) and "." in action and "{" not in action:
            yield node
        for value in node.values():
            yield from action_calls(value)


def check_call(hass: HomeAssistant, call: dict[str, Any]) -> str | None:
    """Why an action call would fail validation, or None: the registered
    service's own schema on its data (and target, as Home Assistant merges
    them)."""
    domain, _, name = call["action"].partition(".")
    service = hass.services.async_services_for_domain(domain).get(name)
    if service is None:
        return f"{call['action']}: no such action"
    data = {**(call.get("data") or {}), **(call.get("target") or {})}
    if service.schema is not None:
        try:
            service.schema(data)
        except Exception as err:
            return f"{call['action']}: {err}"
    return None


async def check_yaml(hass: HomeAssistant, block: Block) -> YamlExample:
    """Classify a YAML block and check it as Home Assistant would."""
    if block.note.startswith("not checked:"):
        reason = block.note.removeprefix("not checked:").strip()
        why = () if reason else ("says it is not checked, but not why",)
        return YamlExample(block, f"not checked ({reason})", why)
    try:
        value = parse_yaml(block.text)
    except Exception as err:
        return YamlExample(block, "broken", (f"not YAML: {err}",))
    problems: list[str] = []
    if isinstance(value, dict) and "action" in value:
        kind, steps = "action call", [value]
        try:
            cv.SCRIPT_SCHEMA(steps)
        except Exception as err:
            problems.append(f"not a valid action: {err}")
    elif isinstance(value, dict) and ("automation" in value or "triggers" in value):
        kind = "automation"
        automations = value.get("automation", value)
        steps = automations if isinstance(automations, list) else [automations]
        for automation in steps:
            try:
                await async_validate_config_item(hass, "docs", automation)
            except Exception as err:
                problems.append(f"not a valid automation: {err}")
    elif isinstance(value, dict) and value:
        kind, steps = "configuration.yaml", []
        for domain, config in value.items():
            try:
                integration = await async_get_integration(hass, domain)
            except Exception:
                problems.append(f"{domain}: no such integration")
                continue
            schema = getattr(integration.get_component(), "CONFIG_SCHEMA", None)
            if schema is None:
                problems.append(f"{domain}: takes no YAML configuration")
                continue
            try:
                schema({domain: config})
            except Exception as err:
                problems.append(f"{domain}: {err}")
    else:
        return YamlExample(
            block,
            "unknown",
            (
                "neither an action call, an automation nor configuration: "
                "make it one, or say why it is not checked "
                "(<!-- docs-test: not checked: REASON --> on the line before)",
            ),
        )
    calls = list(action_calls(steps))
    problems.extend(p for call in calls if (p := check_call(hass, call)))
    return YamlExample(block, kind, tuple(problems), tuple(c["action"] for c in calls))


async def test_yaml_examples_are_what_home_assistant_accepts(
    hass: HomeAssistant, setup_integration: MockConfigEntry
) -> None:
    """Each YAML example, in a Home Assistant with this integration set up:
    its action calls (ours: `set_tools`, `get_tools`, `reset_tools`,
    `run_tool`; and Home Assistant's) pass the schemas Home Assistant
    registered for them, its automations Home Assistant's validator, its
    configuration the integration's schema."""
    for domain in ("persistent_notification", "logger", "automation"):
        assert await async_setup_component(hass, domain, {})
    await hass.async_block_till_done()
    assert set(hass.services.async_services_for_domain(DOMAIN)) == {
        "set_tools",
        "get_tools",
        "reset_tools",
        "run_tool",
    }
    examples = [await check_yaml(hass, block) for block in YAML_BLOCKS]
    failures = [
        f"{e.block.where} ({e.kind}): {problem}"
        for e in examples
        for problem in e.problems
    ]
    assert not failures, "\n".join(failures)
    kinds = Counter(e.kind for e in examples)
    ours = Counter(
        call for e in examples for call in e.calls if call.startswith(f"{DOMAIN}.")
    )
    # Every action of ours is shown at least once, and checked.
    assert set(ours) == {
        f"{DOMAIN}.{name}"
        for name in ("set_tools", "get_tools", "reset_tools", "run_tool")
    }, ours
    assert kinds["action call"], kinds
    assert kinds["automation"], kinds


async def test_a_broken_action_example_would_be_caught(
    hass: HomeAssistant, setup_integration: MockConfigEntry, tmp_path: Path
) -> None:
    """The check above is no formality: a misspelt field, a missing one, an
    action that does not exist and a block of unknown shape all fail."""
    page = tmp_path / "page.md"
    page.write_text(
        "```yaml\naction: http_tools_agent.run_tool\ndata:\n  arguments: {}\n```\n"
        "```yaml\naction: http_tools_agent.set_tools\ndata:\n  tool: []\n```\n"
        "```yaml\naction: http_tools_agent.delete_tools\n```\n"
        "```yaml\n- just: a list\n```\n"
        "<!-- docs-test: not checked: a pipeline's storage -->\n"
        "```yaml\n- just: a list\n```\n",
        encoding="utf-8",
    )
    examples = [await check_yaml(hass, b) for b in blocks(page)]
    assert [bool(e.problems) for e in examples] == [True, True, True, True, False]
    assert "tool" in examples[0].problems[0]
    assert "tool" in examples[1].problems[0]
    assert "no such action" in examples[2].problems[0]
    assert examples[4].kind == "not checked (a pipeline's storage)"


# --- Links and anchors ------------------------------------------------------


def test_every_relative_link_and_anchor_resolves() -> None:
    """Links between the pages, to files of the repository and to headings
    (`#anchor`, GitHub's rules) all lead somewhere."""
    broken: list[str] = []
    checked = 0
    for page in all_docs():
        for link in links(page):
            if link.external:
                continue
            checked += 1
            path, _, anchor = link.target.partition("#")
            target = (page.parent / path).resolve() if path else page
            if not target.exists() or ROOT not in (target, *target.parents):
                broken.append(f"{link.where}: {link.target}: no such file")
            elif anchor and target.suffix == ".md" and anchor not in anchors(target):
                broken.append(f"{link.where}: {link.target}: no such heading")
    assert not broken, "\n".join(broken)
    assert checked > 50


def test_every_picture_is_shown() -> None:
    """Each picture in docs/images is on a page (the browser test renews
    them: a picture nobody shows is one nobody sees go stale)."""
    shown = {
        (page.parent / link.target).resolve()
        for page in user_docs()
        for link in links(page)
        if not link.external
    }
    pictures = sorted((DOCS / "images").glob("*.png"))
    assert pictures
    assert [p.name for p in pictures if p.resolve() not in shown] == []


# --- The forms' fields in the reference ------------------------------------

_REFERENCE = re.compile(r"^\[%key:component::" + DOMAIN + r"::(.+)%\]$")


def _text(value: str) -> str:
    """A string of strings.json with its reference followed."""
    if (match := _REFERENCE.match(value)) is None:
        return value
    node: Any = STRINGS
    for part in match[1].split("::"):
        node = node[part]
    assert isinstance(node, str)
    return node


def form_labels() -> dict[str, str]:
    """What the forms show by name: each step's title, menu entries, each
    field's label (sections too), by where it is in strings.json."""
    found: dict[str, str] = {}
    for flow_name, flow in flows(STRINGS).items():
        for step_id, step in flow.get("step", {}).items():
            at = f"{flow_name}.step.{step_id}"
            if "title" in step and "{" not in _text(step["title"]):
                found[f"{at}.title"] = _text(step["title"])
            for key, label in step.get("menu_options", {}).items():
                found[f"{at}.menu_options.{key}"] = _text(label)
            for key, label in step.get("data", {}).items():
                found[f"{at}.data.{key}"] = _text(label)
            for name, section in step.get("sections", {}).items():
                found[f"{at}.sections.{name}.name"] = _text(section["name"])
                for key, label in section.get("data", {}).items():
                    found[f"{at}.sections.{name}.data.{key}"] = _text(label)
    return found


def test_every_form_field_is_in_the_reference() -> None:
    """A person who sees a field in a form finds it in the reference pages
    by the name the form gives it."""
    # A name may wrap from one line of a page to the next.
    reference = " ".join(
        " ".join(p.read_text(encoding="utf-8").split()) for p in reference_pages()
    )
    labels = form_labels()
    assert len(labels) > 60
    missing = sorted(
        f"{where}: {label!r}"
        for where, label in labels.items()
        if label not in reference
    )
    assert not missing, "\n".join(missing)


# --- The README -------------------------------------------------------------


def test_the_readme_is_short_and_starts_with_the_two_commands() -> None:
    """A person reads it in ten minutes; the first thing it shows is how to
    run Home Assistant with the integration (the demo: with a model and
    tools to call), and the tests; then the demo, before installing."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, len(lines)
    first = blocks(README)[0]
    assert first.info == "bash"
    assert [line.split()[0] for line in first.text.splitlines()] == [
        "scripts/demo",
        "scripts/test",
    ]
    headings = [line for line in lines if line.startswith("## ")]
    assert headings[0] == "## Try it: the demo", headings
    pages = {
        (README.parent / link.target.partition("#")[0]).resolve()
        for link in links(README)
        if not link.external
    }
    assert set(reference_pages()) <= {p for p in pages if p.parent == DOCS}, (
        "README links every reference page"
    )


def test_the_doc_set_found_examples_of_every_kind() -> None:
    """The parsers above see what the pages hold (a change of fence style
    would otherwise check nothing)."""
    kinds = Counter(json_kind(b) for b in JSON_BLOCKS)
    assert kinds["tools"] >= 5, kinds
    assert kinds["text call"] >= 1, kinds
    assert len(YAML_BLOCKS) >= 8
    assert ROOT / "docs" / "tools.md" in reference_pages()
