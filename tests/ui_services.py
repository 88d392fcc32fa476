"""The `Services` a web UI test builds and hands to the app (NiceGUI's `user` fixture runs
`tests/ui_main.py`, which gives them to `app.main`): the test's own job store, a GPU monitor on
a fake NVML, an onnxruntime without CUDA unless the test says otherwise, and synthesis in the
worker thread."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_gpu_monitor import FakeNvml

from audiopub.ui.engine_catalog import GpuSupport
from audiopub.ui.services import Services

NO_CUDA = "this onnxruntime build has no CUDA support (test stand-in)"

# NiceGUI runs the main file by its path, with no way to pass it anything: the fixture leaves
# its services here for `ui_main.py` to hand to `app.main`.
_for_the_app: list[Services] = []


def installed_services(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, **options: Any
) -> Iterator[Services]:
    """For an autouse fixture, which runs before `user`:
    `yield from installed_services(data_dir, monkeypatch)`. `options` go to `Services` (its
    NVML, its GPU support, an upload limit). The app's shutdown hook stops it."""
    # Synthesis in the worker thread: a process pool per test would cost seconds and memory
    # (the pools are the executor's business, tested with it; the e2e test runs them for real).
    monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "1")
    options = {
        "nvml": FakeNvml(),
        "gpu_support": GpuSupport(False, NO_CUDA),
        # Fast enough for the GPU panel's chart to have two points within a second; faster
        # sampling only made every once-a-second panel tick redraw hundreds of history points.
        "gpu_interval_s": 0.25,
        # The previews' voice loaded ahead at start (tested in test_previews.py) cost every UI
        # test 2-3 s of CPU beside it; most never preview, and a test's first preview loads it.
        "warm_previews": False,
        **options,
    }
    installed = Services(data_dir, **options)
    _for_the_app[:] = [installed]
    yield installed
    _for_the_app.clear()


def services_for_the_app() -> Services:
    """The services of the test now running (`ui_main.py`)."""
    if not _for_the_app:
        raise RuntimeError("A UI test needs a `services` fixture made by installed_services()")
    return _for_the_app[0]
