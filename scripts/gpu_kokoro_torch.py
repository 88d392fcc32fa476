"""Times Kokoro-82M on both runtimes and every PyTorch switch, on the GPU where there is one.

Needs only this source, a Kokoro model folder (the Hub layout: onnx/model*.onnx, tokenizer.json,
voices/) and PyTorch. Writes REPORT/report.json and REPORT/report.md: characters per second,
real-time factor, peak VRAM (PyTorch's own count) and each row's speed against the CPU's ONNX row.

    python scripts/gpu_kokoro_torch.py MODEL_FOLDER VOICE REPORT [--cpu] [--repeats N]
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

TEXTS = {
    "en": "The harbour lay quiet at dusk, and the boats rocked gently on the tide. "
    "She walked along the pier, counting the lights as they came on one by one.",
    "ja": "今日はとても良い天気ですね。散歩に行きましょう。"
    "港は静かで、船がゆっくり揺れていました。",
}


def measure(engine: KokoroEngine, voice: str, text: str, repeats: int) -> dict[str, float]:
    options = SynthesisOptions(language=language_of(voice)[0])
    engine.synthesize([text], voice, options)  # warm-up: loading, kernels, caches
    began = time.perf_counter()
    samples = 0
    for _ in range(repeats):
        samples += len(engine.synthesize([text], voice, options)[0].audio)
    seconds = time.perf_counter() - began
    return {
        "chars_per_s": len(text) * repeats / seconds,
        "real_time_factor": seconds / (samples / SAMPLE_RATE),
        "seconds": seconds,
    }


def rows(folder: Path, voice: str, use_gpu: bool, repeats: int) -> list[dict[str, object]]:
    text = TEXTS.get(language_of(voice)[0].split("-")[0], TEXTS["en"])
    found: list[dict[str, object]] = []
    for gpu in sorted({False, use_gpu}):
        onnx = KokoroEngine(folder, use_gpu=gpu)
        found.append(
            {"runtime": "onnx", "gpu": gpu, "switch": "none", **measure(onnx, voice, text, repeats)}
        )
    import torch

    for gpu in sorted({False, use_gpu and torch.cuda.is_available()}):
        for switch in ("none", "float32", "no-sdpa"):
            engine = KokoroEngine(folder, use_gpu=gpu, runtime="torch")
            network = engine._load_torch()
            if switch == "float32":
                network.precision = Precision("float32", network.precision.tf32)
            if switch == "no-sdpa":
                for module in network.network.modules():
                    if hasattr(module, "use_sdpa"):
                        module.use_sdpa = False
            if gpu:
                torch.cuda.reset_peak_memory_stats()
            row = {
                "runtime": "torch",
                "gpu": gpu,
                "switch": switch,
                "precision": network.precision.dtype,
            }
            row.update(measure(engine, voice, text, repeats))
            if gpu:
                row["vram_mb"] = torch.cuda.max_memory_allocated() / 2**20
            found.append(row)
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
    args = parser.parse_args()
    found = rows(args.folder, args.voice, not args.cpu, args.repeats)
    args.report.mkdir(parents=True, exist_ok=True)
    (args.report / "report.json").write_text(json.dumps(found, indent=2))
    table = markdown(found)
    (args.report / "report.md").write_text(table)
    print(table)


if __name__ == "__main__":
    main()
