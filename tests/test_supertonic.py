"""Supertonic engine tests on a tiny generated model, with the official package as the oracle."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors
from tiny_supertonic import SCRIPT, build_tiny_model

from audiopub.errors import EngineUnavailable, ModelMissing, SynthesisFailed
from audiopub.tts import onnx_runtime
from audiopub.tts.batching import BatchLimits
from audiopub.tts.engine import DeviceReport, Engine, SynthesisOptions
from audiopub.tts.onnx_runtime import CPU, CUDA
from audiopub.tts.supertonic import engine as supertonic
from audiopub.tts.supertonic.engine import (
    SupertonicEngine,
    combine_reports,
    default_model_dir,
)
from audiopub.tts.supertonic.environment import DIR
from audiopub.tts.supertonic.text import TextFrontEnd, language_code

OFFICIAL_INSTALL = "pip install --no-deps supertonic==1.3.1"
TOLERANCE = 1e-5


def waves(
    engine: SupertonicEngine, texts: list[str], voice: str, options: SynthesisOptions
) -> list[np.ndarray]:
    """The audio of each result, checking what every result must say about itself."""
    results = engine.synthesize(texts, voice, options)
    for result in results:
        assert result.sample_rate == engine.sample_rate and result.frames == len(result.audio)
    return [result.audio for result in results]


TEXTS = {
    "short": "Hi.",
    "medium": "The quick brown fox, it said, jumps.",
    "accented": "Une phrase en français: l'été à Noël.",
    "long": "This sentence is close to the seventy characters the engine allows!!",
}


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("supertonic-3"))


@pytest.fixture(scope="session")
def engine(tiny_model: Path) -> SupertonicEngine:
    return SupertonicEngine(tiny_model, use_gpu=False)


@pytest.fixture
def model_copy(tiny_model: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(tiny_model, tmp_path / "model"))


@pytest.fixture(scope="session")
def official() -> ModuleType:
    """The official package's loader; the oracle tests must not pass without it."""
    try:
        from supertonic import loader
    except ImportError as exc:
        pytest.fail(
            f"The official `supertonic` package is needed as the oracle ({exc}). "
            f"Install it without its dependencies: {OFFICIAL_INSTALL}"
        )
    return loader


def _official_wave(
    official: ModuleType,
    model_dir: Path,
    text: str,
    voice: str,
    *,
    steps: int,
    speed: float,
    seed: int,
    lang: str | None,
) -> np.ndarray:
    model = official.load_model(model_dir, auto_download=False)
    style = official.load_voice_style_from_name(model_dir, voice)
    np.random.seed(seed)  # the official loop draws its noise from NumPy's global generator
    wav, duration = model([text], style, total_step=steps, speed=speed, lang=lang)
    return wav[0, : int(duration[0] * model.sample_rate)]


# --- the oracle ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "voice", "steps", "speed"),
    [
        (TEXTS["medium"], "F1", 5, 1.0),
        (TEXTS["accented"], "M1", 16, 1.3),
        (TEXTS["long"], "F1", 2, 0.7),
    ],
)
def test_single_chunk_matches_official(
    engine: SupertonicEngine,
    tiny_model: Path,
    official: ModuleType,
    text: str,
    voice: str,
    steps: int,
    speed: float,
) -> None:
    options = SynthesisOptions(speed=speed, steps=steps, seed=11)
    [ours] = waves(engine, [text], voice, options)
    theirs = _official_wave(
        official, tiny_model, text, voice, steps=steps, speed=speed, seed=11, lang="en"
    )
    assert ours.dtype == np.float32
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, atol=TOLERANCE)


def test_a_batchs_stage_times_are_shared_out_by_length(
    engine: SupertonicEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "batching", BatchLimits(max_items=16, max_length_ratio=100))
    texts = [TEXTS["short"], TEXTS["long"]]
    short, long_ = engine.synthesize(texts, "F1", SynthesisOptions(steps=2, seed=1))
    stages = {"text", "duration", "encoder", "step_loop", "vocoder"}
    assert set(short.stage_seconds) == set(long_.stage_seconds) == stages
    # One padded batch: each item carries its share of the batch's time, by its length.
    lengths = [len(engine.text.normalise(text)) for text in texts]
    for stage in ("duration", "encoder", "step_loop", "vocoder"):
        assert short.stage_seconds[stage] / long_.stage_seconds[stage] == pytest.approx(
            lengths[0] / lengths[1]
        )


