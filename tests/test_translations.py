"""Translations: en.json is generated; every other says the same things."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
import re
import string
from typing import Any

from homeassistant.util.yaml import load_yaml
import pytest

ROOT = Path(__file__).resolve().parents[1]
COMPONENT = ROOT / "custom_components" / "http_tools_agent"
TRANSLATIONS = COMPONENT / "translations"
PLACEHOLDER_RE = re.compile(r"\{([a-z_]+)\}")
# Every translation beside English (a language added is checked here).
OTHERS = sorted(path.stem for path in TRANSLATIONS.glob("*.json") if path.stem != "en")


def load(name: str) -> dict[str, Any]:
    """Read a translation file."""
    data: dict[str, Any] = json.loads(
        (TRANSLATIONS / f"{name}.json").read_text(encoding="utf-8")
    )
    return data


def formatter_fields(text: str) -> set[str]:
    """The fields Home Assistant's placeholder check reads in `text`."""
    return {field for _, field, _, _ in string.Formatter().parse(text) if field}


def flatten(node: Any, prefix: str = "") -> dict[str, str]:
    """Map each key path to its string."""
    if isinstance(node, dict):
        flat: dict[str, str] = {}
        for key, value in node.items():
            flat.update(flatten(value, f"{prefix}{key}."))
        return flat
    assert isinstance(node, str), prefix
    return {prefix.rstrip("."): node}


def test_en_json_is_generated_from_strings() -> None:
    """en.json is exactly what scripts/translations.py writes."""
    spec = importlib.util.spec_from_file_location(
        "translations_script", ROOT / "scripts" / "translations.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (TRANSLATIONS / "en.json").read_text(encoding="utf-8") == module.english()


@pytest.mark.parametrize("language", OTHERS)
def test_same_keys_and_placeholders_as_english(language: str) -> None:
    """Every string of strings.json (en.json is generated from it) is
    translated, with the same placeholders."""
    english = flatten(load("en"))
    other = flatten(load(language))
    assert sorted(other) == sorted(english)
    for key, text in english.items():
        assert set(PLACEHOLDER_RE.findall(other[key])) == set(
            PLACEHOLDER_RE.findall(text)
        ), key
        # What Home Assistant compares before it uses a translation (else it
        # falls back to English): the fields `string.Formatter` reads.
        assert formatter_fields(other[key]) == formatter_fields(text), key
        assert "[%key:" not in other[key], key
        assert other[key].strip(), key


def test_services_are_described_everywhere() -> None:
    """services.yaml, icons.json and the strings name the same services."""
    services = load_yaml(COMPONENT / "services.yaml")
    assert isinstance(services, dict)
    icons = json.loads((COMPONENT / "icons.json").read_text())
    strings = load("en")["services"]
    assert set(services) == set(icons["services"]) == set(strings)
    for name, service in services.items():
        assert set(service["fields"]) == set(strings[name]["fields"]), name


def test_code_keys_have_strings() -> None:
    """Error and exception keys used by the code, in every module of every
    folder, exist in the strings."""
    english = load("en")
    modules = sorted(COMPONENT.rglob("*.py"))
    code = "\n".join(p.read_text(encoding="utf-8") for p in modules)
    form_errors = re.findall(r'errors\[[A-Za-z_"]+\] = "([a-z_]+)"', code)
    file_errors = re.findall(r'ToolsFileError\(\s*"([a-z_]+)"', code)
    exceptions = re.findall(r'translation_key="([a-z_]+)"', code)
    # The patterns still find the code's keys (a scan that finds none checks
    # nothing): the forms' errors, the tools file's, the exceptions'.
    assert min(len(form_errors), len(file_errors), len(exceptions)) > 0
    for key in file_errors:
        assert key in english["options"]["error"], key
    for key in form_errors:  # the options' forms, or the config flow's
        assert (
            key in english["options"]["error"] or key in english["config"]["error"]
        ), key
    for key in exceptions:
        assert (
            key in english["exceptions"]
            or key in english["issues"]
            or key in english["selector"]
        ), key


# ICU message format, as the frontend reads the strings: `'{' … '}'` quotes
# literal braces; any other brace must be a `{placeholder}`.
_QUOTED_RE = re.compile(r"'[{}][^']*'")
_SIMPLE_PLACEHOLDER_RE = re.compile(r"\{[a-z_]+\}")


@pytest.mark.parametrize("language", ["en", *OTHERS])
def test_strings_are_valid_messages(language: str) -> None:
    """A literal brace the frontend would read as a malformed argument (it
    shows "Translation error: MALFORMED_ARGUMENT") must be quoted."""
    for key, text in flatten(load(language)).items():
        bare = _SIMPLE_PLACEHOLDER_RE.sub("", _QUOTED_RE.sub("", text))
        assert "{" not in bare, (key, text)
        assert "}" not in bare, (key, text)
