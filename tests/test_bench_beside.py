"""`audiopub bench --beside`: a second engine timed on the same texts in the same run, with
the real Kokoro int8 beside Piper's joe. Speed itself is never asserted: only the order of the
rounds and the arithmetic of the figures."""

from __future__ import annotations

import re
import statistics
from pathlib import Path
from typing import Any

import pytest
from epub_factory import build_epub
from test_bench import _bench, _summary, _valid

from audiopub.bench import run
from audiopub.bench.results import Timing
from audiopub.bench.texts import TEXTS
from audiopub.cli import main

# Kokoro's and Piper's graphs rewritten once for the run, not per test.
pytestmark = pytest.mark.usefixtures("shared_model_cache")


@pytest.fixture(scope="module")
def kokoro_models(kokoro_torch_folder: Path) -> Path:
    """A models folder with the real Kokoro int8 and its jm_kumo and jf_alpha voices: the
    worker's (conftest), so the PyTorch weights made from the model for the other runtime are
    made once per worker (~3 s of CPU), not again here."""
    return kokoro_torch_folder.parent


def test_kokoro_beside_piper_alternates_rounds_and_divides_the_medians(
    kokoro_models: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(kokoro_models))
    spoken: list[tuple[str, Timing]] = []  # every timed or warm-up run, in the order run
    real_run_inline = run.run_inline

    def recorded(engine: Any, *args: Any) -> Timing:
        timing = real_run_inline(engine, *args)
        spoken.append((engine.name, timing))
        return timing

    monkeypatch.setattr(run, "run_inline", recorded)
    output = tmp_path / "beside.json"
    out = _bench(
        [
            "--engine",
            "kokoro",
            "--voice",
            "jm_kumo",
            "--beside",
            "piper:en_US-joe-medium",
            "--sizes",
            "short",
            "--runs",
            "2",
            "--warmup",
            "0",
            "--output",
            str(output),
            "--matmul-seconds",
            "0",
        ],
        capsys,
    )
    # Rounds of both, the order reversed every other round (no warm-up: the runs stay few).
    assert [name for name, _ in spoken] == ["kokoro", "piper", "piper", "kokoro"]
    data = _valid(output)
    (cell,) = data["beside"]
    kokoro, piper = cell["engines"]
    assert (kokoro["engine"], kokoro["voice"]) == ("kokoro", "jm_kumo")
    assert (piper["engine"], piper["voice"]) == ("piper", "en_US-joe-medium")
    assert kokoro["provider"] == piper["provider"] == "CPUExecutionProvider"
    assert cell["size"] == "short" and cell["chars"] == len(TEXTS["short"])

    def medians(name: str) -> tuple[float, float]:
        runs = [timing for engine, timing in spoken if engine == name]
        return (
            statistics.median(cell["chars"] / t.seconds for t in runs),
            statistics.median(t.seconds / t.audio_s for t in runs),
        )

    # The medians are the runs' (to the 6 decimals they are saved with); the ratios are of
    # the saved medians (to 4 decimals). A ratio of unrounded medians may differ in its fourth
    # decimal: a real-time factor near 0.07 rounded to 6 decimals is off by up to 7e-6 of
    # itself, and so is a ratio near 19, by up to 1.4e-4.
    for side, name in ((kokoro, "kokoro"), (piper, "piper")):
        cps, rtf = medians(name)
        assert side["chars_per_s"]["median"] == pytest.approx(cps, abs=1e-6)
        assert side["rtf"]["median"] == pytest.approx(rtf, abs=1e-6)
    assert cell["time_per_char_ratio"] == round(
        piper["chars_per_s"]["median"] / kokoro["chars_per_s"]["median"], 4
    )
    assert cell["rtf_ratio"] == round(kokoro["rtf"]["median"] / piper["rtf"]["median"], 4)
    # The tables are --engine's, from the same runs.
    (synthesis,) = data["synthesis"]
    assert synthesis["chars_per_s"] == kokoro["chars_per_s"] and synthesis["rtf"] == kokoro["rtf"]
    assert "### kokoro beside piper: the same text, interleaved in one run" in out
    assert re.search(
        rf"\| ratio kokoro ÷ piper \|  \| {cell['time_per_char_ratio']:.2f}× \| "
        rf"{cell['rtf_ratio']:.2f}× \|",
        out,
    )
    assert _summary(out)["beside_time_per_char_ratio"] == cell["time_per_char_ratio"]


def test_beside_names_an_engine_and_compares_texts_not_a_book(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main(["bench", "--beside", "espeak"])
    assert "expected ENGINE or ENGINE:VOICE" in capsys.readouterr().err
    book = build_epub(tmp_path / "b.epub", [("One", ["A line."])])
    assert main(["bench", "--book", str(book), "--beside", "piper"]) == 2
    assert "--beside compares the text sizes, not a book" in capsys.readouterr().err


def test_two_runtimes_time_kokoro_on_each_side_by_side(
    kokoro_models: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    request: pytest.FixtureRequest,
) -> None:
    pytest.importorskip("torch", reason="scripts/test.sh installs torch==2.13.0")
    # PyTorch on one thread (conftest): on a busy two-core machine a second one mostly spins.
    request.getfixturevalue("torch_on_one_thread")
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(kokoro_models))
    output = tmp_path / "runtimes.json"
    out = _bench(
        [
            "--engine",
            "kokoro",
            "--voice",
            "jf_alpha",
            "--runtime",
            "onnx,torch",
            "--sizes",
            "short",
            "--runs",
            "1",
            "--warmup",
            "0",
            "--output",
            str(output),
            "--matmul-seconds",
            "0",
        ],
        capsys,
    )
    (cell,) = _valid(output)["beside"]
    onnx, torch = cell["engines"]
    assert (onnx["engine"], torch["engine"]) == ("kokoro (onnx)", "kokoro (torch)")
    assert onnx["voice"] == torch["voice"] == "jf_alpha"
    assert torch["model_id"].startswith("kokoro:torch:") and onnx["model_id"] != torch["model_id"]
    assert onnx["provider"] == torch["provider"] == "CPUExecutionProvider"
    assert "### kokoro (onnx) beside kokoro (torch): the same text" in out