def test_mixed_length_batch_matches_official_solo(
    engine: SupertonicEngine,
    tiny_model: Path,
    official: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    batch_sizes = _spy_on_denoise(monkeypatch)
    monkeypatch.setattr(engine, "batching", BatchLimits(max_items=16, max_length_ratio=100))
    texts = list(TEXTS.values())
    ours = waves(engine, texts, "M1", SynthesisOptions(steps=4, seed=3))
    assert batch_sizes == [len(texts)]  # one padded batch, not four solo runs
    for text, wave in zip(texts, ours, strict=True):
        theirs = _official_wave(
            official, tiny_model, text, "M1", steps=4, speed=1.0, seed=3, lang="en"
        )
        assert wave.shape == theirs.shape
        np.testing.assert_allclose(wave, theirs, atol=TOLERANCE)


def test_book_language_tag_matches_official(tiny_model: Path, official: ModuleType) -> None:
    french = SupertonicEngine(tiny_model, use_gpu=False, language="fr-FR")
    assert french.language == "fr"
    [ours] = waves(french, [TEXTS["accented"]], "F1", SynthesisOptions(steps=3, seed=5))
    theirs = _official_wave(
        official, tiny_model, TEXTS["accented"], "F1", steps=3, speed=1.0, seed=5, lang="fr"
    )
    np.testing.assert_allclose(ours, theirs, atol=TOLERANCE)


@dataclass(frozen=True)
class _OptionsWithLanguage(SynthesisOptions):
    """SynthesisOptions as it will be once it carries the book's language."""

    language: str | None = None


def test_per_call_language_wins(engine: SupertonicEngine, tiny_model: Path) -> None:
    french = SupertonicEngine(tiny_model, use_gpu=False, language="fr")
    expected = waves(french, [TEXTS["accented"]], "F1", SynthesisOptions(steps=3, seed=5))
    ours = waves(
        engine, [TEXTS["accented"]], "F1", _OptionsWithLanguage(steps=3, seed=5, language="fr-CA")
    )
    np.testing.assert_array_equal(ours[0], expected[0])


def test_single_language_model_in_assets_layout(tmp_path: Path, official: ModuleType) -> None:
    model_dir = build_tiny_model(tmp_path, multilingual=False, layout="assets")
    english = SupertonicEngine(model_dir, use_gpu=False, language="de")
    assert english.language is None  # no language tags for the English-only release
    assert {voice.language for voice in english.voices()} == {"en"}
    [ours] = waves(english, [TEXTS["medium"]], "F1", SynthesisOptions(steps=3, seed=2))
    theirs = _official_wave(
        official, model_dir / "assets", TEXTS["medium"], "F1", steps=3, speed=1.0, seed=2, lang=None
    )
    np.testing.assert_allclose(ours, theirs, atol=TOLERANCE)


# --- the step loop and IO binding ------------------------------------------------------------


def _spy_on_denoise(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    batch_sizes: list[int] = []
    real = supertonic.denoise

    def spy(session: onnx_runtime.Session, latent: np.ndarray, *args: Any) -> np.ndarray:
        batch_sizes.append(latent.shape[0])
        return real(session, latent, *args)

    monkeypatch.setattr(supertonic, "denoise", spy)
    return batch_sizes


def _count_calls(monkeypatch: pytest.MonkeyPatch, target: object, method: str) -> list[int]:
    calls: list[int] = []
    real = getattr(target, method)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(target, method, counted)
    return calls


@pytest.mark.parametrize("steps", [2, 7])
def test_io_binding_gives_the_same_waveform(
    engine: SupertonicEngine, steps: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [TEXTS["short"], TEXTS["long"]]
    options = SynthesisOptions(steps=steps, seed=9)
    estimator = engine.sessions["vector_estimator"].inference
    plain_runs = _count_calls(monkeypatch, estimator, "run")
    bound_runs = _count_calls(monkeypatch, estimator, "run_with_iobinding")
    monkeypatch.setattr(engine, "batching", BatchLimits(16, max_length_ratio=100))

    monkeypatch.setattr(engine, "io_binding", False)
    plain = waves(engine, texts, "F1", options)
    monkeypatch.setattr(engine, "io_binding", True)
    bound = waves(engine, texts, "F1", options)

    assert len(plain_runs) == steps and len(bound_runs) == steps  # exactly total_step runs
    for a, b in zip(plain, bound, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_io_binding_is_off_on_cpu(engine: SupertonicEngine) -> None:
    assert engine.io_binding is False


# --- batching, seeds, speed -------------------------------------------------------------------


def test_results_keep_input_order(engine: SupertonicEngine) -> None:
    texts = [TEXTS["long"], TEXTS["short"], TEXTS["medium"]]
    options = SynthesisOptions(steps=2, seed=1)
    together = waves(engine, texts, "F1", options)
    alone = [waves(engine, [text], "F1", options)[0] for text in texts]
    for a, b in zip(together, alone, strict=True):
        np.testing.assert_allclose(a, b, atol=TOLERANCE)


def test_seed_reproduces_a_chunk(engine: SupertonicEngine) -> None:
    def speak(seed: int | None) -> np.ndarray:
        return waves(engine, [TEXTS["medium"]], "F1", SynthesisOptions(steps=2, seed=seed))[0]

    np.testing.assert_array_equal(speak(4), speak(4))
    assert not np.allclose(speak(4), speak(5))
    assert not np.allclose(speak(None), speak(None))


def test_speed_shortens_audio(engine: SupertonicEngine) -> None:
    normal, fast = (
        waves(engine, [TEXTS["medium"]], "F1", SynthesisOptions(speed=speed, steps=2, seed=0))[0]
        for speed in (1.0, 2.0)
    )
    assert abs(len(fast) - len(normal) / 2) <= 1


def test_unspeakable_chunk_gives_empty_audio(engine: SupertonicEngine) -> None:
    empty, dashes, spoken = waves(
        engine, ["", " — … ", "Yes."], "F1", SynthesisOptions(steps=2, seed=0)
    )
    assert len(empty) == 0 and len(dashes) == 0 and len(spoken) > 0
    assert waves(engine, [], "F1", SynthesisOptions()) == []


# --- the engine contract, voices, model files -------------------------------------------------


def test_engine_contract(engine: SupertonicEngine) -> None:
    assert isinstance(engine, Engine)
    assert engine.name == "supertonic" and engine.uses_steps
    assert engine.sample_rate == 44100  # from tts.json
    assert engine.max_chunk_chars <= 71  # where the public word-error measurements stay at 0%
    assert [voice.id for voice in engine.voices()] == ["F1", "M1"]
    assert engine.voices()[0].name == "Female 1"


def test_dropped_style_file_is_a_voice_without_restart(model_copy: Path) -> None:
    engine = SupertonicEngine(model_copy, use_gpu=False)
    shutil.copy(model_copy / "voice_styles" / "M1.json", model_copy / "voice_styles" / "Nora.json")
    assert "Nora" in [voice.id for voice in engine.voices()]
    options = SynthesisOptions(steps=2, seed=0)
    np.testing.assert_array_equal(
        waves(engine, ["Hello."], "Nora", options)[0], waves(engine, ["Hello."], "M1", options)[0]
    )


def test_model_id_follows_the_files(model_copy: Path) -> None:
    engine = SupertonicEngine(model_copy, use_gpu=False)
    first = engine.model_id("F1")
    assert first.startswith("supertonic:") and first == engine.model_id("F1")
    assert engine.model_id("M1") != first
    assert SupertonicEngine(model_copy, use_gpu=False, language="fr").model_id("F1") != first
    vocoder = model_copy / "onnx" / "vocoder.onnx"
    vocoder.write_bytes(vocoder.read_bytes() + b"\0")  # new weights, same name
    assert engine.model_id("F1") != first
    with pytest.raises(EngineUnavailable):
        engine.model_id("nobody")


def test_unknown_voice_names_the_available_ones(engine: SupertonicEngine) -> None:
    with pytest.raises(EngineUnavailable, match="available: F1, M1"):
        waves(engine, ["Hello."], "nobody", SynthesisOptions())


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        json.dumps({"style_ttl": {}}),
        json.dumps(
            {
                "style_ttl": {"dims": [1, 2], "data": [[0, 1]]},
                "style_dp": {"dims": [1, 2], "data": [[0, 1]]},
            }
        ),
    ],
)
def test_broken_style_file_is_reported(model_copy: Path, content: str) -> None:
    (model_copy / "voice_styles" / "Bad.json").write_text(content)
    engine = SupertonicEngine(model_copy, use_gpu=False)
    with pytest.raises(EngineUnavailable, match=r"Bad\.json"):
        waves(engine, ["Hello."], "Bad", SynthesisOptions())


def test_flat_style_data_is_reshaped(model_copy: Path) -> None:
    style = json.loads((model_copy / "voice_styles" / "F1.json").read_text())
    for tensor in style.values():
        tensor["data"] = np.asarray(tensor["data"]).ravel().tolist()
    (model_copy / "voice_styles" / "Flat.json").write_text(json.dumps(style))
    engine = SupertonicEngine(model_copy, use_gpu=False)
    options = SynthesisOptions(steps=2, seed=0)
    np.testing.assert_array_equal(
        waves(engine, ["Hello."], "Flat", options)[0], waves(engine, ["Hello."], "F1", options)[0]
    )


def test_runtime_error_becomes_synthesis_failed(
    model_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = SupertonicEngine(model_copy, use_gpu=False)

    def broken(*args: Any) -> Any:
        raise ort_errors.RuntimeException("CUDA out of memory")

    monkeypatch.setattr(engine.sessions["vocoder"].inference, "run", broken)
    with pytest.raises(SynthesisFailed, match="CUDA out of memory"):
        waves(engine, ["Hello."], "F1", SynthesisOptions(steps=2))


def test_lfs_pointer_gives_a_clear_error(model_copy: Path) -> None:
    pointer = (
        "version https://git-lfs.github.com/spec/v1\n"
        "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
        "size 257452683\n"
    )
    (model_copy / "onnx" / "vector_estimator.onnx").write_text(pointer)
    with pytest.raises(ModelMissing) as error:
        SupertonicEngine(model_copy, use_gpu=False)
    message = str(error.value)
    assert "Git LFS pointer" in message and "onnx/vector_estimator.onnx" in message
    assert "git lfs pull" in message and str(model_copy) in message


def test_missing_directory_names_every_expected_file(tmp_path: Path) -> None:
    with pytest.raises(ModelMissing) as error:
        SupertonicEngine(tmp_path / "nowhere", use_gpu=False)
    message = str(error.value)
    for name in (
        "duration_predictor.onnx",
        "text_encoder.onnx",
        "vector_estimator.onnx",
        "vocoder.onnx",
        "tts.json",
        "unicode_indexer.json",
        "voice_styles",
    ):
        assert name in message
    assert "models/README.md" in message and DIR.env in message


def test_incomplete_directory_names_what_is_missing(model_copy: Path) -> None:
    (model_copy / "onnx" / "vocoder.onnx").unlink()
    with pytest.raises(ModelMissing, match=r"Missing: onnx/vocoder\.onnx"):
        SupertonicEngine(model_copy, use_gpu=False)


def test_default_model_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(DIR.env, raising=False)
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path))
    assert default_model_dir() == tmp_path / "supertonic-3"
    monkeypatch.setenv(DIR.env, str(tmp_path / "elsewhere"))
    assert default_model_dir() == tmp_path / "elsewhere"


def test_generator_cli(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(SCRIPT), str(tmp_path / "m")], check=True, capture_output=True
    )
    assert (tmp_path / "m" / "voice_styles" / "M1.json").is_file()


