"""What an install gets. Exactly one ONNX Runtime: two distributions overwrite each other's
`onnxruntime/` folder and the CUDA provider silently disappears. And the wheel, which must carry
the web UI's files from the top-level `static/` folder to where the app looks for them."""

import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path
from typing import Final

import onnxruntime

from audiopub.ui.app import STATIC_PACKAGE

REPO: Final = Path(__file__).resolve().parent.parent
# What setuptools reads to build the wheel (the readme is the package's long description).
BUILD_INPUTS: Final = ("pyproject.toml", "README.md", "audiopub", "static")


def _onnxruntime_distributions() -> list[str]:
    names = {(dist.metadata["Name"] or "").lower() for dist in metadata.distributions()}
    return sorted(n for n in names if n == "onnxruntime" or n.startswith("onnxruntime-"))


def test_exactly_one_onnxruntime_distribution_is_installed() -> None:
    found = _onnxruntime_distributions()
    assert len(found) == 1, f"several ONNX Runtime distributions installed: {found}"


def test_the_installed_distribution_is_the_one_imported() -> None:
    (name,) = _onnxruntime_distributions()
    assert metadata.version(name) == onnxruntime.__version__


def _build_wheel(tmp_path: Path) -> zipfile.ZipFile:
    """Build the wheel with the project's own build backend, from a copy: setuptools leaves
    `build/` and `*.egg-info` beside the sources, and a stale `build/` would leak into later
    wheels. No build isolation: the test extras install the setuptools that pyproject.toml's
    build-system asks for, so the build needs no network."""
    src = tmp_path / "src"
    src.mkdir()
    for name in BUILD_INPUTS:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(REPO / name, src / name)
    out = tmp_path / "wheel"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--wheel-dir",
            str(out),
            str(src),
        ],
        check=True,
        timeout=240,
    )
    (wheel,) = out.glob("audiopub-*.whl")
    return zipfile.ZipFile(wheel)


def test_the_wheel_ships_every_module_and_the_static_files(tmp_path: Path) -> None:
    with _build_wheel(tmp_path) as wheel:
        shipped = set(wheel.namelist())
        static = STATIC_PACKAGE.replace(".", "/")
        assert f"{static}/audiopub.css" in shipped
        assert f"{static}/icon.svg" in shipped
        assert "audiopub/tts/piper/piper-voices.json" in shipped  # the offline voice indexes
        assert "audiopub/tts/kokoro/kokoro-voices.json" in shipped
        for file in sorted((REPO / "static").iterdir()):
            if file.is_file():
                assert wheel.read(f"{static}/{file.name}") == file.read_bytes(), file.name
    # The packages are listed by hand in pyproject.toml; one left out would be missing here.
    modules = {p.relative_to(REPO).as_posix() for p in (REPO / "audiopub").rglob("*.py")}
    missing = sorted(modules - shipped)
    assert not missing, f"not in the wheel (list their packages in pyproject.toml): {missing}"
