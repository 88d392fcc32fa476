"""phonemizer loads a copy of the espeak-ng library per wrapper, from the temp folder: a killed
process's copies go when the next process makes its own, a live one's stay, and a process
that exits takes its own along."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from audiopub.tts.phonemes import COPY_PREFIX

# Phonemises (espeak-ng is loaded), says where its copies are, and waits or exits.
_SPEAKER = """
import sys, tempfile, time
from pathlib import Path
from audiopub.tts.phonemes import COPY_PREFIX, phonemize
assert phonemize("Hello there.", "en-us")
print(" ".join(str(p) for p in Path(tempfile.gettempdir()).glob(COPY_PREFIX + "*")), flush=True)
if sys.argv[1] == "wait":
    time.sleep(300)
"""


@pytest.fixture
def temp(tmp_path: Path) -> Path:
    """The system temp folder of the processes started here."""
    folder = tmp_path / "temp"
    folder.mkdir()
    return folder


@pytest.fixture
def speakers() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        process.kill()
        process.communicate()  # and close its pipes


def _speak(temp: Path, then: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", _SPEAKER, then],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "TMPDIR": str(temp)},
    )


def _copies(process: subprocess.Popen[str]) -> set[Path]:
    """The folders of a process's library copies, each with the library in it."""
    assert process.stdout is not None
    seen = {Path(p) for p in process.stdout.readline().split()}
    folders = {p for p in seen if p.is_dir() and f"-{process.pid}-" in p.name}
    assert folders and all(any(f.glob("*espeak*")) for f in folders)
    return folders


def test_a_killed_processs_copies_go_when_the_next_one_makes_its_own(
    temp: Path, speakers: list[subprocess.Popen[str]]
) -> None:
    killed = _speak(temp, "wait")
    speakers.append(killed)
    killed_copies = _copies(killed)
    alive = _speak(temp, "wait")
    speakers.append(alive)
    alive_copies = _copies(alive)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    assert all(folder.is_dir() for folder in killed_copies)  # left behind, as a kill does

    done = _speak(temp, "exit")
    _, errors = done.communicate(timeout=120)
    assert done.returncode == 0, errors
    assert not errors  # its own copies went at exit without a complaint from phonemizer

    assert not any(folder.exists() for folder in killed_copies)
    assert not list(temp.glob(f"{COPY_PREFIX}{killed.pid}-*"))  # their lock files too
    assert all(folder.is_dir() for folder in alive_copies)
    assert not list(temp.glob(f"{COPY_PREFIX}{done.pid}-*"))
