"""The measuring scripts under scripts/ still fit the code they measure: each one's imports
resolve and its arguments parse (`--help`), so a renamed class fails here, not in the hands of
someone running the script months later."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"
# Run with another environment on purpose: piper-tts brings the CPU onnxruntime.
OTHER_ENVIRONMENT = {"piper_tts_loop.py"}
# Have no command line: modules the other scripts import (pdnc.py: the annotated novels, for
# score_pdnc.py and train_speakers.py). They are imported, not run.
NO_HELP: set[str] = {"pdnc.py"}


@pytest.mark.parametrize(
    "script", sorted(p.name for p in SCRIPTS.glob("*.py") if p.name not in OTHER_ENVIRONMENT)
)
def test_a_script_imports_and_parses_its_arguments(script: str) -> None:
    if script in NO_HELP:
        command = [sys.executable, "-c", f"import runpy; runpy.run_path({str(SCRIPTS / script)!r})"]
    else:
        command = [sys.executable, str(SCRIPTS / script), "--help"]
    result = subprocess.run(
        command, capture_output=True, text=True, timeout=120, check=False, cwd=SCRIPTS.parent
    )
    if script in NO_HELP:  # run_path runs it as a module, not as __main__: imports only
        assert result.returncode == 0, result.stderr
    else:
        assert result.returncode == 0 and "usage:" in result.stdout, result.stderr
