"""In-process synthesis in padded batches: one worker thread per engine (one per GPU), fed
from one queue, with the text front end running ahead and the files written behind.

    tasks ─▶ planner thread: window of chunks → batches by length → engine.prepare (phonemes)
          ─▶ bounded queue ─▶ one worker per device: engine.speak (nothing else)
          ─▶ bounded queue ─▶ writer threads: chunk files encoded and written atomically
          ─▶ results, handed back in reading order

The planner prepares the next batches while the devices speak the current ones, so a GPU
never waits for espeak; the writers encode FLAC and fsync while the devices speak the next
ones (at 20 k chars/s that is ~150 chunks a second, two fsyncs each), so a GPU never waits
for the disk either. A result is handed on only once its file is written: a crash or a
failed write leaves no chunk that counts as done without its whole file.
The pipeline sees results in task order, as from any executor, so
chunk marks, progress, stitching and resume never see a batch. When a device runs out of
memory, the batch is halved and the same chunks tried again, and the job's log says so;
batches stay at most that size until GROW_AFTER_BATCHES have run cleanly, then may double
again, up to the size the map began with (a brief squeeze, another program's or this job's
longest chunks, does not keep a job small to its end). A size that fails again after growing
waits twice as long before the next try.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from audiopub.errors import AudiopubError
from audiopub.jobs.chunk_executor import ChunkExecutor, ExecutorInfo, Placement
from audiopub.jobs.chunk_work import (
    RETRIES,
    ChunkResult,
    ChunkTask,
    Spoken,
    in_task_order,
    planned_batches,
    speak_alone,
    write_spoken,
)
from audiopub.tts.batching import BatchLimits, is_out_of_memory
from audiopub.tts.engine import Engine, PreparedText, SynthesisResult, warm_up

log = logging.getLogger(__name__)

BATCHES_AHEAD: Final = 2  # prepared batches queued per device: the next one is always ready
# Threads writing chunk files: FLAC encoding and fsync release the GIL, and two let one fsync
# wait on the disk while the other encodes.
WRITERS: Final = 2
GROW_AFTER_BATCHES: Final = 16  # clean batches after a halving before batches may double
_JOIN_TIMEOUT_S: Final = 600.0  # a stopped map waits for the batch a device is speaking
_POLL_S: Final = 0.1  # how often a blocked thread looks at the stop flag

VramProbe = Callable[[], dict[int, float]]  # MiB this process holds per GPU


@dataclass
class _Work:
    tasks: list[tuple[int, ChunkTask]]  # (position in the map, task)
    prepared: list[PreparedText] | None  # None: the front end failed; each chunk on its own


# A spoken batch on its way to a writer: (position in the map, audio or a failed result).
_SpokenBatch = list[tuple[int, Spoken | ChunkResult]]


_DONE: Final = object()  # a thread has nothing more to give


class DeviceExecutor(ChunkExecutor):
    """Chunks → audio files on in-process engines, one worker thread per engine."""

    def __init__(
        self,
        engines: Sequence[Engine],
        limits: BatchLimits,
        vram_probe: VramProbe | None = None,
        grow_after: int = GROW_AFTER_BATCHES,
        on_close: Callable[[bool], None] | None = None,
    ) -> None:
        """`on_close`: told once, with `keep_warm`, when the caller is done speaking (who keeps
        the engines loaded between jobs, `warm_engines`); None: the engines are the caller's."""
        if not engines:
            raise ValueError("a device executor needs at least one engine")
        self.engines = list(engines)
        self.limits = limits
        self._ceiling = limits.max_items  # what batches grow back to after a halving
        self._grow_after = grow_after
        self._clean = 0  # batches run without running out of memory since the last change
        self._grown = False  # the limit grew since the last halving
        self._vram_probe = vram_probe
        self._lock = threading.Lock()  # guards limits and the figures below
        self.batch_sizes: Counter[int] = Counter()  # batch size → batches run
        self.device_chunks: Counter[str] = Counter()  # device → chunks it spoke
        self.peak_vram_mb: dict[int, float] = {}
        self._notes: queue.SimpleQueue[str] = queue.SimpleQueue()
        self._on_close = on_close

    def start(self, voice: str) -> None:
        """Load `voice` on every engine before any chunk (Piper loads a voice's session on
        first use), so that no chunk's time holds the loading."""
        for engine in self.engines:
            warm_up(engine, voice)

    def describe(self) -> ExecutorInfo:
        devices = tuple(engine.device.describe() for engine in self.engines)
        return ExecutorInfo(Placement.IN_PROCESS, devices[0], devices, len(self.engines))

    def close(self, keep_warm: bool = False) -> None:
        """Nothing to stop here: the engines are the registry's (or the caller's); whoever
        keeps them between jobs is told, once."""
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close(keep_warm)

    def map(
        self, tasks: Iterable[ChunkTask], notify: Callable[[str], None] | None = None
    ) -> Generator[ChunkResult, None, None]:
        """Results in task order; stopping the iteration stops after the batches in flight."""
        todo: queue.Queue[object] = queue.Queue(maxsize=BATCHES_AHEAD * len(self.engines))
        # Bounded too: spoken audio waiting for a slow disk is held in memory.
        to_write: queue.Queue[object] = queue.Queue(maxsize=BATCHES_AHEAD * len(self.engines))
        done: queue.Queue[object] = queue.Queue()
        stop = threading.Event()
        devices_left = _Countdown(len(self.engines))
        threads = [
            threading.Thread(
                target=self._plan,
                args=(tasks, todo, done, stop),
                name="audiopub-planner",
                daemon=True,
            )
        ]
        threads += [
            threading.Thread(
                target=self._work,
                args=(engine, todo, to_write, done, stop, devices_left),
                name=f"audiopub-device-{number}",
                daemon=True,
            )
            for number, engine in enumerate(self.engines)
        ]
        threads += [
            threading.Thread(
                target=_write,
                args=(to_write, done, stop),
                name=f"audiopub-writer-{number}",
                daemon=True,
            )
            for number in range(WRITERS)
        ]
        for thread in threads:
            thread.start()
        try:
            # The planner and each writer say when they are done; devices tell the writers.
            yield from in_task_order(self._finished(done, 1 + WRITERS, notify or log.info))
        finally:
            stop.set()
            for thread in threads:
                thread.join(_JOIN_TIMEOUT_S)

    def _finished(
        self, done: queue.Queue[object], threads: int, notify: Callable[[str], None]
    ) -> Iterator[list[tuple[int, ChunkResult]]]:
        """Batches of results as devices finish them, until every thread is done."""
        while threads:
            item = done.get()
            while not self._notes.empty():  # told in the caller's thread, where its log is
                notify(self._notes.get())
            if item is _DONE:
                threads -= 1
            elif isinstance(item, BaseException):
                raise item
            else:
                yield item  # type: ignore[misc]  # a batch: the queue holds batches, errors and _DONE

    # --- the planner thread -------------------------------------------------------------

    def _plan(
        self,
        tasks: Iterable[ChunkTask],
        todo: queue.Queue[object],
        done: queue.Queue[object],
        stop: threading.Event,
    ) -> None:
        try:
            for batch in planned_batches(tasks, lambda: self.current_limits):
                if stop.is_set():
                    return
                if not _put(todo, _Work(batch, self._prepare(batch)), stop):
                    return
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            done.put(exc)
        finally:
            for _ in self.engines:
                _put(todo, _DONE, stop)
            done.put(_DONE)

    def _prepare(self, batch: list[tuple[int, ChunkTask]]) -> list[PreparedText] | None:
        first = batch[0][1]
        try:
            return self.engines[0].prepare(
                [task.text for _, task in batch], first.voice, first.options
            )
        except AudiopubError:
            raise
        except Exception as exc:  # noqa: BLE001 - each chunk is tried alone and names itself
            log.warning("preparing a batch of %d chunks failed (%s)", len(batch), exc)
            return None

    # --- the device threads -------------------------------------------------------------

    def _work(
        self,
        engine: Engine,
        todo: queue.Queue[object],
        to_write: queue.Queue[object],
        done: queue.Queue[object],
        stop: threading.Event,
        devices_left: _Countdown,
    ) -> None:
        try:
            for work in _taken(todo, stop):
                assert isinstance(work, _Work)
                if not _put(to_write, self._speak_work(engine, work), stop):
                    return
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            done.put(exc)
        finally:
            if devices_left.count_down():  # the last device out tells every writer
                for _ in range(WRITERS):
                    _put(to_write, _DONE, stop)

    def _speak_work(self, engine: Engine, work: _Work) -> _SpokenBatch:
        positions = [position for position, _ in work.tasks]
        tasks = [task for _, task in work.tasks]
        if work.prepared is None:
            return list(zip(positions, [speak_alone(engine, t) for t in tasks]))
        results: list[Spoken | ChunkResult] = []
        size = self.current_limits.max_items  # smaller since it was planned, after an OOM
        for start in range(0, len(tasks), size):
            results += self._speak_batch(
                engine, tasks[start : start + size], work.prepared[start : start + size]
            )
        self._record(engine, len(tasks))
        return list(zip(positions, results, strict=True))

    def _speak_batch(
        self, engine: Engine, tasks: list[ChunkTask], prepared: list[PreparedText]
    ) -> list[Spoken | ChunkResult]:
        try:
            spoken = self._speak_halving(engine, tasks, prepared)
        except Exception as exc:  # noqa: BLE001 - see below
            if is_out_of_memory(exc):  # even one chunk alone does not fit
                return [
                    ChunkResult(
                        task.key,
                        0,
                        0,
                        0.0,
                        engine.device.provider,
                        f"Out of GPU memory for this chunk alone: {task.text!r} ({exc})",
                    )
                    for task in tasks
                ]
            if isinstance(exc, AudiopubError):
                raise
            if len(tasks) == 1:  # that was its first attempt
                return [speak_alone(engine, tasks[0], attempts=RETRIES)]
            log.warning("a batch of %d chunks failed (%s); trying them one by one", len(tasks), exc)
            return [speak_alone(engine, task) for task in tasks]
        self._ran_cleanly(engine, len(tasks))
        provider = engine.device.provider
        return [
            Spoken(task, result, result.engine_s, provider)
            for task, result in zip(tasks, spoken, strict=True)
        ]

    def _speak_halving(
        self, engine: Engine, tasks: list[ChunkTask], prepared: list[PreparedText]
    ) -> list[SynthesisResult]:
        """One padded batch; on running out of device memory, the same chunks as two."""
        try:
            return engine.speak(prepared, tasks[0].voice, tasks[0].options)
        except Exception as exc:
            if len(tasks) == 1 or not is_out_of_memory(exc):
                raise
        half = len(tasks) // 2
        with self._lock:
            self.limits = self.limits.halved(len(tasks))
            limit = self.limits.max_items
            if self._grown:  # grown too far again: wait longer before the next try
                self._grow_after *= 2
            self._clean, self._grown = 0, False
        self._notes.put(
            f"{engine.device.describe()} ran out of memory on a batch of "
            f"{len(tasks)} chunks: trying them again as {half} + {len(tasks) - half}"
            f"; batches are at most {limit} chunks until they run cleanly"
        )
        return self._speak_halving(engine, tasks[:half], prepared[:half]) + self._speak_halving(
            engine, tasks[half:], prepared[half:]
        )

    def _ran_cleanly(self, engine: Engine, size: int) -> None:
        """Count a batch that fitted; after enough of them since a halving, let batches grow."""
        with self._lock:
            self.batch_sizes[size] += 1
            self._clean += 1
            if self._clean < self._grow_after or self.limits.max_items >= self._ceiling:
                return
            self.limits = self.limits.grown(self._ceiling)
            self._clean, self._grown = 0, True
            limit, after = self.limits.max_items, self._grow_after
        self._notes.put(
            f"{engine.device.describe()} ran {after} batches without "
            f"running out of memory: batches may again be {limit} chunks"
        )

    def _record(self, engine: Engine, chunks: int) -> None:
        vram = self._vram_probe() if self._vram_probe and engine.device.on_gpu else {}
        with self._lock:
            self.device_chunks[engine.device.describe()] += chunks
            for device, mib in vram.items():
                self.peak_vram_mb[device] = max(mib, self.peak_vram_mb.get(device, 0.0))

    @property
    def current_limits(self) -> BatchLimits:
        with self._lock:
            return self.limits


