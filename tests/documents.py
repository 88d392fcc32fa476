"""The test books in every format, written by scripts/make_test_documents.py (loaded from its
file: scripts/ is not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "make_test_documents.py"


def script() -> ModuleType:
    if "make_test_documents" not in sys.modules:
        spec = importlib.util.spec_from_file_location("make_test_documents", SCRIPT)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["make_test_documents"] = module
        spec.loader.exec_module(module)
    return sys.modules["make_test_documents"]


def make_documents(folder: Path) -> dict[str, Path]:
    """Every format's file in `folder`, by kind ("txt", "pdf", "scan", …)."""
    return script().write_all(folder, script().source_chapters())  # type: ignore[no-any-return]
