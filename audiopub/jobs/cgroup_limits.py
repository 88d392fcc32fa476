"""A container's own limits, as its Linux cgroup states them: the memory it may still take and
the CPUs its quota gives it. Docker, Kubernetes and systemd set them; the machine's figures
(psutil, os) know nothing of them.

    cgroup v2   <root>/<path>/memory.max ("max": none), memory.current, memory.stat
                <root>/<path>/cpu.max ("max 100000": none, "250000 100000": 2.5 CPUs)
    cgroup v1   <root>/memory/<path>/memory.limit_in_bytes (2^63 rounded down a page: none),
                memory.usage_in_bytes, memory.stat; <root>/cpu/<path>/cpu.cfs_quota_us
                (-1: none) and cpu.cfs_period_us

<path> is this process's cgroup as /proc/self/cgroup names it; a limit set on any cgroup
above it holds too, so the tightest one counts. Inside a container the path often names
nothing under the container's own view of <root>: then its root is the container's cgroup.
Page cache the kernel can drop (inactive files) is not counted as used. Anywhere without
cgroups (macOS, Windows) every answer is None: no limit beyond the machine's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

CGROUP_ROOT: Final = Path("/sys/fs/cgroup")
PROC_CGROUP: Final = Path("/proc/self/cgroup")
_V1_NO_LIMIT: Final = 1 << 62  # v1 writes "no limit" as 2^63 less a page: anything this big


def cgroup_memory_left(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> int | None:
    """Bytes this process's cgroups still allow (the tightest limit less its usage), or None
    where no cgroup limits memory."""
    lefts = [
        left
        for folder in _folders(root, proc_cgroup, "")
        if (left := _left(folder, "memory.max", "memory.current", "inactive_file")) is not None
    ]
    lefts += [
        left
        for folder in _folders(root, proc_cgroup, "memory")
        if (
            left := _left(
                folder, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"
            )
        )
        is not None
    ]
    return min(lefts, default=None)


def cgroup_cpu_quota(root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> float | None:
    """CPUs this process's cgroups allow (2.5 = two and a half cores' time), or None where no
    quota is set."""
    quotas = []
    for folder in _folders(root, proc_cgroup, ""):
        fields = _read(folder / "cpu.max").split()
        if len(fields) == 2 and fields[0] != "max" and _positive(fields[0], fields[1]):
            quotas.append(int(fields[0]) / int(fields[1]))
    for folder in _folders(root, proc_cgroup, "cpu"):
        quota, period = _read(folder / "cpu.cfs_quota_us"), _read(folder / "cpu.cfs_period_us")
        if _positive(quota, period):
            quotas.append(int(quota) / int(period))
    return min(quotas, default=None)


def _left(folder: Path, limit_file: str, usage_file: str, reclaimable: str) -> int | None:
    limit = _read(folder / limit_file)
    if not limit.isdigit() or int(limit) >= _V1_NO_LIMIT:  # "max", absent, or v1's none
        return None
    usage = _read(folder / usage_file)
    used = int(usage) if usage.isdigit() else 0
    for line in _read(folder / "memory.stat").splitlines():
        name, _, value = line.partition(" ")
        if name == reclaimable and value.strip().isdigit():
            used -= int(value)
    return max(0, int(limit) - max(0, used))


def _folders(root: Path, proc_cgroup: Path, controller: str) -> list[Path]:
    """The cgroup folders whose limits hold for this process, its own first: v2 (`controller`
    "") or v1's hierarchy of that controller."""
    base = root / controller if controller else root
    path = _own_path(proc_cgroup, controller)
    own = base / path.strip("/") if path else base
    if not own.is_dir():
        own = base  # a container's view: its root is its own cgroup
    folders = [own]
    while folders[-1] != base and base in folders[-1].parents:
        folders.append(folders[-1].parent)
    return [folder for folder in folders if folder.is_dir()]


def _own_path(proc_cgroup: Path, controller: str) -> str | None:
    """This process's cgroup path: the v2 line is "0::/path", a v1 line "4:memory:/path"."""
    for line in _read(proc_cgroup).splitlines():
        _, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        if controller in controllers.split(","):  # "" only on v2's line
            return path
    return None


def _positive(*values: str) -> bool:
    return all(value.isdigit() and int(value) > 0 for value in values)


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return ""