def _taken(items: queue.Queue[object], stop: threading.Event) -> Iterator[object]:
    """What a thread's queue hands it, until `_DONE` or the executor stops."""
    while not stop.is_set():
        try:
            item = items.get(timeout=_POLL_S)
        except queue.Empty:
            continue
        if item is _DONE:
            return
        yield item


# --- the writer threads ----------------------------------------------------------------------


def _write(to_write: queue.Queue[object], done: queue.Queue[object], stop: threading.Event) -> None:
    """Write spoken batches' files, each atomically, and hand on their results once written."""
    try:
        for batch in _taken(to_write, stop):
            assert isinstance(batch, list)
            done.put(
                [
                    (position, write_spoken(outcome) if isinstance(outcome, Spoken) else outcome)
                    for position, outcome in batch
                ]
            )
    except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
        done.put(exc)
    finally:
        done.put(_DONE)


class _Countdown:
    """How many device threads are still running; the last to stop hears so."""

    def __init__(self, count: int) -> None:
        self._count = count
        self._lock = threading.Lock()

    def count_down(self) -> bool:
        with self._lock:
            self._count -= 1
            return self._count == 0


def _put(target: queue.Queue[object], item: object, stop: threading.Event) -> bool:
    """Put `item` once there is room; False if the map stopped first."""
    while not stop.is_set():
        try:
            target.put(item, timeout=_POLL_S)
            return True
        except queue.Full:
            continue
    return False
