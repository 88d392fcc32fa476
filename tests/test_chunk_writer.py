"""The device threads only speak: chunk files are written by writer threads behind them, and a
result is handed on, in reading order, only once its whole file is on disk.

No GPU is needed: the engine is the real Piper engine on the CPU, reporting a CUDA device as
ORT would; the file writes are the real ones, slowed or broken at the file boundary.
"""

from __future__ import annotations

import errno
import threading
from pathlib import Path

import numpy as np
import pytest
from test_gpu_executor import STILL, OnGpu, _tasks
from voices import add_still_voice

from audiopub import atomic
from audiopub.jobs import chunk_work
from audiopub.jobs.chunk_cache import chunk_is_valid
from audiopub.jobs.device_executor import DeviceExecutor
from audiopub.tts.batching import BatchLimits

WAIT_S = 20.0  # how long a blocked write waits for what it expects, before the test fails


@pytest.fixture(scope="module")
def voices(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("voices")
    add_still_voice(folder, STILL)
    return folder


class CountingEngine(OnGpu):
    """Counts the batches it has spoken, so a test can wait for a number of them."""

    def __init__(self, voices_dir: Path) -> None:
        super().__init__(0, voices_dir)
        self.spoken = 0
        self.changed = threading.Condition()

    def speak(self, prepared, voice, options):  # type: ignore[no-untyped-def]
        results = super().speak(prepared, voice, options)
        with self.changed:
            self.spoken += 1
            self.changed.notify_all()
        return results


def test_the_device_thread_writes_no_files(
    tmp_path: Path, voices: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writers: set[str] = set()
    real_write = chunk_work.write_chunk

    def write_chunk(path: Path, samples: np.ndarray, sample_rate: int) -> int:
        writers.add(threading.current_thread().name)
        return real_write(path, samples, sample_rate)

    monkeypatch.setattr(chunk_work, "write_chunk", write_chunk)
    tasks = _tasks(tmp_path, 8)
    results = list(DeviceExecutor([OnGpu(0, voices)], BatchLimits(2)).map(tasks))

    assert [r.key for r in results] == [t.key for t in tasks]
    assert writers and not any(name.startswith("audiopub-device") for name in writers)


def test_the_device_speaks_on_while_a_file_is_slow_and_order_is_kept(
    tmp_path: Path, voices: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first batch's files are written last (a slow disk): the device speaks the next
    batches meanwhile, and results still come in reading order, each once its file is whole."""
    engine = CountingEngine(voices)
    tasks = _tasks(tmp_path, 8)
    real_write = chunk_work.write_chunk
    waited_for_later_batches: list[bool] = []

    def write_chunk(path: Path, samples: np.ndarray, sample_rate: int) -> int:
        if path == tasks[0].out_path:
            with engine.changed:
                waited_for_later_batches.append(
                    engine.changed.wait_for(lambda: engine.spoken >= 3, WAIT_S)
                )
        return real_write(path, samples, sample_rate)

    monkeypatch.setattr(chunk_work, "write_chunk", write_chunk)
    seen = []
    for result in DeviceExecutor([engine], BatchLimits(2)).map(tasks):
        task = next(t for t in tasks if t.key == result.key)
        seen.append((result.key, chunk_is_valid(task.out_path, result.frames)))

    assert waited_for_later_batches == [True]  # batches 2 and 3 were spoken meanwhile
    assert seen == [(t.key, True) for t in tasks]


def test_a_failed_write_counts_nothing_done_and_leaves_no_partial_file(
    tmp_path: Path, voices: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk fills while the fifth chunk's file is being written: what came before is
    handed on whole, the fifth is neither handed on nor left on disk in part."""
    tasks = _tasks(tmp_path, 8)
    real_fsync = atomic._fsync_file

    def fsync_file(path: Path) -> None:  # the temp file is written; flushing it fails
        if path.name.startswith(tasks[4].out_path.name):
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(path)

    monkeypatch.setattr(atomic, "_fsync_file", fsync_file)
    handed_on = []
    with pytest.raises(OSError, match="No space left"):
        for result in DeviceExecutor([OnGpu(0, voices)], BatchLimits(2)).map(tasks):
            handed_on.append(result)

    keys = [r.key for r in handed_on]
    assert keys == [t.key for t in tasks[: len(keys)]] and tasks[4].key not in keys
    for result, task in zip(handed_on, tasks, strict=False):
        assert chunk_is_valid(task.out_path, result.frames)
    assert not tasks[4].out_path.exists()
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
