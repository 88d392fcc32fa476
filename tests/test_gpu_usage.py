"""A process's own VRAM from NVML's compute-process lists, against the fake NVML."""

from __future__ import annotations

import os
import sys
import timeit
from types import SimpleNamespace

import pynvml
import pytest
from test_gpu_monitor import MIB, FakeNvml

from audiopub.gpu.usage import process_vram_mb


def proc(pid: int, mb: float | None) -> SimpleNamespace:
    return SimpleNamespace(pid=pid, usedGpuMemory=None if mb is None else int(mb * MIB))


def test_this_process_share_of_each_device() -> None:
    fake = FakeNvml()
    fake.device_count = 3
    me = os.getpid()
    fake.processes = {
        0: [proc(me + 1, 9000), proc(me, 1536)],  # another process beside us
        1: [proc(me + 1, 500)],  # a device this process doesn't use
        2: [proc(me, 256)],
    }
    assert process_vram_mb(nvml=fake) == {0: 1536.0, 2: 256.0}
    assert process_vram_mb(me + 1, nvml=fake) == {0: 9000.0, 1: 500.0}
    assert process_vram_mb(4_000_000, nvml=fake) == {}


def test_a_process_listed_twice_counts_both_entries() -> None:
    fake = FakeNvml()  # e.g. one entry per MIG instance it uses
    fake.processes = {0: [proc(42, 100), proc(42, 300)]}
    assert process_vram_mb(42, nvml=fake) == {0: 400.0}


def test_unknown_use_falls_back_to_the_device_total() -> None:
    fake = FakeNvml()  # WDDM (WSL) and some containers don't report a process's memory
    fake.used_mb = 7000
    fake.processes = {0: [proc(42, None), proc(43, 5)]}
    assert process_vram_mb(42, nvml=fake) == {0: 7000.0}


def test_nvml_stays_initialised_between_calls() -> None:
    fake = FakeNvml()
    fake.processes = {0: [proc(42, 100)]}
    for _ in range(5):
        assert process_vram_mb(42, nvml=fake) == {0: 100.0}
    assert (fake.init_calls, fake.shutdown_calls) == (1, 0)


def test_nvml_problems_never_raise() -> None:
    fake = FakeNvml()
    fake.init_error = pynvml.NVMLError_DriverNotLoaded
    assert process_vram_mb(42, nvml=fake) == {}
    fake.init_error = None  # e.g. the driver was loaded later: found on the next call
    fake.processes = {0: [proc(42, 100)]}
    assert process_vram_mb(42, nvml=fake) == {0: 100.0}

    fake.lost = True
    assert process_vram_mb(42, nvml=fake) == {}
    fake.lost = False

    fake.count_error = pynvml.NVMLError_Uninitialized  # someone shut NVML down under us
    assert process_vram_mb(42, nvml=fake) == {}
    fake.count_error = None
    assert process_vram_mb(42, nvml=fake) == {0: 100.0}
    assert fake.init_calls == 3  # initialised again after the failure


def test_one_lost_device_does_not_hide_the_others() -> None:
    fake = FakeNvml()
    fake.device_count = 2
    fake.processes = {0: [proc(42, 100)], 1: [proc(42, 200)]}
    fake.lost_indices = {0}
    assert process_vram_mb(42, nvml=fake) == {1: 200.0}


def test_no_bindings_or_no_gpu_is_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    process_vram_mb()  # the real bindings on this machine: whatever it finds, no exception
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml -> ImportError
    assert process_vram_mb() == {}


def test_cheap_enough_to_call_after_every_batch() -> None:
    """Our own overhead on top of NVML's two calls per device: a generous bound, since the
    machines running tests are shared (it measures tens of microseconds)."""
    fake = FakeNvml()
    fake.processes = {0: [proc(42, 100), proc(43, 100)]}
    per_call = (
        min(timeit.repeat(lambda: process_vram_mb(42, nvml=fake), number=200, repeat=3)) / 200
    )
    assert per_call < 0.005
