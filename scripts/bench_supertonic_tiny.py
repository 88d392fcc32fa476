"""Time the Supertonic engine on the tiny test model (or a real one) and print tables.

    python scripts/bench_supertonic_tiny.py [--model DIR] [--steps 16] [--repeats 7] [--gpu]

1. chars/sec and time per chunk for batches of 1, 4 and 16 chunks of ~70 characters;
2. this engine against the official `supertonic` package's loop, interleaved in one run
   (needs `pip install --no-deps supertonic==1.3.1`);
3. where the step loop's time goes: inside `session.run` (or `run_with_iobinding`) versus
   outside it (Python, building feeds, host↔device copies).

On the tiny model the graphs do almost nothing, so this measures the engine's own overhead;
run it with --model on the real files for throughput that means something.
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
import time
from collections.abc import Callable, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from audiopub.tts.batching import BatchLimits
from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.supertonic import engine as supertonic
from audiopub.tts.supertonic.engine import SupertonicEngine

CHUNKS = [  # 16 chunks of 62 to 69 characters, like the chunker produces for this engine
    "The lighthouse keeper climbed the stairs before the storm arrived.",
    "Nobody in the village remembered a winter as long as that one.",
    "She folded the letter twice and hid it under the loose floorboard.",
    "At noon the market square filled with carts, dogs and loud sellers.",
    "His grandfather's watch had stopped at a quarter past four exactly.",
    "They walked along the river until the city lights faded behind them.",
    "The old map showed a road that no longer existed on any new chart.",
    "Rain drummed on the tin roof while the children counted the seconds.",
    "He had promised to return by autumn, but the letters stopped coming.",
    "A single candle lit the kitchen where the two sisters sat in silence.",
    "The train was late again, and the platform smelled of coal and rain.",
    "Every morning the baker left a loaf on the step of the empty house.",
    "Her voice was calm, though her hands would not stop shaking at all.",
    "Beyond the hills lay the sea, grey and restless under a low sky.",
    "The professor closed the book and asked the class what they feared.",
    "When the bells rang at midnight, the whole town seemed to hold still.",
]


def _best_time(action: Callable[[], Any], repeats: int) -> float:
    # Best of N, not the mean: on a shared machine the slow runs measure the neighbours.
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def batch_throughput(engine: SupertonicEngine, steps: int, repeats: int) -> None:
    where = engine.device.describe()
    print(f"\n## Engine throughput ({steps} steps, {where}, best of {repeats})\n")
    print("| batch | s/call | ms/chunk | chars/s | audio s/s |")
    print("|---:|---:|---:|---:|---:|")
    options = SynthesisOptions(steps=steps, seed=0)
    for size in (1, 4, 16):
        texts = CHUNKS[:size]
        waves = engine.synthesize(texts, "F1", options)  # warm-up
        seconds = _best_time(partial(engine.synthesize, texts, "F1", options), repeats)
        chars = sum(len(text) for text in texts)
        audio = sum(result.duration_s for result in waves)
        print(
            f"| {size} | {seconds:.4f} | {1000 * seconds / size:.2f} | {chars / seconds:,.0f} "
            f"| {audio / seconds:,.0f} |"
        )


def versus_official(
    engine: SupertonicEngine, steps: int, repeats: int, threads: int | None
) -> None:
    try:
        from supertonic import loader
    except ImportError:
        print("\n(official `supertonic` not installed: pip install --no-deps supertonic==1.3.1)")
        return
    official = loader.load_model(
        engine.files.onnx_dir.parent, auto_download=False, intra_op_num_threads=threads
    )
    style = loader.load_voice_style_from_json_file(engine.files.voices_dir / "F1.json")

    def official_call(texts: list[str]) -> None:
        batch = type(style)(np.repeat(style.ttl, len(texts), 0), np.repeat(style.dp, len(texts), 0))
        official(texts, batch, total_step=steps, speed=1.0, lang=engine.language)

    def official_calls(calls: list[list[str]]) -> None:
        for texts in calls:
            official_call(texts)

    def engine_call(texts: list[str], bound: bool) -> None:
        engine.io_binding = bound
        engine.synthesize(texts, "F1", SynthesisOptions(steps=steps, seed=0))

    cases = [  # (label, texts per official call, texts per engine call)
        ("1 chunk", [CHUNKS[:1]], CHUNKS[:1]),
        ("16 chunks, both batched", [CHUNKS], CHUNKS),
        ("16 chunks, official one by one (as its TTS.synthesize)", [[t] for t in CHUNKS], CHUNKS),
    ]
    print(
        f"\n## This engine vs the official loop, interleaved ({steps} steps, best of {repeats})\n"
    )
    print(
        "| case | official s | engine s (session.run) | engine s (IO binding) | official / engine |"
    )
    print("|---|---:|---:|---:|---:|")
    for label, calls, texts in cases:
        runs: dict[str, Callable[[], None]] = {
            "official": partial(official_calls, calls),
            "plain": partial(engine_call, texts, False),
            "bound": partial(engine_call, texts, True),
        }
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(repeats):  # interleaved so all three see the same machine state
            for name, run in runs.items():
                start = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - start)
        best = {name: min(values) for name, values in times.items()}
        ours = min(best["plain"], best["bound"])
        print(
            f"| {label} | {best['official']:.4f} | {best['plain']:.4f} | {best['bound']:.4f} "
            f"| {best['official'] / ours:.2f}x |"
        )
    engine.io_binding = engine.sessions["vector_estimator"].device.on_gpu


def step_loop_share(engine: SupertonicEngine, steps: int, repeats: int) -> None:
    """Wrap the estimator's run methods with timers; the rest of the loop is overhead."""
    session = engine.sessions["vector_estimator"].inference
    inside: list[float] = []
    loop: list[float] = []

    def timed(method: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            result = method(*args, **kwargs)
            inside.append(time.perf_counter() - start)
            return result

        return wrapper

    real_denoise = supertonic.denoise

    def timed_denoise(
        session: Any,
        latent: np.ndarray,
        conditions: Mapping[str, np.ndarray],
        steps: int,
        io_binding_device: str | None = None,
    ) -> np.ndarray:
        start = time.perf_counter()
        result = real_denoise(session, latent, conditions, steps, io_binding_device)
        loop.append(time.perf_counter() - start)
        return result

    print(f"\n## Step loop: time inside the estimator call vs around it ({steps} steps)\n")
    print("| batch | path | loop ms | inside run ms | outside (Python, copies) |")
    print("|---:|---|---:|---:|---:|")
    session.run = timed(session.run)  # instance attributes: the class stays untouched
    session.run_with_iobinding = timed(session.run_with_iobinding)
    supertonic.denoise = timed_denoise
    try:
        for size in (1, 16):
            for bound in (False, True):
                engine.io_binding = bound
                inside.clear()
                loop.clear()
                for _ in range(repeats):
                    engine.synthesize(CHUNKS[:size], "F1", SynthesisOptions(steps=steps, seed=0))
                total, run = sum(loop), sum(inside)
                print(
                    f"| {size} | {'IO binding' if bound else 'session.run'} "
                    f"| {1000 * total / repeats:.2f} | {1000 * run / repeats:.2f} "
                    f"| {100 * (total - run) / total:.1f}% |"
                )
    finally:
        del session.run, session.run_with_iobinding
        supertonic.denoise = real_denoise
        engine.io_binding = engine.sessions["vector_estimator"].device.on_gpu


def _tiny_model_builder() -> Callable[[Path], Path]:
    path = Path(__file__).with_name("make_tiny_supertonic.py")
    spec = importlib.util.spec_from_file_location("make_tiny_supertonic", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_tiny_model


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="model directory (default: a fresh tiny one)")
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--gpu", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        model_dir = args.model
        if model_dir is None:
            model_dir = _tiny_model_builder()(Path(scratch) / "tiny")
        engine = SupertonicEngine(model_dir, use_gpu=args.gpu, threads=args.threads)
        # Every call one batch, however its chunks' lengths differ.
        engine.batching = BatchLimits(len(CHUNKS), max_length_ratio=float("inf"))
        batch_throughput(engine, args.steps, args.repeats)
        versus_official(engine, args.steps, args.repeats, args.threads)
        step_loop_share(engine, args.steps, args.repeats)


if __name__ == "__main__":
    main()
