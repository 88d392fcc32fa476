"""Kokoro from a local Hub in the layout of `onnx-community/Kokoro-82M-v1.0-ONNX` (the real
int8 model and real voices, see kokoro_model): the variant for the device, checksums, a
resumed download, `voices --all`, and a book converted with it from the command line."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import onnxruntime as ort
import pytest
from epub_factory import build_epub
from hub_repos import local_hub, piper_voice_files, serve_piper_voices
from hub_server import HubServer
from kokoro_model import INT8, REPO, tokenizer_json, voice_vectors

from audiopub.cli import main
from audiopub.errors import ChecksumMismatch, DownloadFailed, ModelMissing
from audiopub.jobs.store import JobStore
from audiopub.tts import onnx_runtime
from audiopub.tts.kokoro.engine import KokoroEngine
from audiopub.tts.kokoro.files import VARIANTS, KokoroFiles
from audiopub.tts.kokoro.graph import SAMPLES_PER_FRAME
from audiopub.tts.kokoro.install import device_variant, install_kokoro
from audiopub.tts.kokoro.repository import RECORD

VOICE = "voices/jm_kumo.bin"
PIPER_KEY = "ja_JP-tiny-medium"


@pytest.fixture
def hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kokoro_repo: dict[str, bytes]
) -> Iterator[HubServer]:
    yield from local_hub(tmp_path, monkeypatch, {REPO: kokoro_repo})


def kokoro_dir() -> Path:
    return Path(os.environ["AUDIOPUB_MODELS_DIR"]) / "kokoro"


def installed_files() -> list[str]:
    folder = kokoro_dir()
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_download_installs_the_cpu_variant_in_the_repository_layout_once(
    hub: HubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["voices", "download", "kokoro"]) == 0
    assert "Installed kokoro" in capsys.readouterr().out
    assert installed_files() == sorted(
        [INT8, RECORD, "config.json", "tokenizer.json", "voices/jf_alpha.bin", VOICE]
    )
    assert (kokoro_dir() / INT8).read_bytes() == hub.repos[REPO].files[INT8].content
    record = json.loads((kokoro_dir() / RECORD).read_text("utf-8"))
    assert record["variants"] == ["int8"] and record["files"][VOICE]["sha256"]
    asked = len(hub.requests)
    assert main(["voices", "download", "kokoro"]) == 0
    assert "already installed" in capsys.readouterr().out
    assert not [r for r in hub.requests[asked:] if "/cdn/" in r[1]]  # nothing fetched again
    assert main(["voices"]) == 0
    listed = capsys.readouterr().out
    assert "kokoro:" in listed and "jm_kumo" in listed
    assert main(["voices", "remove", "kokoro"]) == 0
    assert not kokoro_dir().exists()


@pytest.mark.parametrize(
    ("providers", "driver", "variant"),
    [
        ([onnx_runtime.CPU], True, "int8"),  # the CPU onnxruntime, whatever the machine has
        ([onnx_runtime.CUDA, onnx_runtime.CPU], False, "int8"),  # onnxruntime-gpu, no NVIDIA driver
        ([onnx_runtime.CUDA, onnx_runtime.CPU], True, "fp32"),  # CUDA can run it
    ],
)
def test_the_variant_fits_the_providers_onnx_runtime_offers(
    monkeypatch: pytest.MonkeyPatch, providers: list[str], driver: bool, variant: str
) -> None:
    monkeypatch.setattr(ort, "get_available_providers", lambda: providers)
    monkeypatch.setattr(onnx_runtime, "nvidia_driver_present", lambda: driver)
    assert device_variant() == variant


def test_the_engine_loads_the_variant_present_that_fits_its_device(tmp_path: Path) -> None:
    # Only which file is chosen: empty files stand for the variants, none is loaded.
    files = KokoroFiles(tmp_path)
    for name in ("int8", "fp16"):
        (tmp_path / VARIANTS[name]).parent.mkdir(exist_ok=True)
        (tmp_path / VARIANTS[name]).touch()
    assert files.model(on_gpu=False) == ("int8", tmp_path / VARIANTS["int8"])
    assert files.model(on_gpu=True) == ("fp16", tmp_path / VARIANTS["fp16"])
    (tmp_path / VARIANTS["fp32"]).touch()
    assert files.model(on_gpu=True) == ("fp32", tmp_path / VARIANTS["fp32"])
    assert files.model(on_gpu=True, variant="int8")[0] == "int8"
    (tmp_path / VARIANTS["fp16"]).unlink()
    with pytest.raises(ModelMissing, match="voices download kokoro --variant fp16"):
        files.model(on_gpu=True, variant="fp16")


@pytest.mark.parametrize(
    ("providers", "driver", "variant"),
    [
        ([onnx_runtime.CUDA, onnx_runtime.CPU], False, "int8"),  # GPU asked for, none to be had
        ([onnx_runtime.CUDA, onnx_runtime.CPU], True, "fp32"),
    ],
)
def test_an_engine_asked_for_the_gpu_loads_the_variant_for_where_it_will_run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    providers: list[str],
    driver: bool,
    variant: str,
) -> None:
    # Only which file is chosen: empty model files stand for the variants, none is loaded.
    (tmp_path / "tokenizer.json").write_bytes(tokenizer_json())
    for name in ("int8", "fp32"):
        (tmp_path / VARIANTS[name]).parent.mkdir(exist_ok=True)
        (tmp_path / VARIANTS[name]).touch()
    monkeypatch.setattr(ort, "get_available_providers", lambda: providers)
    monkeypatch.setattr(onnx_runtime, "nvidia_driver_present", lambda: driver)
    engine = KokoroEngine(tmp_path, use_gpu=True)
    assert (engine.variant, engine.model_path) == (variant, tmp_path / VARIANTS[variant])


def test_on_cuda_the_float_model_is_asked_for(
    hub: HubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        ort, "get_available_providers", lambda: [onnx_runtime.CUDA, onnx_runtime.CPU]
    )
    monkeypatch.setattr(onnx_runtime, "nvidia_driver_present", lambda: True)
    assert device_variant() == "fp32"
    # The stand-in serves the int8 file only: the CUDA default is named as missing.
    with pytest.raises(DownloadFailed, match="missing: onnx/model.onnx"):
        install_kokoro()
    assert not kokoro_dir().exists()


def test_a_damaged_voice_installs_nothing(hub: HubServer) -> None:
    hub.damage(REPO, VOICE)
    with pytest.raises(ChecksumMismatch, match="voices/jm_kumo.bin does not match"):
        install_kokoro(variant="int8")
    assert not (kokoro_dir() / INT8).exists()


def test_a_dropped_connection_resumes(hub: HubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 65_536)
    half = len(hub.repos[REPO].files[VOICE].content) // 2
    hub.drop_after(VOICE, half)
    install_kokoro(variant="int8")
    assert (kokoro_dir() / VOICE).read_bytes() == hub.repos[REPO].files[VOICE].content
    first, second = hub.transfers(VOICE)
    assert first is None and second is not None and second.startswith("bytes=")


def test_voices_all_lists_kokoro_voices_with_language_and_gender(
    hub: HubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    serve_piper_voices(hub, {PIPER_KEY: piper_voice_files(PIPER_KEY)})  # as the Hub has it
    assert main(["voices", "--all", "--language", "ja"]) == 0
    out = capsys.readouterr().out
    assert "Kokoro voices (2, from onnx-community/Kokoro-82M-v1.0-ONNX" in out
    assert f"piper:{PIPER_KEY}" in out
    lines = {
        line.split()[0]: line.split()[1:]
        for line in out.splitlines()
        if line.strip().startswith(("jm_", "jf_"))
    }
    assert lines == {"jf_alpha": ["ja", "female"], "jm_kumo": ["ja", "male"]}
    assert main(["voices", "--all", "--language", "fr"]) == 0
    assert "Kokoro voices" not in capsys.readouterr().out


def test_a_book_converted_with_kokoro_has_exact_chunks_and_word_starts(
    hub: HubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["voices", "download", "kokoro"]) == 0
    book = build_epub(
        tmp_path / "book.epub",
        [("Arrival", ["The train reached the coast.", "A dog slept in the shade."])],
    )
    out = tmp_path / "book.m4b"
    assert (
        main(["convert", str(book), "-o", str(out), "--engine", "kokoro", "--voice", "jm_kumo"])
        == 0
    ), capsys.readouterr().err
    assert out.stat().st_size > 0
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
        chunks = store.ledger.all_chunks(job.id)
    assert job.settings.engine == "kokoro" and job.settings.model_id.startswith("kokoro:int8:")
    for chunk in chunks:
        assert chunk.frames and chunk.frames % SAMPLES_PER_FRAME == 0
        starts = chunk.word_starts
        # One per word as espeak splits them ("in the" is one word to it).
        assert starts is not None and 0 < len(starts) <= len(chunk.spoken.split())
        assert list(starts) == sorted(set(starts)) and starts[-1] < chunk.frames


def test_without_the_hub_voices_all_lists_kokoro_from_the_shipped_index(
    hub: HubServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from audiopub.tts import hub as hub_module

    hub.stop()  # offline, nothing installed: the list is still whole
    listed: list[str] = []
    real = hub_module.repo_files
    monkeypatch.setattr(
        hub_module,
        "repo_files",
        lambda repo, *a, **k: (listed.append(repo), real(repo, *a, **k))[1],
    )
    assert main(["voices", "--all"]) == 0
    captured = capsys.readouterr()
    assert "Kokoro voices (54, from the voice index shipped with Audiopub" in captured.out
    lines = {
        line.split()[0]: line.split()[1:]
        for line in captured.out.splitlines()
        if line.strip().startswith(("ff_", "af_heart", "jm_"))
    }
    assert lines == {
        "ff_siwis": ["fr-FR", "female"],
        "af_heart": ["en-US", "female"],
        "jm_kumo": ["ja", "male"],
    }
    assert len(captured.err.splitlines()) == 1  # Piper's note that the Hub did not answer
    assert REPO not in listed  # a Hub that did not answer is not waited for twice


def test_a_mirror_without_piper_voices_still_lists_its_kokoro_voices(
    hub: HubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # The Hub here has Kokoro's repository and not rhasspy/piper-voices.
    assert main(["voices", "--all", "--language", "ja"]) == 0
    captured = capsys.readouterr()
    assert "Voice list not refreshed" in captured.err
    assert "Kokoro voices (2, from onnx-community/Kokoro-82M-v1.0-ONNX" in captured.out


def test_the_shipped_kokoro_index_has_the_repositorys_voices(hub: HubServer) -> None:
    """What the local Hub's repository (real Kokoro voices) holds, the shipped index names,
    with the language and gender Kokoro's naming gives them."""
    from audiopub.tts.kokoro.files import GENDERS, LANGUAGES
    from audiopub.tts.kokoro.install import kokoro_voices
    from audiopub.tts.kokoro.repository import kokoro_index

    served = kokoro_voices(ask_hub=True)
    assert served.source == REPO and served.voices == ("jf_alpha", "jm_kumo")
    shipped = kokoro_index()
    assert set(served.voices) <= set(shipped) and len(shipped) == 54
    assert set(voice_vectors()) <= set(shipped)  # every Kokoro voice the tests have
    for name, (language, gender) in shipped.items():
        assert (language, gender) == (LANGUAGES[name[0]][0], GENDERS[name[1]]), name
    assert {language for language, _ in shipped.values()} == {
        tag for tag, _ in LANGUAGES.values()
    }  # all nine of Kokoro's languages


def test_kokoro_dir_names_where_the_download_goes(
    hub: HubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "other-disk" / "kokoro"
    monkeypatch.setenv("AUDIOPUB_KOKORO_DIR", str(elsewhere))
    install_kokoro(variant="int8")
    assert (elsewhere / INT8).is_file() and (elsewhere / VOICE).is_file()
    assert not kokoro_dir().exists()
    assert sorted(p.name for p in elsewhere.parent.iterdir()) == ["kokoro"]  # no staging left
