"""Generate a tiny Supertonic-format model directory for tests.

The four graphs have the real input/output names, dtypes and shapes of the public release
(`text_ids` int64 [B,T], masks float32 [B,1,*], `style_ttl` [B,50,256], `style_dp` [B,8,16],
latents [B,144,L], `wav_tts` [B, L*3072]) but only a few small random weights, so tests run in
seconds. Every output depends on every input (masks, styles, steps), and every op works per
position or through masked sums, so a padded item in a batch gives the same result as alone —
exactly the property the engine's batching has to preserve.

    python scripts/make_tiny_supertonic.py OUT_DIR [--seed N] [--single-language] [--layout assets]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# The release's sizes (DESIGN.md, "Supertonic facts"); the tiny model keeps them.
SAMPLE_RATE = 44100
BASE_CHUNK_SIZE = 512
CHUNK_COMPRESS_FACTOR = 6
LATENT_DIM = 24
LATENT_CHANNELS = LATENT_DIM * CHUNK_COMPRESS_FACTOR  # 144
STYLE_TTL_SHAPE = (50, 256)
STYLE_DP_SHAPE = (8, 16)
TEXT_EMB_DIM = 256

# Small internal widths: they only need to make the outputs depend on the inputs.
EMBED_DIM = 16
VOCODER_HIDDEN = 32

OPSET = 18
IR_VERSION = 8  # old enough for any onnxruntime >= 1.14

# Printable ASCII, a few precomposed accented letters and the combining marks that NFKD
# splits them into (the official front end decomposes text before the lookup).
ACCENTED = "àâäçéèêëîïôöùûüñÀÉÈÇÑ"
COMBINING_MARKS = "\u0300\u0301\u0302\u0303\u0308\u0327"
# Two Hangul conjoining jamo: the multilingual releases cover Korean, the English-only one
# does not, which is how the engine tells them apart.
HANGUL_JAMO = "\u1100\u1161"

VOICES = ("F1", "M1")


def _characters(multilingual: bool) -> list[str]:
    chars = [chr(c) for c in range(0x20, 0x7F)] + list(ACCENTED) + list(COMBINING_MARKS)
    if multilingual:
        chars += list(HANGUL_JAMO)
    return chars


def unicode_indexer(multilingual: bool) -> list[int]:
    """The release's format: a list indexed by code point, -1 where the model has no token."""
    chars = _characters(multilingual)
    table = [-1] * (max(ord(c) for c in chars) + 1)
    for token, char in enumerate(chars):
        table[ord(char)] = token
    return table


def _weight(rng: np.random.Generator, name: str, *shape: int) -> onnx.TensorProto:
    fan_in = shape[-2] if len(shape) > 1 else shape[0]
    values = rng.standard_normal(shape) / np.sqrt(fan_in)
    return numpy_helper.from_array(values.astype(np.float32), name)


def _const(name: str, value: object, dtype: type = np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)


def _float(name: str, *dims: int | str) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(dims))


def _save(graph: onnx.GraphProto, path: Path) -> None:
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="audiopub-tiny-supertonic",
    )
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def _text_ids() -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(
        "text_ids", TensorProto.INT64, ["batch_size", "text_length"]
    )


