"""Where a model's nodes ran: how many on CUDA, how many on the CPU.

ONNX Runtime quietly runs a node on the CPU when its CUDA provider has no kernel for it (or
keeps shape arithmetic there on purpose), and every such node copies tensors between the
devices. Its profiler names the provider of every node it runs, so a session made while
`recording_node_placement()` is open is profiled, and when the block ends each session's
profile is read and the nodes it ran are counted by provider:

    with recording_node_placement() as placement:
        engine = load_engine(...)           # its sessions are profiled
        engine.synthesize(...)              # the nodes run, on their providers
    placement.nodes                         # {"CUDAExecutionProvider": 1890, "CPU…": 12}

Only for measuring (`audiopub bench`, `audiopub doctor`): a profiled session records every run.
"""

from __future__ import annotations

import json
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

KERNEL = "_kernel_time"  # a node's run in the profile: "/dec/ups.0/ConvTranspose_kernel_time"


class ProfiledSession(Protocol):
    def end_profiling(self) -> str: ...


class NodePlacement:
    """Sessions made while recording, and once recording ends, their nodes per provider."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.nodes: dict[str, int] = {}  # provider → distinct nodes run on it, all sessions
        self._sessions: list[ProfiledSession] = []

    def profile_prefix(self) -> str:
        return str(self.folder / f"session{len(self._sessions)}")

    def add(self, session: ProfiledSession) -> None:
        self._sessions.append(session)

    def finish(self) -> None:
        counts: Counter[str] = Counter()
        for session in self._sessions:
            path = Path(session.end_profiling())
            counts.update(nodes_by_provider(json.loads(path.read_text("utf-8"))))
        self.nodes = dict(counts)
        self._sessions.clear()


_recording: list[NodePlacement] = []  # the open recording, if any (one at a time)
_lock = threading.Lock()


def active_recording() -> NodePlacement | None:
    """The recording a new session joins, if one is open (`onnx_runtime.create_session`)."""
    with _lock:
        return _recording[-1] if _recording else None


@contextmanager
def recording_node_placement() -> Iterator[NodePlacement]:
    """Profile the sessions made inside the block; their node counts when it ends."""
    with tempfile.TemporaryDirectory(prefix="audiopub-placement-") as folder:
        placement = NodePlacement(Path(folder))
        with _lock:
            _recording.append(placement)
        try:
            yield placement
        finally:
            with _lock:
                _recording.remove(placement)
            placement.finish()


def nodes_by_provider(events: Iterable[dict[str, Any]]) -> Counter[str]:
    """Distinct nodes per provider in an ORT profile (each node counts once, however often
    it ran)."""
    seen: dict[str, str] = {}
    for event in events:
        args = event.get("args", {})
        name = str(event.get("name", ""))
        if event.get("cat") == "Node" and "provider" in args and name.endswith(KERNEL):
            seen[name.removesuffix(KERNEL)] = args["provider"]
    return Counter(seen.values())
