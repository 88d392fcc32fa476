"""Why a test worker died, in the report of the test it was running.

pytest-xdist reports a worker process that ends mid-test (a fault in native code, a signal,
the kernel's out-of-memory killer) as only "worker 'gw1' crashed while running X". Here each
worker writes Python's fault-handler traceback, every thread's, to a file of its own, and the
crashed test's report carries that file, the worker's exit status and the kernel's last lines
about faults and killed processes (where this user may read them).
"""

from __future__ import annotations

import faulthandler
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import IO, Any

import pytest

FOLDER_ENV = "AUDIOPUB_TEST_CRASH_LOGS"  # set by the controller, inherited by its workers
KERNEL_WORDS = ("segfault", "out of memory", "killed process", "general protection", "trap")
KERNEL_LINES = 8

_logs: list[IO[str]] = []  # open for as long as the worker runs


@pytest.hookimpl(trylast=True)  # after pytest's own fault handler has taken stderr
def pytest_configure(config: pytest.Config) -> None:
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker is None:  # the controller, or a run without workers
        os.environ[FOLDER_ENV] = tempfile.mkdtemp(prefix="audiopub-test-crashes-")
        return
    folder = os.environ.get(FOLDER_ENV)
    if folder:
        log = open(Path(folder) / f"{worker}.log", "a", encoding="utf-8")  # noqa: SIM115
        _logs.append(log)
        faulthandler.enable(log, all_threads=True)


def pytest_unconfigure(config: pytest.Config) -> None:
    if _logs:  # a worker ending as it should: its file has nothing to say
        faulthandler.disable()
        _logs.pop().close()
    elif os.environ.get("PYTEST_XDIST_WORKER") is None and FOLDER_ENV in os.environ:
        shutil.rmtree(os.environ.pop(FOLDER_ENV), ignore_errors=True)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's, called in the controller
def pytest_handlecrashitem(crashitem: str, report: pytest.TestReport, sched: Any) -> None:
    worker = getattr(report, "node", None)
    name = getattr(getattr(worker, "gateway", None), "id", "?")
    parts = [str(report.longrepr), f"exit status: {_exit_status(worker)}"]
    log = Path(os.environ.get(FOLDER_ENV, "."), f"{name}.log")
    fault = log.read_text(encoding="utf-8", errors="replace").strip() if log.is_file() else ""
    parts.append(
        f"Python's fault handler:\n{fault}"
        if fault
        else "Python's fault handler wrote nothing (a SIGKILL leaves no trace there)"
    )
    parts.append("the kernel's last lines about faults and killed processes:\n" + _kernel_says())
    report.longrepr = "\n".join(parts)


def _exit_status(worker: Any) -> str:
    # execnet's popen gateway keeps its `subprocess.Popen` as `_io.popen`
    process = getattr(getattr(getattr(worker, "gateway", None), "_io", None), "popen", None)
    if process is None:
        return "unknown"
    try:
        code = process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return str(code)


def _kernel_says() -> str:
    try:
        lines = subprocess.run(
            ["dmesg"], capture_output=True, text=True, timeout=10, check=False
        ).stdout.splitlines()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"(dmesg: {exc})"
    wanted = [line for line in lines if any(w in line.lower() for w in KERNEL_WORDS)]
    return "\n".join(wanted[-KERNEL_LINES:]) or "(none)"