def duration_predictor(rng: np.random.Generator, vocab: int) -> onnx.GraphProto:
    """Seconds per item: a per-character length (~65 ms, shaped by text and style), summed
    over the unmasked characters."""
    nodes = [
        helper.make_node("Gather", ["dp_embedding", "text_ids"], ["emb"]),  # [B,T,E]
        helper.make_node("ReduceMean", ["style_dp", "axis1"], ["style"], keepdims=1),  # [B,1,E]
        helper.make_node("MatMul", ["emb", "dp_w"], ["proj"]),
        helper.make_node("Add", ["proj", "style"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["hidden"]),
        helper.make_node("MatMul", ["hidden", "dp_out"], ["score"]),  # [B,T,1]
        helper.make_node("Tanh", ["score"], ["bounded"]),
        helper.make_node("Mul", ["bounded", "spread"], ["offset"]),
        helper.make_node("Add", ["offset", "per_char"], ["seconds"]),
        helper.make_node("Transpose", ["text_mask"], ["mask_t"], perm=[0, 2, 1]),  # [B,T,1]
        helper.make_node("Mul", ["seconds", "mask_t"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axes12"], ["duration"], keepdims=0),  # [B]
    ]
    inits = [
        _weight(rng, "dp_embedding", vocab, EMBED_DIM),
        _weight(rng, "dp_w", EMBED_DIM, STYLE_DP_SHAPE[1]),
        _weight(rng, "dp_out", STYLE_DP_SHAPE[1], 1),
        _const("spread", 0.02),
        _const("per_char", 0.065),
        _const("axis1", [1], np.int64),
        _const("axes12", [1, 2], np.int64),
    ]
    inputs = [
        _text_ids(),
        _float("style_dp", "batch_size", *STYLE_DP_SHAPE),
        _float("text_mask", "batch_size", 1, "text_length"),
    ]
    return helper.make_graph(
        nodes, "duration_predictor", inputs, [_float("duration", "batch_size")], inits
    )


def text_encoder(rng: np.random.Generator, vocab: int) -> onnx.GraphProto:
    """text_emb [B,256,T]: a character embedding plus the mean style token, masked."""
    nodes = [
        helper.make_node("Gather", ["te_embedding", "text_ids"], ["emb"]),  # [B,T,E]
        helper.make_node("MatMul", ["emb", "te_w"], ["proj"]),  # [B,T,256]
        helper.make_node("ReduceMean", ["style_ttl", "axis1"], ["style"], keepdims=1),
        helper.make_node("Add", ["proj", "style"], ["pre"]),
        helper.make_node("Tanh", ["pre"], ["hidden"]),
        helper.make_node("Transpose", ["text_mask"], ["mask_t"], perm=[0, 2, 1]),
        helper.make_node("Mul", ["hidden", "mask_t"], ["masked"]),
        helper.make_node("Transpose", ["masked"], ["text_emb"], perm=[0, 2, 1]),
    ]
    inits = [
        _weight(rng, "te_embedding", vocab, EMBED_DIM),
        _weight(rng, "te_w", EMBED_DIM, TEXT_EMB_DIM),
        _const("axis1", [1], np.int64),
    ]
    inputs = [
        _text_ids(),
        _float("style_ttl", "batch_size", *STYLE_TTL_SHAPE),
        _float("text_mask", "batch_size", 1, "text_length"),
    ]
    return helper.make_graph(
        nodes,
        "text_encoder",
        inputs,
        [_float("text_emb", "batch_size", TEXT_EMB_DIM, "text_length")],
        inits,
    )


def vector_estimator(rng: np.random.Generator) -> onnx.GraphProto:
    """One Euler step, as in the release: x + v(x, text, style, t) / total_step, masked.

    The text condition is a masked mean over characters, so padding does not change it.
    """
    nodes = [
        helper.make_node("Mul", ["text_emb", "text_mask"], ["text_masked"]),
        helper.make_node("ReduceSum", ["text_masked", "axis2"], ["text_sum"], keepdims=1),
        helper.make_node("ReduceSum", ["text_mask", "axis2"], ["text_count"], keepdims=1),
        helper.make_node("Div", ["text_sum", "text_count"], ["text_mean"]),  # [B,256,1]
        helper.make_node("ReduceMean", ["style_ttl", "axis1"], ["style"], keepdims=0),  # [B,256]
        helper.make_node("Unsqueeze", ["style", "axis2"], ["style_col"]),  # [B,256,1]
        helper.make_node("Add", ["text_mean", "style_col"], ["context"]),
        helper.make_node("MatMul", ["ve_cond", "context"], ["cond"]),  # [B,144,1]
        helper.make_node("Div", ["current_step", "total_step"], ["t"]),
        helper.make_node("Unsqueeze", ["t", "axes12"], ["t_col"]),  # [B,1,1]
        helper.make_node("Mul", ["t_col", "ve_time"], ["time"]),  # [B,144,1]
        helper.make_node("MatMul", ["ve_mix", "noisy_latent"], ["mixed"]),  # [B,144,L]
        helper.make_node("Add", ["mixed", "cond"], ["pre1"]),
        helper.make_node("Add", ["pre1", "time"], ["pre2"]),
        helper.make_node("Tanh", ["pre2"], ["velocity"]),
        helper.make_node("Reciprocal", ["total_step"], ["dt"]),
        helper.make_node("Unsqueeze", ["dt", "axes12"], ["dt_col"]),
        helper.make_node("Mul", ["velocity", "dt_col"], ["delta"]),
        helper.make_node("Add", ["noisy_latent", "delta"], ["stepped"]),
        helper.make_node("Mul", ["stepped", "latent_mask"], ["denoised_latent"]),
    ]
    inits = [
        _weight(rng, "ve_cond", LATENT_CHANNELS, TEXT_EMB_DIM),
        _weight(rng, "ve_time", LATENT_CHANNELS, 1),
        _weight(rng, "ve_mix", LATENT_CHANNELS, LATENT_CHANNELS),
        _const("axis1", [1], np.int64),
        _const("axis2", [2], np.int64),
        _const("axes12", [1, 2], np.int64),
    ]
    inputs = [
        _float("noisy_latent", "batch_size", LATENT_CHANNELS, "latent_length"),
        _float("text_emb", "batch_size", TEXT_EMB_DIM, "text_length"),
        _float("style_ttl", "batch_size", *STYLE_TTL_SHAPE),
        _float("latent_mask", "batch_size", 1, "latent_length"),
        _float("text_mask", "batch_size", 1, "text_length"),
        _float("current_step", "batch_size"),
        _float("total_step", "batch_size"),
    ]
    output = _float("denoised_latent", "batch_size", LATENT_CHANNELS, "latent_length")
    return helper.make_graph(nodes, "vector_estimator", inputs, [output], inits)


def vocoder(rng: np.random.Generator) -> onnx.GraphProto:
    """wav_tts [B, L*3072]: each latent frame becomes base_chunk*ccf samples."""
    samples_per_frame = BASE_CHUNK_SIZE * CHUNK_COMPRESS_FACTOR
    nodes = [
        helper.make_node("Transpose", ["latent"], ["frames"], perm=[0, 2, 1]),  # [B,L,144]
        helper.make_node("MatMul", ["frames", "voc_in"], ["proj"]),
        helper.make_node("Tanh", ["proj"], ["hidden"]),
        helper.make_node("MatMul", ["hidden", "voc_out"], ["raw"]),  # [B,L,3072]
        helper.make_node("Tanh", ["raw"], ["bounded"]),
        helper.make_node("Mul", ["bounded", "gain"], ["scaled"]),
        helper.make_node("Reshape", ["scaled", "flat"], ["wav_tts"]),
    ]
    inits = [
        _weight(rng, "voc_in", LATENT_CHANNELS, VOCODER_HIDDEN),
        _weight(rng, "voc_out", VOCODER_HIDDEN, samples_per_frame),
        _const("gain", 0.5),
        _const("flat", [0, -1], np.int64),
    ]
    return helper.make_graph(
        nodes,
        "vocoder",
        [_float("latent", "batch_size", LATENT_CHANNELS, "latent_length")],
        [_float("wav_tts", "batch_size", "wav_length")],
        inits,
    )


def tts_config() -> dict[str, object]:
    return {
        "tts_version": "audiopub-tiny-test",
        "ae": {"sample_rate": SAMPLE_RATE, "base_chunk_size": BASE_CHUNK_SIZE},
        "ttl": {"latent_dim": LATENT_DIM, "chunk_compress_factor": CHUNK_COMPRESS_FACTOR},
    }


def voice_style(rng: np.random.Generator) -> dict[str, object]:
    """The release's voice style format: {"dims": [...], "data": nested lists}."""

    def tensor(shape: tuple[int, int]) -> dict[str, object]:
        values = rng.standard_normal((1, *shape)).astype(np.float32)
        return {"dims": [1, *shape], "data": np.round(values, 5).tolist(), "type": "float32"}

    return {"style_ttl": tensor(STYLE_TTL_SHAPE), "style_dp": tensor(STYLE_DP_SHAPE)}


def build_tiny_model(
    out_dir: Path, seed: int = 0, multilingual: bool = True, layout: str = "root"
) -> Path:
    """Write the tiny model under `out_dir` and return the directory to give the engine.

    `layout="assets"` nests everything under `assets/`, like a clone of the official GitHub
    examples (which put the Hugging Face files there).
    """
    rng = np.random.default_rng(seed)
    base = out_dir / "assets" if layout == "assets" else out_dir
    onnx_dir, styles_dir = base / "onnx", base / "voice_styles"
    onnx_dir.mkdir(parents=True, exist_ok=True)
    styles_dir.mkdir(parents=True, exist_ok=True)

    indexer = unicode_indexer(multilingual)
    vocab = max(indexer) + 1
    _save(duration_predictor(rng, vocab), onnx_dir / "duration_predictor.onnx")
    _save(text_encoder(rng, vocab), onnx_dir / "text_encoder.onnx")
    _save(vector_estimator(rng), onnx_dir / "vector_estimator.onnx")
    _save(vocoder(rng), onnx_dir / "vocoder.onnx")
    (onnx_dir / "tts.json").write_text(json.dumps(tts_config(), indent=2))
    (onnx_dir / "unicode_indexer.json").write_text(json.dumps(indexer))
    for name in VOICES:
        (styles_dir / f"{name}.json").write_text(json.dumps(voice_style(rng)))
    return out_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--single-language",
        action="store_true",
        help="English-only indexer, like the first Supertonic release",
    )
    parser.add_argument("--layout", choices=("root", "assets"), default="root")
    args = parser.parse_args()
    out = build_tiny_model(args.out_dir, args.seed, not args.single_language, args.layout)
    print(f"tiny Supertonic model written to {out}")


if __name__ == "__main__":
    main()
