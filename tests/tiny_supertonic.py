"""The tiny Supertonic-format model of `scripts/make_tiny_supertonic.py`, for tests.

The generator is a script, not a package module, so it is loaded from its file once here.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from script_modules import SCRIPTS, script

SCRIPT = SCRIPTS / "make_tiny_supertonic.py"


def _generator() -> ModuleType:
    return script("make_tiny_supertonic")


def build_tiny_model(out_dir: Path, **options: Any) -> Path:
    """Write the model into `out_dir` (options as the script's `build_tiny_model`)."""
    return _generator().build_tiny_model(out_dir, **options)
