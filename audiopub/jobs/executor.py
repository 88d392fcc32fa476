"""Which executor speaks a job's chunks on this machine: one worker thread per GPU in this
process (`device_executor`), or a pool of engine processes on the CPU (`process_pool`, as many
as `cpu_sizing` says). A job closes its executor when it is done speaking
(`ChunkExecutor.close`): the web app's worker keeps the engine processes warm for its next job
(`warm_engines`); a one-off conversion stops them.

Every executor takes the same plain-data tasks (`chunk_work`), hands results back in task
order and implements the one contract (`chunk_executor`), so choosing another kind of
executor on this machine is one more branch in `executor_for`. Executors elsewhere (a Ray
cluster: `cluster.executor`) come from a factory of their own, handed to whoever runs jobs.
"""

from __future__ import annotations

import atexit
from pathlib import Path

from audiopub import settings
from audiopub.gpu import devices, vram_budget
from audiopub.gpu.usage import process_vram_mb
from audiopub.jobs.chunk_executor import ChunkExecutor
from audiopub.jobs.cpu_sizing import cpu_workers
from audiopub.jobs.device_executor import DeviceExecutor
from audiopub.jobs.process_pool import ProcessExecutor
from audiopub.jobs.warm_engines import PoolKey, WarmEngines
from audiopub.tts.batching import BatchLimits, padded_chars_for_vram
from audiopub.tts.engine import Engine, device_for, voice_of
from audiopub.tts.registry import default_model_dir, get_engine, stamp

_warm = WarmEngines()  # this process's engines, in use or kept for the next job


def executor_for(
    engine_name: str, engine: Engine, batch_size: int | None = None, voice: str | None = None
) -> ChunkExecutor:
    """The executor for a loaded engine: one thread per GPU, or a process pool on a CPU.

    `batch_size` forces chunks per batch (else AUDIOPUB_BATCH_SIZE, else what is fastest on
    the device: the engine's own choice on a CPU, up to GPU_MAX_BATCH within the free VRAM on a
    GPU); `voice` sizes GPU batches by the audio it makes (its sample rate). An
    `ExecutorFactory` (`chunk_executor`)."""
    # Called by a job's synthesis plan, which holds no settings (the factory's signature is
    # every executor's, a cluster's too): the settings in force are read here, once a job.
    options = settings.current()
    forced = batch_size or options.batch_size
    if device_for(engine, voice).on_gpu:  # the job's voice: no other is loaded to tell
        return _gpu_executor(engine_name, engine, forced, voice, options)
    return _cpu_executor(engine_name, engine, forced, options)


def _cpu_executor(
    engine_name: str, engine: Engine, forced: int | None, options: settings.Settings
) -> ChunkExecutor:
    """A pool of engine processes, one per core as far as memory allows (`options` may fix
    how many), kept for the next job of the same engine; on one core, the engine already
    loaded, in this process."""
    size = _batch_size(engine, forced)
    model_dir = default_model_dir(engine_name)
    device = engine.device.describe()

    def new_pool() -> ProcessExecutor | None:
        workers = cpu_workers(size, options.cpu_workers)
        return (
            ProcessExecutor(
                engine_name, model_dir, workers, size, device, keeper=_warm, options=options
            )
            if workers > 1
            else None
        )

    pool = _warm.take(pool_key(engine_name, model_dir, size, device), options.cpu_workers, new_pool)
    return pool if pool is not None else in_process_executor(engine, forced)


def pool_key(engine_name: str, model_dir: Path, size: int, device: str) -> PoolKey:
    """What a warm pool of engine processes must match to serve a job (see `PoolKey`)."""
    return (engine_name, model_dir, size, device, stamp(engine_name, model_dir))


def default_batch_size(engine: Engine, forced: int | None = None) -> int:
    """`forced`, else AUDIOPUB_BATCH_SIZE, else the fastest for the engine's device: its own
    choice on a CPU, GPU_MAX_BATCH on a GPU (where the free VRAM may allow fewer)."""
    return _batch_size(engine, forced or settings.batch_size_override())


def _batch_size(engine: Engine, forced: int | None) -> int:
    """`default_batch_size` once AUDIOPUB_BATCH_SIZE has been asked (`forced` holds it)."""
    if forced:
        return forced
    return settings.GPU_MAX_BATCH if engine.device.on_gpu else engine.batch_size


def in_process_executor(engine: Engine, batch_size: int | None = None) -> ChunkExecutor:
    """Synthesis in this process, on this one engine (injected engines, one-core machines)."""
    return DeviceExecutor([engine], BatchLimits(default_batch_size(engine, batch_size)))


def _gpu_executor(
    engine_name: str,
    engine: Engine,
    forced: int | None,
    voice: str | None,
    options: settings.Settings,
) -> ChunkExecutor:
    """One engine per visible GPU, all fed from one queue; batches bounded by the VRAM budget
    (free + this process's own) of the tightest visible device, unless the size was forced.
    The engines stay loaded for the next job while there is room (`warm_engines`)."""
    _warm.hold_on_gpu(engine_name)  # first: idle engines of others give their memory back
    engines = [engine] + [
        get_engine(engine_name, use_gpu=True, device_id=device)
        for device in devices.cuda_device_ids(options.cuda_visible_devices)[1:]
    ]
    limits = BatchLimits(_batch_size(engine, forced))
    budget = vram_budget.vram_budget_bytes()
    if budget and not forced:
        rate = voice_of(engine, voice).sample_rate if voice else 48_000  # the highest there is
        limits = BatchLimits(limits.max_items, padded_chars_for_vram(min(budget.values()), rate))
    return DeviceExecutor(
        engines,
        limits,
        vram_probe=process_vram_mb,
        on_close=lambda keep: _warm.give_back_on_gpu(engine_name, keep),
    )


def warm_pools() -> list[ProcessExecutor]:
    """The engine processes this process holds now, in use or kept warm."""
    return _warm.pools()


def warm_engines() -> WarmEngines:
    """This process's engines kept between jobs (the worker asks it before loading ahead)."""
    return _warm


@atexit.register
def close_warm_engines() -> None:
    """Stop every engine process this process holds and release its GPU engines (a worker
    stopping, the app exiting)."""
    _warm.close_all()
