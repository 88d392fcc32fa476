"""How many engine processes the CPU executor starts, from cores and memory."""

from pathlib import Path

import pytest

from audiopub.jobs import cpu_sizing
from audiopub.jobs.cpu_sizing import available_memory_bytes, cpu_workers, cpu_workers_for

GIB = 1 << 30


@pytest.mark.parametrize(("cores", "available", "expected"), [
    (16, 64 * GIB, 16),  # plenty of memory: one process per core
    (16, 6 * GIB, 5),  # memory decides: 1 GiB kept for the app, 1 GiB per process
    (2, 64 * GIB, 2),
    (16, None, 16),  # memory unknown: the cores alone decide
    (16, 300 << 20, 1),  # too little for even one process: still one
    (0, None, 1),
])
def test_one_process_per_core_as_far_as_memory_allows(cores: int, available: int | None,
                                                      expected: int) -> None:
    assert cpu_workers_for(cores, available) == expected


def test_a_larger_budget_per_process_means_fewer_processes() -> None:
    assert cpu_workers_for(16, 9 * GIB, per_process_bytes=2 * GIB) == 4


def test_memavailable_is_read_from_meminfo(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       32000000 kB\nMemFree:         1000000 kB\n"
                       "MemAvailable:   12000000 kB\nBuffers:          200000 kB\n")
    assert available_memory_bytes(meminfo) == 12_000_000 * 1024


def test_no_memory_reading_without_memavailable(tmp_path: Path) -> None:
    old_kernel = tmp_path / "meminfo"
    old_kernel.write_text("MemTotal:       32000000 kB\nMemFree:         1000000 kB\n")
    assert available_memory_bytes(old_kernel) is None
    assert available_memory_bytes(tmp_path / "absent") is None  # not Linux


def test_the_override_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "3")
    assert cpu_workers() == 3


def test_without_an_override_cores_and_memory_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AUDIOPUB_CPU_WORKERS", raising=False)
    monkeypatch.setattr(cpu_sizing, "usable_cores", lambda: 16)
    monkeypatch.setattr(cpu_sizing, "available_memory_bytes", lambda: 6 * GIB)
    assert cpu_workers() == 5


def test_bigger_batches_mean_fewer_engine_processes_for_the_same_memory() -> None:
    from audiopub.jobs.cpu_sizing import ENGINE_PROCESS_BYTES, process_bytes_for

    assert process_bytes_for(1) == ENGINE_PROCESS_BYTES
    assert process_bytes_for(16) == 6 * ENGINE_PROCESS_BYTES
    assert cpu_workers_for(16, 64 * GIB, process_bytes_for(1)) == 16
    assert cpu_workers_for(16, 64 * GIB, process_bytes_for(16)) == 10
