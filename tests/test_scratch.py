"""Working files live in a scratch folder per process under the data directory: a killed
process's folder (its uploads, ffmpeg's lists) goes at the next start, a live one's stays."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiopub.atomic import SCRATCH_DIR, remove_orphaned_scratch, scratch_dir
from audiopub.audio.mux import BookTags, chapter_marks, mux_m4b

# A process that takes its scratch folder, leaves working files in it as an upload and a mux
# would, says where, and waits to be killed.
_HOLDER = """
import sys, time
from pathlib import Path
from audiopub.atomic import scratch_dir
folder = scratch_dir(Path(sys.argv[1]))
(folder / "uploads").mkdir()
(folder / "uploads" / "0123abcd.epub").write_bytes(b"PK")
(folder / "mux-x1y2").mkdir()
(folder / "mux-x1y2" / "chapters.ffconcat").write_text("ffconcat version 1.0")
print(folder, flush=True)
time.sleep(300)
"""


@pytest.fixture
def holders(data_dir: Path) -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def _hold(data_dir: Path, holders: list[subprocess.Popen[str]]) -> tuple[Path, int]:
    process = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, str(data_dir)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    holders.append(process)
    assert process.stdout is not None
    folder = Path(process.stdout.readline().strip())
    assert folder.is_dir()
    return folder, process.pid


def test_a_killed_process_leaves_nothing_for_good_and_a_live_ones_files_stay(
    data_dir: Path, holders: list[subprocess.Popen[str]]
) -> None:
    killed, killed_pid = _hold(data_dir, holders)
    alive, _ = _hold(data_dir, holders)
    os.kill(killed_pid, signal.SIGKILL)
    holders[0].wait()

    own = scratch_dir(data_dir)  # this process starts: the dead one's folder goes
    assert not killed.exists()
    assert not list((data_dir / SCRATCH_DIR).glob(f"{killed.name}*"))  # its lock file too
    assert (alive / "uploads" / "0123abcd.epub").is_file()
    assert (alive / "mux-x1y2" / "chapters.ffconcat").is_file()
    assert own.is_dir() and own.parent == data_dir / SCRATCH_DIR
    assert scratch_dir(data_dir) == own  # one per process
    assert remove_orphaned_scratch(data_dir) == []  # its own and the live one's are in use
    assert own.is_dir() and alive.is_dir()


def test_a_process_that_exits_removes_its_folder(data_dir: Path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; "
            "from audiopub.atomic import scratch_dir; "
            "f = scratch_dir(Path(sys.argv[1])); (f / 'x').write_text('x'); print(f)",
            str(data_dir),
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert not Path(done.stdout.strip()).exists()
    assert list((data_dir / SCRATCH_DIR).iterdir()) == []


def test_muxing_works_in_the_scratch_folder_not_the_system_temp_folder(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system_temp = tmp_path / "system-temp"
    system_temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(system_temp))
    wav = tmp_path / "0001.wav"
    sf.write(wav, np.zeros(22050, dtype=np.float32), 22050, subtype="PCM_16")
    seen: list[list[str]] = []

    def look(fraction: float) -> None:  # while ffmpeg runs: where are its working files?
        seen.append(sorted(p.name for p in scratch_dir().iterdir()))
        assert not list(system_temp.iterdir())

    mux_m4b(
        [wav],
        chapter_marks(["One"], [wav]),
        BookTags(title="T", author="A"),
        None,
        tmp_path / "b.m4b",
        progress=look,
    )
    assert seen and any(name.startswith("mux-") for names in seen for name in names)
    assert not list(scratch_dir().iterdir())  # and gone once the book is written


_SERVER = """
import sys, time
from pathlib import Path
from audiopub.ui.services import Services
services = Services(Path(sys.argv[1]))
services.uploads_dir.mkdir(parents=True)
(services.uploads_dir / "0123abcd.epub").write_bytes(b"PK")
print(services.uploads_dir / "0123abcd.epub", flush=True)
time.sleep(300)
"""


def test_a_killed_web_servers_upload_is_gone_when_the_next_one_starts(
    data_dir: Path, holders: list[subprocess.Popen[str]]
) -> None:
    from audiopub.ui.services import Services

    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER, str(data_dir)],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    holders.append(server)
    assert server.stdout is not None
    upload = Path(server.stdout.readline().strip())
    assert upload.is_file()
    server.kill()
    server.wait()

    services = Services(data_dir)
    try:
        assert not upload.exists()
        assert services.uploads_dir.parent == scratch_dir(data_dir)
    finally:
        services.stop()
