"""Supertonic's arenas after running out of device memory: every run of its four graphs, the
step loop's IO-bound runs too, goes through `Session`, so the run after one that ran out of
memory frees the arena's unused memory on the session's device, once; and when one graph ran
out, every graph's next run frees its own arena, where the failed batch's peak sits too.

No GPU is needed: the tiny Supertonic model runs for real on the CPU. Each session says it
runs on CUDA device 1, and ORT's session is wrapped where it meets the driver, to record each
run's options and run out of memory when told.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors
from test_batched_jobs import OUT_OF_MEMORY
from tiny_supertonic import build_tiny_model

from audiopub.errors import SynthesisFailed
from audiopub.tts.batching import BatchLimits, is_out_of_memory
from audiopub.tts.engine import DeviceReport, SynthesisOptions
from audiopub.tts.onnx_runtime import ARENA_SHRINKAGE, CUDA, Session
from audiopub.tts.supertonic import engine as supertonic
from audiopub.tts.supertonic.engine import SupertonicEngine

ON_GPU_1 = DeviceReport(requested_gpu=True, provider=CUDA, device_id=1)
STEPS = 3
OPTIONS = SynthesisOptions(steps=STEPS, seed=5)
TEXTS = ["Hi.", "The quick brown fox, it said, jumps."]


class Driver:
    """An ORT session where it meets the driver: the real (CPU) session's results, each run's
    options recorded, and a run that runs out of memory when told to."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.options: list[Any] = []
        self.out_of_memory = False

    def run(self, outputs: Any, feeds: Any, options: Any = None) -> Any:
        self._meet(options)
        return self.real.run(outputs, feeds)

    def run_with_iobinding(self, binding: Any, options: Any = None) -> None:
        self._meet(options)
        self.real.run_with_iobinding(binding)

    def shrinks(self) -> list[bool]:
        """For each run so far, whether it asked to shrink device 1's arena at its end."""
        return [
            options is not None and options.get_run_config_entry(ARENA_SHRINKAGE) == "gpu:1"
            for options in self.options
        ]

    def _meet(self, options: Any) -> None:
        # The options stop here: the CPU session has no CUDA arena to shrink.
        self.options.append(options)
        if self.out_of_memory:
            self.out_of_memory = False
            raise ort_errors.RuntimeException(OUT_OF_MEMORY)

    def __getattr__(self, name: str) -> Any:  # io_binding, get_inputs, ...
        return getattr(self.real, name)


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("supertonic-3"))


@pytest.fixture
def engine(tiny_model: Path) -> SupertonicEngine:
    """An engine whose four sessions say they run on CUDA device 1, each through a `Driver`."""
    engine = SupertonicEngine(tiny_model, use_gpu=False)
    engine.sessions = {
        name: Session(Driver(session.inference), ON_GPU_1)
        for name, session in engine.sessions.items()
    }
    engine.io_binding = False  # bound values would live on the CPU, not on CUDA device 1
    engine.batching = BatchLimits(16, max_length_ratio=100)  # TEXTS in one batch
    return engine


def _driver(session: Session) -> Driver:
    assert isinstance(session.inference, Driver)
    return session.inference


def _waves(engine: SupertonicEngine) -> list[np.ndarray]:
    return [result.audio for result in engine.synthesize(TEXTS, "F1", OPTIONS)]


@pytest.mark.parametrize("graph", supertonic.GRAPHS)
def test_after_a_graph_ran_out_of_memory_every_graph_shrinks_its_arena_once(
    engine: SupertonicEngine, graph: str
) -> None:
    drivers = {name: _driver(session) for name, session in engine.sessions.items()}
    drivers[graph].out_of_memory = True
    with pytest.raises(SynthesisFailed) as failed:
        _waves(engine)
    assert is_out_of_memory(failed.value)  # so the batch is halved, and the next run shrinks
    failed_runs = {name: len(driver.options) for name, driver in drivers.items()}

    after = _waves(engine)
    clean = _waves(engine)

    for name, driver in drivers.items():
        # Only the first run after the failure: a graph's later steps and batches don't.
        shrinks = [index for index, shrink in enumerate(driver.shrinks()) if shrink]
        assert shrinks == [failed_runs[name]], name
    for a, b in zip(after, clean, strict=True):
        np.testing.assert_array_equal(a, b)


def _estimator_inputs(
    engine: SupertonicEngine, monkeypatch: pytest.MonkeyPatch
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The latent and conditions the engine hands the step loop for TEXTS."""
    seen: list[tuple[np.ndarray, dict[str, np.ndarray]]] = []
    real = supertonic.denoise

    def spy(
        session: Session, latent: np.ndarray, conditions: dict[str, np.ndarray], *args: Any
    ) -> np.ndarray:
        seen.append((latent, dict(conditions)))
        return real(session, latent, conditions, *args)

    monkeypatch.setattr(supertonic, "denoise", spy)
    _waves(engine)
    monkeypatch.undo()
    [inputs] = seen
    return inputs


def test_the_io_bound_step_after_running_out_of_memory_shrinks_the_arena(
    engine: SupertonicEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    latent, conditions = _estimator_inputs(engine, monkeypatch)
    session = engine.sessions["vector_estimator"]
    driver = _driver(session)
    driver.options.clear()
    driver.out_of_memory = True

    with pytest.raises(ort_errors.RuntimeException, match="Failed to allocate"):
        supertonic.denoise(session, latent, conditions, STEPS, "cpu")
    after = supertonic.denoise(session, latent, conditions, STEPS, "cpu")
    clean = supertonic.denoise(session, latent, conditions, STEPS, "cpu")

    # The failed first step, then a loop whose first step shrinks, then a clean loop.
    assert driver.shrinks() == [False, True] + [False] * (2 * STEPS - 1)
    np.testing.assert_array_equal(after, clean)
    np.testing.assert_array_equal(after, supertonic.denoise(session, latent, conditions, STEPS))
