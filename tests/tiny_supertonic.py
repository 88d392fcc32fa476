"""The tiny Supertonic-format model of `scripts/make_tiny_supertonic.py`, for tests.

The generator is a script, not a package module, so it is loaded from its file once here.
"""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "make_tiny_supertonic.py"


@cache
def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_tiny_supertonic", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_tiny_model(out_dir: Path, **options: Any) -> Path:
    """Write the model into `out_dir` (options as the script's `build_tiny_model`)."""
    return _generator().build_tiny_model(out_dir, **options)