# --- the GPU toggle: ORT's provider list is the faked boundary -------------------------------


def test_gpu_request_without_cuda_build_reports_cpu(
    tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(onnx_runtime, "available_providers", lambda: [CPU])
    engine = SupertonicEngine(tiny_model, use_gpu=True)
    device = engine.device
    assert device.requested_gpu and not device.on_gpu
    assert "no CUDA support" in (device.fallback_reason or "")
    assert device.describe().startswith("CPU — GPU requested but unavailable")
    assert len(waves(engine, ["Still speaks."], "F1", SynthesisOptions(steps=2))[0]) > 0


def _fake_session_providers(monkeypatch: pytest.MonkeyPatch, on_cpu: set[str]) -> None:
    """ORT offers CUDA, but the graphs in `on_cpu` silently end up on the CPU."""
    monkeypatch.setattr(onnx_runtime, "available_providers", lambda: [CUDA, CPU])
    monkeypatch.setattr(onnx_runtime, "nvidia_driver_present", lambda: True)

    def providers(session: ort.InferenceSession) -> list[str]:
        return [CPU] if Path(session._model_path).stem in on_cpu else [CUDA, CPU]

    monkeypatch.setattr(ort.InferenceSession, "get_providers", providers)


def test_silent_cpu_fallback_is_reported(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_session_providers(monkeypatch, set(supertonic.GRAPHS))
    device = SupertonicEngine(tiny_model, use_gpu=True).device
    assert device.provider == CPU and device.requested_gpu
    assert "CUDA / cuDNN runtime libraries" in (device.fallback_reason or "")


def test_one_graph_on_cpu_makes_the_engine_report_cpu(
    tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_session_providers(monkeypatch, {"vocoder"})
    engine = SupertonicEngine(tiny_model, use_gpu=True)
    assert engine.device.provider == CPU
    assert (engine.device.fallback_reason or "").startswith("vocoder fell back to the CPU")
    assert engine.io_binding  # the step loop itself runs on the (faked) GPU


def test_all_graphs_on_cuda_report_gpu(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_session_providers(monkeypatch, set())
    device = SupertonicEngine(tiny_model, use_gpu=True).device
    assert device.on_gpu and device.describe() == "GPU (CUDA)"


@pytest.mark.usefixtures("cuda_fails_to_load")
def test_every_graph_is_made_for_the_chosen_gpu(
    tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: dict[str, int] = {}
    real = supertonic.create_session

    def create_session(model: Path, *args: Any, **kwargs: Any) -> onnx_runtime.Session:
        asked[model.stem] = kwargs["device_id"]
        return real(model, *args, **kwargs)

    monkeypatch.setattr(supertonic, "create_session", create_session)
    SupertonicEngine(tiny_model, use_gpu=True, device_id=1)
    assert asked == dict.fromkeys(supertonic.GRAPHS, 1)


def test_combine_reports_without_gpu_request() -> None:
    cpu = DeviceReport(requested_gpu=False, provider=CPU)
    assert combine_reports({"a": cpu, "b": cpu}) == cpu


# --- the text front end ----------------------------------------------------------------------


@pytest.fixture(scope="session")
def front_end(tiny_model: Path) -> TextFrontEnd:
    indexer = json.loads((tiny_model / "onnx" / "unicode_indexer.json").read_text())
    return TextFrontEnd.from_indexer(indexer)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Wait\u2014what\u2026 really?", "Wait-what... really?"),
        ("«Bonjour»,\u00a0dit-il", '"Bonjour", dit-il.'),
        ("Stra\u00dfe \u2212 \u0153uvre", "Strasse - oeuvre."),
        ("Price: 5\u20ac \U0001f600 ok", "Price: 5 ok."),
        ("soft\u00adhyphen and\u200bzero width", "softhyphen andzero width."),
        ("Caf\u00e9", "Cafe\u0301."),
        ("***", ""),
    ],
)
def test_normalise_maps_or_drops_unknown_characters(
    front_end: TextFrontEnd, raw: str, expected: str
) -> None:
    assert front_end.normalise(raw) == expected


@pytest.mark.parametrize(
    ("tag", "code"),
    [("en-US", "en"), ("pt_BR", "pt"), ("FR", "fr"), ("x-klingon", "na"), (None, "en"), ("", "en")],
)
def test_language_code(tag: str | None, code: str) -> None:
    assert language_code(tag) == code


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_model_never_sees_an_unknown_id(front_end: TextFrontEnd, text: str) -> None:
    cleaned = front_end.normalise(text)
    if cleaned:
        ids, mask = front_end.encode([cleaned], "en")
        assert (ids >= 0).all() and mask.shape == (1, 1, ids.shape[1])


_COVERED = st.sampled_from(
    [chr(c) for c in range(0x20, 0x7F)] + list("éàçñü \u2014\u2013\u201c\u201d\u2018\u2019\u00a0\n")
)


@settings(max_examples=200, deadline=None)
@given(st.text(_COVERED, max_size=60))
def test_normalise_matches_official_front_end(
    front_end: TextFrontEnd, tiny_model: Path, official: ModuleType, text: str
) -> None:
    from supertonic.core import UnicodeProcessor

    processor = UnicodeProcessor(str(tiny_model / "onnx" / "unicode_indexer.json"))
    cleaned = front_end.normalise(text)
    if cleaned:  # we return "" for text with nothing to speak, where the official adds "."
        assert cleaned == processor._preprocess_text(text)


def test_encode_pads_and_masks(front_end: TextFrontEnd) -> None:
    ids, mask = front_end.encode(["Hi.", "Hello."], "en")
    assert ids.dtype == np.int64 and mask.dtype == np.float32
    assert ids.shape == (2, len("<en>Hello.</en>"))
    assert mask[0, 0].tolist() == [1.0] * len("<en>Hi.</en>") + [0.0, 0.0, 0.0]
    assert ids[0, -3:].tolist() == [0, 0, 0]


def test_multilingual_override(tiny_model: Path) -> None:
    assert SupertonicEngine(tiny_model, use_gpu=False, multilingual=False).language is None
