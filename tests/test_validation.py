"""What hassfest and HACS's validation check, checked offline on every run.

`.github/workflows/validate.yml` runs the real validators on GitHub; these
tests check here what they check without GitHub's API: the repository's
layout, `hacs.json`, the manifest, the brand images and the workflows.
`test_strings.py` checks the strings, translations, keys and services the
code uses; `test_quality_scale.py` checks `quality_scale.yaml`.
"""

from __future__ import annotations

import json
from pathlib import Path
import re
import struct

from awesomeversion import AwesomeVersion, AwesomeVersionStrategy
import homeassistant
from homeassistant import const as ha_const
from homeassistant.components.brands.const import ALLOWED_IMAGES
from homeassistant.util.yaml import load_yaml_dict

from custom_components.http_tools_agent.const import DOMAIN

from .integration_files import COMPONENT, MANIFEST, ROOT

HA_COMPONENTS = Path(homeassistant.__file__).parent / "components"
SHA_PIN_RE = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40}$")


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from a PNG's header (which must be a PNG's)."""
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def version(text: str) -> AwesomeVersion:
    """A version the way hassfest accepts one."""
    return AwesomeVersion(
        text,
        ensure_strategy=[
            AwesomeVersionStrategy.CALVER,
            AwesomeVersionStrategy.SEMVER,
            AwesomeVersionStrategy.SIMPLEVER,
            AwesomeVersionStrategy.BUILDVER,
            AwesomeVersionStrategy.PEP440,
        ],
    )


# --- the repository, hacs.json, the manifest, the brand ----------------------


def test_repository_layout_is_what_hacs_installs() -> None:
    """One integration under custom_components, a README, an Apache-2.0
    LICENSE (HACS reads its SPDX id through GitHub), as pyproject says."""
    dirs = [
        p.name
        for p in (ROOT / "custom_components").iterdir()
        if p.is_dir() and p.name != "__pycache__"
    ]
    assert dirs == [MANIFEST["domain"]]
    assert (ROOT / "README.md").is_file()
    license_text = (ROOT / "LICENSE").read_text()
    assert license_text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "END OF TERMS AND CONDITIONS" in license_text
    assert 'license = "Apache-2.0"' in (ROOT / "pyproject.toml").read_text()


def test_hacs_json() -> None:
    """HACS's schema (no other keys), and a minimum Home Assistant version
    the tests run on and the README states."""
    hacs = json.loads((ROOT / "hacs.json").read_text())
    allowed: dict[str, type | tuple[type, ...]] = {
        "content_in_root": bool,
        "country": (str, list),
        "filename": str,
        "hacs": str,
        "hide_default_branch": bool,
        "homeassistant": str,
        "persistent_directory": str,
        "render_readme": bool,
        "zip_release": bool,
        "name": str,
    }
    assert set(hacs) <= set(allowed), set(hacs) - set(allowed)
    for key, value in hacs.items():
        assert isinstance(value, allowed[key]), key
    assert hacs["name"] == MANIFEST["name"]
    assert not hacs.get("zip_release") or hacs.get("filename")
    assert not hacs.get("content_in_root")
    minimum = hacs["homeassistant"]
    assert version(minimum) <= AwesomeVersion(ha_const.__version__)
    readme = (ROOT / "README.md").read_text()
    assert f"Home Assistant {minimum} or newer" in readme


def test_manifest_for_hacs_and_hassfest() -> None:
    """HACS's required keys; hassfest's custom-integration schema: known
    keys only, sorted (domain, name, then alphabetical), valid values."""
    m = MANIFEST
    for key in ("codeowners", "documentation", "domain", "issue_tracker", "name"):
        assert key in m, key
    allowed = {
        *("domain", "name", "integration_type", "config_flow", "mqtt"),
        *("zeroconf", "ssdp", "bluetooth", "homekit", "dhcp", "usb"),
        *("documentation", "quality_scale", "requirements", "dependencies"),
        *("after_dependencies", "codeowners", "loggers", "disabled", "iot_class"),
        *("single_config_entry", "preview_features", "version", "issue_tracker"),
        "import_executor",
    }
    assert set(m) <= allowed, set(m) - allowed
    assert list(m) == ["domain", "name", *sorted(set(m) - {"domain", "name"})]
    assert m["domain"] == COMPONENT.name == DOMAIN
    assert not (HA_COMPONENTS / m["domain"]).exists(), "collides with a core domain"
    for url_key in ("documentation", "issue_tracker"):
        assert m[url_key].startswith("https://"), url_key
    assert not m["documentation"].startswith(
        "https://www.home-assistant.io/integrations"
    )
    assert m["iot_class"] in {
        *("assumed_state", "calculated", "cloud_polling"),
        *("cloud_push", "local_polling", "local_push"),
    }
    assert m.get("integration_type", "hub") in {
        *("device", "entity", "hardware", "helper", "hub", "service", "system"),
    }
    assert version(m["version"])
    tiers = ["bronze", "silver", "gold", "platinum"]
    assert m.get("quality_scale", "custom") in [*tiers, "custom", "no_score"]
    if m.get("quality_scale") in tiers[1:]:
        assert m["codeowners"], "silver and up need a code owner"
    assert all(re.fullmatch(r"@[\w-]+(/[\w-]+)?", o) for o in m["codeowners"])
    for dep in (*m.get("dependencies", ()), *m.get("after_dependencies", ())):
        assert (HA_COMPONENTS / dep / "manifest.json").is_file(), dep
    assert m["config_flow"] is True
    assert (COMPONENT / "config_flow.py").is_file()
    assert all(isinstance(r, str) for r in m["requirements"])


def test_brand_images() -> None:
    """Local brand images (HACS's brands check, Home Assistant's brands
    view): known names, PNGs, the sizes of the brands repository's rules."""
    brand = COMPONENT / "brand"
    assert (brand / "icon.png").is_file()
    for image in brand.iterdir():
        assert image.name in ALLOWED_IMAGES, image.name
        width, height = png_size(image)
        double = "@2x" in image.name
        if "icon" in image.name:
            assert (width, height) == ((512, 512) if double else (256, 256)), image
        else:
            low, high = (256, 512) if double else (128, 256)
            assert low <= min(width, height) <= high, image


def test_workflows_run_the_validators_and_the_tests() -> None:
    """hassfest, HACS (category integration, nothing ignored) and the
    README's test command on Python 3.14, coverage enforced; every action
    pinned to a commit."""
    workflows = {
        p.name: load_yaml_dict(p) for p in (ROOT / ".github/workflows").glob("*.yml")
    }
    steps = [
        (name, step)
        for name, workflow in workflows.items()
        for job in workflow["jobs"].values()
        for step in job["steps"]
    ]
    uses = {step["uses"].split("@")[0]: step for _, step in steps if "uses" in step}
    assert "home-assistant/actions/hassfest" in uses
    hacs = uses["hacs/action"]
    assert hacs["with"]["category"] == "integration"
    assert "ignore" not in hacs["with"]
    assert uses["actions/setup-python"]["with"]["python-version"] == "3.14"
    runs = [str(step.get("run", "")) for _, step in steps]
    assert "scripts/lint --check" in runs
    floors = [
        int(m.group(1))
        for r in runs
        if r.startswith("scripts/test")
        and (m := re.search(r"--cov-fail-under=(\d+)", r)) is not None
    ]
    assert floors
    assert min(floors) >= 95
    for _, step in steps:
        if "uses" in step:
            assert SHA_PIN_RE.match(step["uses"]), step["uses"]
