"""What every executor of a job's chunks is: it loads the voice (`start`), speaks tasks and
hands the results back in task order (`map`), says what it speaks on (`describe`), and is
handed back once the job is done speaking with it (`close`).

    DeviceExecutor   engines in this process, a thread per device       (jobs.device_executor)
    ProcessExecutor  a pool of engine processes on this machine's CPU   (jobs.process_pool)
    RayExecutor      a job's actors on a Ray cluster                    (cluster.executor)

The pipeline, the benchmarks and the doctor use only this contract, so an executor of another
kind is one more class implementing it, and one more factory (`ExecutorFactory`) handed to
whoever runs jobs.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from audiopub.jobs.chunk_work import ChunkResult, ChunkTask
from audiopub.tts.batching import BatchLimits
from audiopub.tts.engine import Engine


class Placement(str, Enum):
    """Where an executor's engines run. The values are the benchmark results' own words."""

    IN_PROCESS = "inline"  # in this process, one thread per device
    ENGINE_PROCESSES = "process"  # in a pool of engine processes on this machine
    CLUSTER = "cluster"  # in actors on a Ray cluster


@dataclass(frozen=True)
class ExecutorInfo:
    """What an executor speaks on, for the job's record, its log and the benchmarks."""

    placement: Placement
    where: str  # the job's "ran on": the engine's device here, or the cluster it speaks on
    devices: tuple[str, ...]  # what speaks, one line per device (or per pool of processes)
    workers: int  # engines speaking at once: device threads, engine processes or actors


class ChunkExecutor(ABC):
    """Speaks chunk tasks and hands their results back in task order."""

    limits: BatchLimits  # of the batches planned now
    batch_sizes: Counter[int]  # batch size → how many batches of it ran
    device_chunks: Counter[str]  # device → chunks it spoke, where counted (in this process)
    peak_vram_mb: dict[int, float]  # MiB per GPU this process held at most (none on a CPU)

    @abstractmethod
    def start(self, voice: str) -> object:
        """Load the engines with `voice` (start their processes) before the first chunk."""

    @abstractmethod
    def map(
        self, tasks: Iterable[ChunkTask], notify: Callable[[str], None] | None = None
    ) -> Generator[ChunkResult, None, None]:
        """Results in task order; stopping the iteration (or `close()`) abandons the rest.
        `notify` gets lines for the job's log (a batch halved after running out of memory)."""

    @abstractmethod
    def describe(self) -> ExecutorInfo:
        """What it speaks on, and with how many engines at once."""

    @abstractmethod
    def close(self, keep_warm: bool = False) -> None:
        """The caller is done speaking with it. With `keep_warm` (a worker that runs the next
        job too) an executor may keep its engines loaded for that job where it can afford
        to; otherwise whatever it started stops now."""


class ExecutorFactory(Protocol):
    """Makes the executor for a loaded engine: the job's `batch_size` (None: the fastest for
    the device) and `voice` (it sizes GPU batches by the voice's sample rate)."""

    def __call__(
        self,
        engine_name: str,
        engine: Engine,
        batch_size: int | None = None,
        voice: str | None = None,
    ) -> ChunkExecutor: ...
