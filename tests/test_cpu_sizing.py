"""How many engine processes the CPU executor starts, from cores and memory: psutil's
figures for the machine, within a container's cgroup limits (fake cgroup trees here)."""

from pathlib import Path

import psutil
import pytest

from audiopub.jobs import cpu_sizing
from audiopub.jobs.cpu_sizing import (
    available_memory_bytes,
    cpu_workers,
    cpu_workers_for,
    usable_cores,
)

GIB = 1 << 30


@pytest.mark.parametrize(
    ("cores", "available", "expected"),
    [
        (16, 64 * GIB, 16),  # plenty of memory: one process per core
        (16, 6 * GIB, 5),  # memory decides: 1 GiB kept for the app, 1 GiB per process
        (2, 64 * GIB, 2),
        (16, None, 16),  # memory unknown: the cores alone decide
        (16, 300 << 20, 1),  # too little for even one process: still one
        (0, None, 1),
    ],
)
def test_one_process_per_core_as_far_as_memory_allows(
    cores: int, available: int | None, expected: int
) -> None:
    assert cpu_workers_for(cores, available) == expected


def test_a_larger_budget_per_process_means_fewer_processes() -> None:
    assert cpu_workers_for(16, 9 * GIB, per_process_bytes=2 * GIB) == 4


class FakeVirtualMemory:
    def __init__(self, available: int) -> None:
        self.available = available


def _machine(
    monkeypatch: pytest.MonkeyPatch, available: int, cores: int, affinity: list[int] | None = None
) -> None:
    """psutil's figures for a machine with `available` bytes free and `cores` cores, of which
    this process may run on `affinity` (all of them unless said)."""
    monkeypatch.setattr(psutil, "virtual_memory", lambda: FakeVirtualMemory(available))
    monkeypatch.setattr(psutil, "cpu_count", lambda logical=True: cores)
    monkeypatch.setattr(
        psutil.Process,
        "cpu_affinity",
        lambda self, cpus=None: list(range(cores)) if affinity is None else affinity,
        raising=False,
    )


def _write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)


def test_without_cgroups_psutil_alone_decides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """macOS, Windows, or a Linux without cgroup limits: the machine's own figures."""
    _machine(monkeypatch, available=12 * GIB, cores=16, affinity=[0, 1, 2, 3])
    no_cgroup = tmp_path / "proc-self-cgroup"  # absent
    assert available_memory_bytes(tmp_path / "none", no_cgroup) == 12 * GIB
    assert usable_cores(tmp_path / "none", no_cgroup) == 4  # taskset allows four of sixteen


def test_a_cgroup_v2_memory_limit_and_cpu_quota_hold_inside_a_container(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _machine(monkeypatch, available=200 * GIB, cores=64)
    root = tmp_path / "cgroup"
    _write(
        root,
        {
            "memory.max": str(8 * GIB),
            "memory.current": str(5 * GIB),
            # 2 GiB of it is page cache the kernel drops before it kills anything
            "memory.stat": f"anon 3000\ninactive_file {2 * GIB}\nactive_file 7\n",
            "cpu.max": "250000 100000",
        },
    )
    proc = tmp_path / "cgroup-line"
    proc.write_text("0::/\n")

    assert available_memory_bytes(root, proc) == 5 * GIB  # 8 less the 3 in use
    assert usable_cores(root, proc) == 3  # 2.5 CPUs of quota: the third process shares
    assert cpu_workers_for(usable_cores(root, proc), available_memory_bytes(root, proc)) == 3


def test_the_tightest_limit_above_a_nested_v2_cgroup_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _machine(monkeypatch, available=200 * GIB, cores=64)
    root = tmp_path / "cgroup"
    _write(
        root,
        {
            "user.slice/memory.max": str(4 * GIB),
            "user.slice/memory.current": "0",
            "user.slice/cpu.max": "200000 100000",
            "user.slice/app.scope/memory.max": "max",
            "user.slice/app.scope/cpu.max": "max 100000",
        },
    )
    proc = tmp_path / "cgroup-line"
    proc.write_text("0::/user.slice/app.scope\n")

    assert available_memory_bytes(root, proc) == 4 * GIB
    assert usable_cores(root, proc) == 2


def test_cgroup_v1_limits_and_their_no_limit_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _machine(monkeypatch, available=100 * GIB, cores=32)
    root = tmp_path / "cgroup"
    proc = tmp_path / "cgroup-lines"
    proc.write_text("4:memory:/docker/abc\n2:cpu,cpuacct:/docker/abc\n0::/\n")
    unlimited = {
        "memory/memory.limit_in_bytes": "9223372036854771712",
        "cpu/cpu.cfs_quota_us": "-1",
        "cpu/cpu.cfs_period_us": "100000",
    }
    _write(root, unlimited)  # the container's view: its cgroup is the hierarchy's root
    assert available_memory_bytes(root, proc) == 100 * GIB
    assert usable_cores(root, proc) == 32

    _write(
        root,
        {
            "memory/memory.limit_in_bytes": str(6 * GIB),
            "memory/memory.usage_in_bytes": str(2 * GIB),
            "memory/memory.stat": f"cache 1\ntotal_inactive_file {GIB}\n",
            "cpu/cpu.cfs_quota_us": "400000",
        },
    )
    assert available_memory_bytes(root, proc) == 5 * GIB  # 6 less the 1 GiB not reclaimable
    assert usable_cores(root, proc) == 4


def test_unreadable_or_damaged_cgroup_files_mean_no_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _machine(monkeypatch, available=10 * GIB, cores=8)
    root = tmp_path / "cgroup"
    _write(
        root,
        {
            "memory.max": "lots",
            "cpu.max": "100000",
            "cpu/cpu.cfs_quota_us": "0",
            "cpu/cpu.cfs_period_us": "100000",
        },
    )
    proc = tmp_path / "cgroup-line"
    proc.write_text("0::/\n1:cpu:/\n")
    assert available_memory_bytes(root, proc) == 10 * GIB
    assert usable_cores(root, proc) == 8


def test_the_override_wins() -> None:
    assert cpu_workers(forced=3) == 3


def test_without_an_override_cores_and_memory_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpu_sizing, "usable_cores", lambda: 16)
    monkeypatch.setattr(cpu_sizing, "available_memory_bytes", lambda: 6 * GIB)
    assert cpu_workers() == 5


def test_bigger_batches_mean_fewer_engine_processes_for_the_same_memory() -> None:
    from audiopub.jobs.cpu_sizing import ENGINE_PROCESS_BYTES, process_bytes_for

    assert process_bytes_for(1) == ENGINE_PROCESS_BYTES
    assert process_bytes_for(16) == 6 * ENGINE_PROCESS_BYTES
    assert cpu_workers_for(16, 64 * GIB, process_bytes_for(1)) == 16
    assert cpu_workers_for(16, 64 * GIB, process_bytes_for(16)) == 10
