"""Times Kokoro-82M on both runtimes and every PyTorch switch, on the GPU where there is one.

Needs only this source, a Kokoro model folder (the Hub layout: onnx/model*.onnx, tokenizer.json,
voices/) and PyTorch. Writes REPORT/report.json and REPORT/report.md: characters per second,
real-time factor, peak VRAM (PyTorch's own count) and each row's speed against the CPU's ONNX row.
Every row speaks the same sentences; the rows take turns, round after round, so a machine's
drift (clocks, other programs) is shared out among them. The PyTorch switches, each alone
against `none` (one chunk at a time, eager, reduced precision on a GPU, SDPA attention):
`float32`, `no-sdpa`, `batched` (the sentences in one padded batch), `compile` (torch.compile
of ALBERT and the decoder, inductor; its compilation is in the warm-up, not the rows).

    python scripts/gpu_kokoro_torch.py MODEL_FOLDER VOICE REPORT [--cpu] [--repeats N]
        [--sentences N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audiopub.tts.engine import SynthesisOptions  # noqa: E402
from audiopub.tts.kokoro.engine import KokoroEngine  # noqa: E402
from audiopub.tts.kokoro.files import SAMPLE_RATE, language_of  # noqa: E402
from audiopub.tts.kokoro.torch_runtime import Precision  # noqa: E402

SENTENCES = {
    "en": [
        "The harbour lay quiet at dusk, and the boats rocked gently on the tide.",
        "She walked along the pier, counting the lights as they came on one by one.",
    ],
    "ja": [
        "今日はとても良い天気ですね。散歩に行きましょう。",
        "港は静かで、船がゆっくり揺れていました。",
    ],
}
SWITCHES = ("none", "float32", "no-sdpa", "batched", "compile")


def torch_engine(folder: Path, gpu: bool, switch: str, sentences: int) -> KokoroEngine:
    """A torch engine with one switch changed from the defaults (`none`: one chunk a batch)."""
    engine = KokoroEngine(folder, use_gpu=gpu, runtime="torch")
    engine.batch_size = sentences if switch == "batched" else 1
    network = engine._load_torch()
    if switch == "float32":
        network.precision = Precision("float32", network.precision.tf32)
    if switch == "no-sdpa":
        for module in network.network.modules():
            if hasattr(module, "use_sdpa"):
                module.use_sdpa = False
    if switch == "compile":
        network.compile("inductor")
    return engine


def rows(
    folder: Path, voice: str, use_gpu: bool, repeats: int, sentences: int
) -> list[dict[str, object]]:
    import torch

    language = language_of(voice)[0]
    own = SENTENCES.get(language.split("-")[0], SENTENCES["en"])
    texts = [own[n % len(own)] for n in range(sentences)]
    options = SynthesisOptions(language=language)
    runs: list[tuple[dict[str, object], KokoroEngine]] = []
    for gpu in sorted({False, use_gpu}):
        runs.append(({"runtime": "onnx", "gpu": gpu, "switch": "none"}, KokoroEngine(folder, gpu)))
    for gpu in sorted({False, use_gpu and torch.cuda.is_available()}):
        for switch in SWITCHES:
            engine = torch_engine(folder, gpu, switch, sentences)
            precision = engine._load_torch().precision.dtype
            runs.append(
                ({"runtime": "torch", "gpu": gpu, "switch": switch, "precision": precision}, engine)
            )
    for row, engine in runs:  # warm-up: loading, kernels, caches, compilation
        engine.synthesize(texts, voice, options)
        if row["switch"] == "compile" and not engine._load_torch().compiled:
            row["switch"] = "compile (failed: eager, see the log)"
    seconds = [0.0] * len(runs)
    samples = [0] * len(runs)
    vram = [0.0] * len(runs)
    for _ in range(repeats):
        for number, (row, engine) in enumerate(runs):
            if row["gpu"] and row["runtime"] == "torch":
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats()
            began = time.perf_counter()
            spoken = engine.synthesize(texts, voice, options)
            seconds[number] += time.perf_counter() - began
            samples[number] += sum(len(result.audio) for result in spoken)
            if row["gpu"] and row["runtime"] == "torch":
                vram[number] = max(vram[number], torch.cuda.max_memory_allocated() / 2**20)
    chars = sum(len(text) for text in texts) * repeats
    found = []
    for number, (row, _) in enumerate(runs):
        found.append(
            {
                **row,
                "chars_per_s": chars / seconds[number],
                "real_time_factor": seconds[number] / (samples[number] / SAMPLE_RATE),
                "seconds": seconds[number],
                **({"vram_mb": vram[number]} if vram[number] else {}),
            }
        )
    base = next(r for r in found if r["runtime"] == "onnx" and not r["gpu"])
    for row in found:
        row["vs_cpu_onnx"] = float(row["chars_per_s"]) / float(base["chars_per_s"])  # type: ignore[arg-type]
    return found


def markdown(found: list[dict[str, object]]) -> str:
    lines = [
        "| runtime | device | switch | chars/s | RTF | VRAM MB | × CPU onnx |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in found:
        lines.append(
            f"| {r['runtime']} | {'GPU' if r['gpu'] else 'CPU'} | {r['switch']} | "
            f"{float(r['chars_per_s']):.1f} | {float(r['real_time_factor']):.3f} | "  # type: ignore[arg-type]
            f"{float(r.get('vram_mb', 0)):.0f} | {float(r['vs_cpu_onnx']):.2f} |"  # type: ignore[arg-type]
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("voice")
    parser.add_argument("report", type=Path)
    parser.add_argument("--cpu", action="store_true", help="the CPU only")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sentences", type=int, default=16, help="spoken per row and round")
    args = parser.parse_args()
    found = rows(args.folder, args.voice, not args.cpu, args.repeats, args.sentences)
    args.report.mkdir(parents=True, exist_ok=True)
    (args.report / "report.json").write_text(json.dumps(found, indent=2))
    table = markdown(found)
    (args.report / "report.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
