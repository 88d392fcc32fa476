"""A real Ray cluster for tests: 2 CPUs, started in network and PID namespaces of its own.

Ray binds the machine's own address even when told 127.0.0.1; in a network namespace with only
loopback it has no other. The PID namespace keeps `Cluster.stop` (which ends Ray's processes by
name) to this cluster's processes, so it never touches another Ray on the machine. Commands
under test run inside both namespaces (`Cluster.run`, `Cluster.start`).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RAY = Path(sys.executable).with_name("ray")
PORT = 6379  # free: the namespace has its own network
ADDRESS = f"127.0.0.1:{PORT}"
ACTOR_TITLE = "ray::SpeechWorker"  # Ray's process title for an actor of this class
GCS_RECONNECT_S = 5
# Ray's Python processes that `ray stop` ends by their script (its RAY_PROCESSES); its workers
# and agents are titled `ray::…`, its two binaries `raylet` and `gcs_server`.
RAY_SCRIPTS = (
    "monitor.py",  # the autoscaler's and the log monitor
    "ray.util.client.server",
    "default_worker.py",
    "setup_worker.py",
    "dashboard/dashboard.py",
)


@dataclass
class Cluster:
    holder: subprocess.Popen[bytes]  # `unshare`: its child is the namespaces' first process
    first: int  # that child's pid, as this machine sees it
    temp_dir: Path
    stopped: bool = field(default=False, init=False)  # `stop` has ended it

    def command(self, argv: Sequence[str]) -> list[str]:
        return ["nsenter", "-t", str(self.first), "-n", "-p", "-m", *argv]

    def env(self) -> dict[str, str]:
        # A process that loses the cluster's GCS waits this long for it to come back (Ray's
        # default is 60 s): a stopped cluster pauses its job in seconds, not a minute. (A GCS
        # that is alive but slow keeps its connections: the wait is for one that is gone.)
        return {
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "RAY_USAGE_STATS_ENABLED": "0",
            "RAY_gcs_rpc_server_reconnect_timeout_s": str(GCS_RECONNECT_S),
        }

    def run(self, argv: Sequence[str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(argv),
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def start(self, argv: Sequence[str]) -> subprocess.Popen[str]:
        return subprocess.Popen(
            self.command(argv),
            env=self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def ray_pids(self) -> list[int]:
        """This cluster's own processes, raylet first and GCS server last, as `ray stop`
        orders them: the commands under test (and their Ray driver) are not among them."""
        found: list[tuple[int, int]] = []
        for pid, command in self._commands().items():
            name = Path(command.split("\0")[0]).name
            if name == "raylet":
                found.append((0, pid))
            elif name.startswith("ray::") or any(script in command for script in RAY_SCRIPTS):
                found.append((1, pid))
            elif name == "gcs_server":
                found.append((2, pid))
        return [pid for _, pid in sorted(found)]

    def actor_pids(self) -> list[int]:
        """The speech actors' processes of this cluster."""
        return [pid for pid, command in self._commands().items() if command.startswith(ACTOR_TITLE)]

    def _commands(self) -> dict[int, str]:
        """The processes in this cluster's PID namespace, with their command lines."""
        ours = os.readlink(f"/proc/{self.first}/ns/pid")
        commands = {}
        for folder in Path("/proc").iterdir():
            try:
                if folder.name.isdigit() and os.readlink(folder / "ns" / "pid") == ours:
                    command = (folder / "cmdline").read_bytes().decode(errors="replace")
                    commands[int(folder.name)] = command
            except OSError:  # ended meanwhile
                continue
        return commands

    def stop(self) -> None:
        """The cluster goes away: its processes are killed at once, as `ray stop --force` kills
        them, in its order. Not by `ray stop` itself: a Python process importing Ray takes
        seconds to start, a run meanwhile speaks on, and a book long enough to outlast that was
        then spoken again here by the test that stops the cluster."""
        for pid in self.ray_pids():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # ended meanwhile
                continue
        self.stopped = True


def audiopub(*args: str) -> list[str]:
    return [sys.executable, "-m", "audiopub", *args]


def start_cluster() -> Cluster:
    if shutil.which("unshare") is None or shutil.which("nsenter") is None:
        pytest.skip("needs unshare and nsenter (util-linux) for a loopback-only Ray cluster")
    probe = subprocess.run(
        ["unshare", "-n", "-p", "-f", "--mount-proc", "true"], capture_output=True, check=False
    )
    if probe.returncode != 0:
        pytest.skip(f"unshare is not allowed here (as root, or in CI): {probe.stderr!r}")
    holder = subprocess.Popen(["unshare", "-n", "-p", "-f", "--mount-proc", "sleep", "3600"])
    deadline = time.monotonic() + 10
    children_file = Path(f"/proc/{holder.pid}/task/{holder.pid}/children")
    while not (children := children_file.read_text().split()):
        if time.monotonic() > deadline:
            holder.kill()
            raise RuntimeError("the namespace's first process did not start")
        time.sleep(0.05)
    temp_dir = Path(tempfile.mkdtemp(prefix="aprt", dir="/tmp"))  # short: Ray's socket paths
    cluster = Cluster(holder, int(children[0]), temp_dir)
    up = cluster.run(["ip", "link", "set", "lo", "up"], timeout=30)
    assert up.returncode == 0, up.stderr
    started = cluster.run(
        [
            str(RAY),
            "start",
            "--head",
            "--num-cpus",
            "2",
            "--node-ip-address",
            "127.0.0.1",
            "--port",
            str(PORT),
            "--include-dashboard=false",
            # A Python process importing Ray that Audiopub does not use: the log monitor streams
            # the workers' output to drivers, which connect with log_to_driver=False.
            "--include-log-monitor=false",
            # Nor the autoscaler's monitor: a fixed 2-CPU cluster never scales, and the monitor
            # was a seventh of Ray's own CPU in a test (profiled with py-spy).
            "--no-monitor",
            "--disable-usage-stats",
            "--temp-dir",
            str(temp_dir),
        ],
        timeout=300,  # Ray's start-up: a minute or more on a busy machine
    )
    if started.returncode != 0:
        end_cluster(cluster)
        raise RuntimeError(f"ray start failed: {started.stdout}\n{started.stderr}")
    return cluster


def end_cluster(cluster: Cluster) -> None:
    if not cluster.stopped:  # a test may have stopped it
        cluster.stop()
    os.kill(cluster.first, signal.SIGKILL)  # the namespace's first process: all of it ends
    cluster.holder.wait(timeout=30)
    shutil.rmtree(cluster.temp_dir, ignore_errors=True)
