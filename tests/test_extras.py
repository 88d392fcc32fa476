"""No optional extra of pyproject.toml may bring the CPU `onnxruntime`: it installs the same
`onnxruntime/` package as `onnxruntime-gpu`, and whichever comes last silently replaces the
other (faster-whisper, for one, requires it — which is why `listen` reaches Whisper through
CTranslate2). Offline: each extra's requirements are walked through the metadata of the
installed distributions; one that is not installed here is reported, not guessed."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
FORBIDDEN = canonicalize_name("onnxruntime")


def project_extras() -> dict[str, list[str]]:
    return tomllib.loads(PYPROJECT.read_text("utf-8"))["project"]["optional-dependencies"]


def _applies(requirement: Requirement, extras: set[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate({"extra": extra}) for extra in extras or {""})


def walk(requirements: list[str]) -> tuple[list[str], list[str], int]:
    """(paths to the CPU onnxruntime, requirements not installed here, packages checked), for
    the requirements that apply on this machine, followed through installed metadata."""
    extras = project_extras()
    found, missing, seen = [], [], set()
    queue = [(Requirement(text), "") for text in requirements]
    while queue:
        requirement, via = queue.pop()
        name = canonicalize_name(requirement.name)
        extras_part = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
        label = f"{requirement.name}{extras_part}{requirement.specifier}"
        path = f"{via} → {label}" if via else label
        if name == FORBIDDEN:
            found.append(path)
            continue
        if name == "audiopub":  # an extra naming another of the project's extras
            queue += [
                (Requirement(text), path)
                for extra in requirement.extras
                for text in extras.get(extra, [])
            ]
            continue
        if (name, frozenset(requirement.extras)) in seen:
            continue
        seen.add((name, frozenset(requirement.extras)))
        try:
            needs = importlib.metadata.requires(requirement.name) or []
        except importlib.metadata.PackageNotFoundError:
            missing.append(path)
            continue
        for text in needs:
            child = Requirement(text)
            if _applies(child, set(requirement.extras)):
                queue.append((child, path))
    return found, missing, len(seen)


def _applicable(texts: list[str]) -> list[str]:
    return [text for text in texts if _applies(Requirement(text), set())]


@pytest.mark.parametrize("extra", sorted(project_extras()))
def test_no_extra_requires_the_cpu_onnxruntime(extra: str) -> None:
    found, missing, checked = walk(_applicable(project_extras()[extra]))
    assert not found, f"[{extra}] brings the CPU onnxruntime: {'; '.join(found)}"
    if missing:
        pytest.skip(
            f"[{extra}]: {checked} packages checked; not installed here, so not "
            f"checked: {', '.join(sorted(missing))}"
        )


def test_the_walk_finds_onnxruntime_behind_faster_whisper() -> None:
    """The check can fail: faster-whisper (installed without its dependencies as the
    log-mel oracle) requires the CPU onnxruntime."""
    found, _, _ = walk(["faster-whisper"])
    assert found == ["faster-whisper → onnxruntime<2,>=1.14"]
