"""How much what Whisper hears of joe changes with the CPU's instruction set.

    python scripts/listening_isa.py [--threads 2] [--voices ort-default,dither]
        [--settings default,GENERIC,MKL]

Float results differ from one CPU to another: CTranslate2 (the listener) and ONNX Runtime (the
Piper voice) pick their kernels from the instruction sets the CPU has, and CTranslate2 does its
int8 matrix products with Intel MKL on Intel CPUs and with oneDNN on others. This speaks the
test sentences of tests/conftest.py with joe (seed 1, as tests/test_listen.py does), then hears
them in a fresh process for each CTranslate2 setting this CPU can run:

    CT2_FORCE_CPU_ISA=AVX512 / AVX2 / AVX / GENERIC  the kernels CTranslate2 may use
    ONEDNN_MAX_CPU_ISA=SSE41 (with GENERIC)          oneDNN's int8 products held to SSE4.1
    CT2_USE_MKL=1                                    MKL's int8 products, as on Intel CPUs

ONNX Runtime's kernels (MLAS) are chosen from the CPU's flags with no switch to force them down
(oneDNN's ONEDNN_MAX_CPU_ISA only concerns its oneDNN provider, not the default CPU one), so the
voice's float results are varied instead by turning ONNX Runtime's graph fusions off (other
kernels, another order of operations) and by a -80 dB dither on its audio.

For each pair it prints each sentence's WER heard in a batch and alone, whether the batch and
the single clip heard the same words, and the WER and longest missing run of the sentences
heard as one clip of more than 30 seconds. Needs the Whisper test weights (tests/whisper_model).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

# (name, environment) for CTranslate2; a setting above this CPU's flags is left out.
LISTENER_SETTINGS = [
    ("default", {}),
    ("AVX512", {"CT2_FORCE_CPU_ISA": "AVX512"}),
    ("AVX2", {"CT2_FORCE_CPU_ISA": "AVX2"}),
    ("AVX", {"CT2_FORCE_CPU_ISA": "AVX"}),
    ("GENERIC", {"CT2_FORCE_CPU_ISA": "GENERIC"}),
    # CTranslate2's int8 products run in oneDNN off Intel CPUs: its own switch sets their ISA.
    ("oneDNN-SSE41", {"CT2_FORCE_CPU_ISA": "GENERIC", "ONEDNN_MAX_CPU_ISA": "SSE41"}),
    ("MKL", {"CT2_USE_MKL": "1"}),
]


def cpu_flags() -> set[str]:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def speak(folder: Path, threads: int) -> list[str]:
    """The sentences spoken by joe in each voice variant, saved as .npz; their names."""
    from conftest import SENTENCES

    from audiopub.tts import onnx_runtime
    from audiopub.tts.engine import SynthesisOptions
    from audiopub.tts.piper.engine import PiperEngine

    def say(name: str) -> list[np.ndarray]:
        engine = PiperEngine(threads=threads)
        spoken = engine.synthesize(SENTENCES, engine.voices()[0].id, SynthesisOptions(seed=1))
        np.savez(
            folder / f"{name}.npz",
            rate=spoken[0].sample_rate,
            **{f"a{i}": r.audio for i, r in enumerate(spoken)},
        )
        return [r.audio for r in spoken]

    default = say("ort-default")
    made = onnx_runtime.session_options

    def unfused(threads: int | None, on_gpu: bool = False):  # type: ignore[no-untyped-def]
        options = made(threads, on_gpu)
        options.graph_optimization_level = onnx_runtime.ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        return options

    onnx_runtime.session_options = unfused
    unfused_audio = say("ort-unfused")
    onnx_runtime.session_options = made
    same_lengths = all(a.size == b.size for a, b in zip(default, unfused_audio))
    differ = max(
        float(np.max(np.abs(a - b))) if a.size == b.size else float("inf")
        for a, b in zip(default, unfused_audio)
    )
    print(
        f"voice: fusions off changes samples by up to {differ:.2e} "
        f"(lengths {'equal' if same_lengths else 'differ'})"
    )
    rng = np.random.default_rng(5)
    with np.load(folder / "ort-default.npz") as saved:
        np.savez(
            folder / "dither.npz",
            rate=saved["rate"],
            **{
                k: (saved[k] + rng.standard_normal(saved[k].size) * 1e-4).astype(np.float32)
                for k in saved.files
                if k != "rate"
            },
        )
    return ["ort-default", "ort-unfused", "dither"]


def hear(audio_file: Path, models: Path, threads: int) -> None:
    """In this process's CTranslate2 setting: batch and single transcripts with their WER."""
    from conftest import SENTENCES

    from audiopub.listen import Clip, Listener, judge

    listener = Listener.load("base", models_dir=models, threads=threads)
    with np.load(audio_file) as saved:
        clips = [Clip(saved[f"a{i}"], int(saved["rate"]), "en-US") for i in range(len(SENTENCES))]
    batch = listener.hear(clips)
    single = [listener.hear([clip])[0] for clip in clips]
    # The sentences one after another, past Whisper's 30-second window (tests/test_listen.py).
    rate = clips[0].sample_rate
    pause = np.zeros(rate // 3, dtype=np.float32)
    order = [*range(len(SENTENCES)), 0, 1, 2, 3, 4]
    long = np.concatenate([part for i in order for part in (clips[i].audio, pause)])
    heard_long = listener.hear([Clip(long, rate, "en")])[0]
    verdict = judge(" ".join(SENTENCES[i] for i in order), heard_long, "en")
    print(
        json.dumps(
            {
                "long": {
                    "heard": heard_long,
                    "wer": verdict.wer,
                    "missing_run": verdict.missing_run,
                },
                "rows": [
                    {
                        "batch": b,
                        "single": s,
                        "wer_batch": judge(t, b, "en-US").wer,
                        "wer_single": judge(t, s, "en-US").wer,
                        "flagged": judge(t, b, "en-US").flagged or judge(t, s, "en-US").flagged,
                    }
                    for t, b, s in zip(SENTENCES, batch, single)
                ],
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--voices", help="voice variants to hear (default: all): ort-default, ort-unfused, dither"
    )
    parser.add_argument(
        "--settings",
        help="CTranslate2 settings to hear them in (default: "
        f"all): {', '.join(n for n, _ in LISTENER_SETTINGS)}",
    )
    parser.add_argument("--hear", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--models", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.hear:
        hear(args.hear, args.models, args.threads)
        return
    from whisper_model import assemble

    flags = cpu_flags()
    usable = [
        (name, env)
        for name, env in LISTENER_SETTINGS
        if not (name == "AVX512" and "avx512f" not in flags)
        and (not args.settings or name in args.settings.split(","))
    ]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        assemble(folder / "models" / "whisper-base")
        voices = [
            voice
            for voice in speak(folder, args.threads)
            if not args.voices or voice in args.voices.split(",")
        ]
        worst_gap = 0.0
        for voice in voices:
            for name, env in usable:
                out = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--hear",
                        str(folder / f"{voice}.npz"),
                        "--models",
                        str(folder / "models"),
                        "--threads",
                        str(args.threads),
                    ],
                    env={**os.environ, **env},
                    capture_output=True,
                    text=True,
                    check=True,
                )
                result = json.loads(out.stdout.strip().splitlines()[-1])
                rows, long = result["rows"], result["long"]
                gaps = [abs(r["wer_batch"] - r["wer_single"]) for r in rows]
                worst_gap = max(worst_gap, *gaps)
                print(
                    f"{voice:12} {name:8} WER batch "
                    + " ".join(f"{r['wer_batch']:.3f}" for r in rows)
                    + " | single "
                    + " ".join(f"{r['wer_single']:.3f}" for r in rows)
                    + f" | same words {sum(r['batch'] == r['single'] for r in rows)}/{len(rows)}"
                    + f" | flagged {sum(r['flagged'] for r in rows)}"
                    + f" | over 30 s: WER {long['wer']:.3f}, missing run {long['missing_run']}",
                    flush=True,
                )
                print(f"    over 30 s: {long['heard']!r}")
                for r in rows:
                    if r["batch"] != r["single"] or max(r["wer_batch"], r["wer_single"]) > 0:
                        print(f"    batch {r['batch']!r}\n    alone {r['single']!r}")
        print(f"largest WER gap between a batch and the single clip: {worst_gap:.3f}")


if __name__ == "__main__":
    main()
