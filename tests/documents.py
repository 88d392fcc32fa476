"""The test books in every format, written by scripts/make_test_documents.py (loaded from its
file: scripts/ is not a package)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from script_modules import script as _load


def script() -> ModuleType:
    return _load("make_test_documents")


def make_documents(folder: Path) -> dict[str, Path]:
    """Every format's file in `folder`, by kind ("txt", "pdf", "scan", …)."""
    return script().write_all(folder, script().source_chapters())  # type: ignore[no-any-return]
