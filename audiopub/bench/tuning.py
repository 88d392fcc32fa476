"""Where a model's nodes run, and the optional CUDA settings compared on one text.

Each setting (`settings.CUDA_TUNINGS`, alone or joined with "+") gets an engine of its own,
loaded while AUDIOPUB_CUDA_TUNING says that setting, since ORT takes provider options when a
session is made (or the one a caller already placed under it); its first synthesis is profiled
to count its nodes by provider (`tts.node_placement`) and kept, with a fixed seed, to say how
far each setting's audio is from the first's (`fp16_decoder` changes the samples; the cuDNN
settings should not). Then every engine speaks the same text in padded batches, interleaved,
as `measure.interleaved` alternates any comparison.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import partial

import numpy as np

from audiopub import settings
from audiopub.bench.measure import interleaved, run_inline
from audiopub.bench.results import Stats, TuningCell
from audiopub.tts.engine import Engine, SynthesisOptions
from audiopub.tts.node_placement import recording_node_placement
from audiopub.tts.registry import load_engine

PROBE_TEXT = "A short sentence, to run every node of the model once."


def tuning_name(tuning: frozenset[str]) -> str:
    return "+".join(sorted(tuning)) or "default"


def tuning_variants(text: str) -> list[frozenset[str]]:
    """`--cuda-tuning default,max_workspace,max_workspace+pad_nc1d` for argparse."""
    try:
        return [
            settings.parse_cuda_tuning(part.replace("+", ","))
            for part in text.split(",")
            if part.strip()
        ]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@contextmanager
def tuned(tuning: frozenset[str]) -> Iterator[None]:
    """The settings in force with `tuning` as their CUDA settings inside the block, as they
    were after it."""
    # The engine inside is loaded through the registry, whose sessions read the settings in
    # force: a variant of those is what it must find.
    with settings.installed(replace(settings.current(), cuda_tuning=tuning)):
        yield


@dataclass(frozen=True)
class PlacedEngine:
    engine: Engine
    nodes: dict[str, int]  # its nodes per provider, counted over one short synthesis
    probe: np.ndarray  # that synthesis's audio (seed 0 unless the options had one)
    tuning: frozenset[str]  # the CUDA settings it was loaded under


def placed_engine(
    name: str,
    use_gpu: bool,
    voice: str,
    options: SynthesisOptions,
    tuning: frozenset[str] | None = None,
) -> PlacedEngine:
    """A new engine, under `tuning` (else the settings in force), after one short synthesis."""
    seeded = options if options.seed is not None else replace(options, seed=0)
    under = settings.cuda_tuning() if tuning is None else tuning
    with tuned(under), recording_node_placement() as placement:
        engine = load_engine(name, use_gpu)
        (probe,) = engine.synthesize([PROBE_TEXT], voice, seeded)
    return PlacedEngine(engine, placement.nodes, probe.audio, under)


def relative_difference(audio: np.ndarray, reference: np.ndarray) -> float | None:
    """RMS of `audio - reference` over the RMS of `reference` (0.0: the same samples); None
    when their lengths differ."""
    if audio.shape != reference.shape:
        return None
    signal = float(np.sqrt(np.mean(np.square(reference, dtype=np.float64))))
    difference = float(np.sqrt(np.mean(np.square(audio - reference, dtype=np.float64))))
    return difference / signal if signal else None


def compare_tunings(
    name: str,
    variants: list[frozenset[str]],
    voice: str,
    options: SynthesisOptions,
    text: str,
    batch_size: int,
    runs: int,
    warmup: int,
    announce: Callable[[str], None] | None = None,
    already_placed: Sequence[PlacedEngine] = (),
) -> list[TuningCell]:
    """Each setting's engine speaks `text` in batches of up to `batch_size`, interleaved;
    `announce` is told each step before it runs (see `measure.interleaved`). A setting an
    engine of `already_placed` was loaded under (a GPU engine placed with the same voice and
    options, such as the run's own) takes that engine instead of loading another: a GPU
    session takes seconds to make."""
    placed = []
    for tuning in variants:
        known = next((side for side in already_placed if side.tuning == tuning), None)
        if announce is not None:
            what = "loading" if known is None else "reusing"
            announce(f"{what} the engine with {tuning_name(tuning)}, its node placement")
        placed.append(known or placed_engine(name, True, voice, options, tuning))
    runners = [
        partial(run_inline, side.engine, text, voice, options, batch_size) for side in placed
    ]
    timings = interleaved(runners, runs, warmup, [tuning_name(t) for t in variants], announce)
    return [
        TuningCell(
            tuning_name(tuning),
            side.engine.device.describe(),
            side.nodes,
            len(text),
            Stats.of([t.seconds for t in cell]),
            Stats.of([len(text) / t.seconds for t in cell]),
            relative_difference(side.probe, placed[0].probe),
        )
        for tuning, side, cell in zip(variants, placed, timings, strict=True)
    ]
