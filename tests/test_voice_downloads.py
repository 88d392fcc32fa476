"""Downloading and removing voices against a local server that speaks the Hub's protocol."""

from __future__ import annotations

import json
import os
import shutil
import threading
import unicodedata
from collections import namedtuple
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hub_repos import (
    MODEL_CARD,
    local_hub,
    piper_voice_files,
    serve_piper_voices,
    serve_supertonic,
    voice_folder,
)
from hub_server import HubServer
from voices import SPEAKERS, multi_speaker_config, tiny_multi_speaker_model

from audiopub.cli import main
from audiopub.errors import (
    AudiopubError,
    ChecksumMismatch,
    DownloadCancelled,
    DownloadFailed,
    HubUnreachable,
    NotEnoughSpace,
    VoiceNotFound,
)
from audiopub.tts import hub as hub_module
from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.phonemes import phonemize
from audiopub.tts.piper.config import phoneme_ids
from audiopub.tts.piper.files import embedded_voice, find_voices
from audiopub.tts.piper.index import PIPER_REPO
from audiopub.tts.registry import get_engine
from audiopub.tts.supertonic.releases import SUPERTONIC_DEFAULT, SUPERTONIC_RELEASES
from audiopub.voices.install import install, remove, unfinished_downloads

KEY = "de_DE-tiny-medium"
MODEL = voice_folder(KEY) + f"{KEY}.onnx"  # its path in the repository


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    yield from local_hub(tmp_path, monkeypatch)


def models() -> Path:
    return Path(os.environ["AUDIOPUB_MODELS_DIR"])


def files_under(folder: Path) -> list[str]:
    """Every file below `folder`, relative, sorted: what a failure may have left behind."""
    if not folder.exists():
        return []
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def serve_tiny(server: HubServer, **options: object) -> dict[str, bytes]:
    files = piper_voice_files(KEY)
    serve_piper_voices(server, {KEY: files}, **options)  # type: ignore[arg-type]
    return files


# --- Piper ------------------------------------------------------------------------------


def test_a_downloaded_voice_is_installed_listed_and_speaks(
    hub: HubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "en_GB-joecopy-medium"  # the embedded voice's real model, under another name
    serve_piper_voices(hub, {key: piper_voice_files(key, embedded_voice().model)})
    engine = get_engine("piper")  # loaded before the download: it must see the new voice
    assert main(["voices", "download", f"piper:{key}"]) == 0
    out = capsys.readouterr().out
    assert f"Installed piper:{key} (63.2 MB) in {models() / 'piper' / key}.onnx" in out
    assert f"--voice {key}" in out

    assert files_under(models()) == [
        f"piper/{key}.MODEL_CARD",
        f"piper/{key}.download.json",
        f"piper/{key}.onnx",
        f"piper/{key}.onnx.json",
    ]
    assert (models() / "piper" / f"{key}.onnx").read_bytes() == embedded_voice().model.read_bytes()
    assert (models() / "piper" / f"{key}.MODEL_CARD").read_bytes() == MODEL_CARD
    record = json.loads((models() / "piper" / f"{key}.download.json").read_text())
    assert record["repo"] == PIPER_REPO and record["commit"] == hub.repos[PIPER_REPO].commit
    model_facts = record["files"][f"{voice_folder(key)}{key}.onnx"]
    assert len(model_facts["sha256"]) == 64 and len(model_facts["md5"]) == 32

    assert key in [voice.id for voice in engine.voices()]
    (result,) = engine.synthesize(["A sentence from a downloaded voice."], key, SynthesisOptions())
    assert result.sample_rate == 22050 and len(result.audio) > 22050 // 2
    assert float(np.abs(result.audio).max()) > 0.05
    assert main(["voices"]) == 0
    assert f"{key:28} en-GB    downloaded" in capsys.readouterr().out

    # Asked again: nothing is fetched.
    fetched = len(hub.transfers(f"{voice_folder(key)}{key}.onnx"))
    assert fetched == 1
    assert main(["voices", "download", key]) == 0
    assert "already installed" in capsys.readouterr().out
    assert len(hub.transfers(f"{voice_folder(key)}{key}.onnx")) == fetched


def test_an_installed_voice_of_the_index_needs_no_network(
    hub: HubServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "de_DE-thorsten-medium"  # in the shipped index
    serve_piper_voices(hub, {key: piper_voice_files(key)})
    install(key)
    hub.stop()
    assert main(["voices", "download", f"piper:{key}"]) == 0
    assert "already installed" in capsys.readouterr().out


def test_a_downloaded_multi_speaker_voice_lists_and_speaks_each_speaker(
    hub: HubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "en_GB-tinyvctk-medium"
    files = piper_voice_files(key, tiny_multi_speaker_model(), multi_speaker_config())
    serve_piper_voices(
        hub,
        {key: files},
        index_patch={
            key: {
                "num_speakers": len(SPEAKERS),
                "speaker_id_map": {speaker: sid for sid, speaker in enumerate(SPEAKERS)},
            }
        },
    )
    assert main(["voices", "download", f"piper:{key}"]) == 0
    assert (
        f"--voice {key}#p239 (one of its 3 speakers; `audiopub voices` lists them)"
        in capsys.readouterr().out
    )

    assert main(["voices"]) == 0
    listed = capsys.readouterr().out.splitlines()
    at = listed.index(f"  {key}#SPEAKER".ljust(30) + " en-GB    downloaded, 3 speakers:")
    assert listed[at + 1] == "      p239 p236 p264"
    engine = get_engine("piper")
    assert [v.id for v in engine.voices() if v.model == key] == [f"{key}#{s}" for s in SPEAKERS]
    audio = {
        speaker: engine.synthesize(["Hello."], f"{key}#{speaker}", SynthesisOptions())[0].audio
        for speaker in SPEAKERS[1:]
    }
    assert audio["p236"].mean() > 0.2 and audio["p264"].mean() < -0.2  # their own offsets


GERMAN = "Ich heiße Thorsten und wohne in Köln."


def test_a_german_voice_phonemises_in_german(hub: HubServer) -> None:
    """The voice's config names espeak-ng's voice ("de", as thorsten's does): the engine's
    front end reads German text with German rules, not the English default."""
    config = json.loads(embedded_voice().config.read_text("utf-8"))
    config["espeak"] = {"voice": "de"}
    config["language"] = {"code": "de_DE", "family": "de", "region": "DE"}
    serve_piper_voices(hub, {KEY: piper_voice_files(KEY, config=json.dumps(config).encode())})
    install(KEY)
    engine = get_engine("piper")
    (prepared,) = engine.prepare([GERMAN], KEY, SynthesisOptions())

    id_map = config["phoneme_id_map"]
    german, english = (phonemize(GERMAN, language) for language in ("de", "en-us"))
    assert prepared.data.ids == phoneme_ids(german, id_map)
    assert phoneme_ids(german, id_map) != phoneme_ids(english, id_map)
    # "Ich" with its ç, Köln with its œ, where English says "ick" and "kerln". (The phonemes
    # come decomposed, as Piper's own front end gives them: ç is c and a cedilla.)
    said_de, said_en = (unicodedata.normalize("NFC", "".join(p)) for p in (german, english))
    assert said_de.startswith("ɪç hˈaɪsə") and "kˈœln" in said_de
    assert "ç" not in said_en and "œ" not in said_en


def test_a_checksum_mismatch_installs_nothing(hub: HubServer) -> None:
    files = piper_voice_files(KEY)
    entry_files = {
        voice_folder(KEY) + name: {"size_bytes": len(data), "md5_digest": "0" * 32}
        for name, data in files.items()
    }
    serve_piper_voices(hub, {KEY: files}, index_patch={KEY: {"files": entry_files}})
    with pytest.raises(ChecksumMismatch, match=r"does not match its published MD5"):
        install(f"piper:{KEY}")
    assert files_under(models()) == []
    assert KEY not in find_voices(models() / "piper")


def test_a_damaged_lfs_file_fails_its_sha256(
    hub: HubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_tiny(hub)
    hub.damage(PIPER_REPO, MODEL)
    # The index's MD5 would catch it too; without it only the Hub's SHA-256 can.
    original = hub_module.verify
    checked: list[str | None] = []

    def verify_without_md5(path: Path, file: hub_module.HubFile, md5: str | None = None) -> None:
        checked.append(file.sha256)
        original(path, file, None)

    monkeypatch.setattr(hub_module, "verify", verify_without_md5)
    with pytest.raises(ChecksumMismatch, match="does not match its published SHA-256"):
        install(KEY)
    assert checked == [hub.repos[PIPER_REPO].files[MODEL].sha256]
    assert files_under(models()) == []


def test_a_file_missing_on_the_hub_is_a_clear_404(hub: HubServer) -> None:
    serve_tiny(hub, leave_out=(voice_folder(KEY) + "MODEL_CARD",))
    with pytest.raises(
        DownloadFailed,
        match=r"has no de/de_DE/tiny/medium/MODEL_CARD in "
        r"rhasspy/piper-voices .*\(404\)",
    ):
        install(KEY)
    assert files_under(models()) == []


def test_no_network_is_a_clear_error_and_leaves_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    server = HubServer().start()
    server.stop()  # its port is closed now
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    assert main(["voices", "download", f"piper:{KEY}"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"audiopub: error: Can't reach the Hugging Face Hub at {server.url}")
    assert "internet connection" in err and "Traceback" not in err
    assert files_under(tmp_path / "models") == []


def test_an_unknown_voice_names_near_misses(hub: HubServer) -> None:
    serve_tiny(hub)
    with pytest.raises(VoiceNotFound, match=f"Did you mean piper:{KEY}"):
        install("piper:de_DE-tiny-meduim")
    asked = len(hub.requests)
    with pytest.raises(VoiceNotFound, match="Unknown engine 'kokoro'"):
        install("kokoro:af_heart")
    assert len(hub.requests) == asked  # known to be wrong without asking the Hub


def test_a_dropped_connection_resumes_where_it_stopped(
    hub: HubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from huggingface_hub import constants

    # huggingface_hub writes what it receives in pieces of this size (10 MB) and resumes
    # after the last whole piece: small pieces, so that a tiny file has several.
    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 64)
    files = serve_tiny(hub)
    half = len(files[f"{KEY}.onnx"]) // 2
    hub.drop_after(MODEL, half)
    seen: list[hub_module.Progress] = []
    install(KEY, on_progress=seen.append)
    assert (models() / "piper" / f"{KEY}.onnx").read_bytes() == files[f"{KEY}.onnx"]
    first, second = hub.transfers(MODEL)
    assert first is None and second is not None  # the second asked only for the rest
    assert second.startswith("bytes=") and second.endswith("-")
    assert 0 < int(second[len("bytes=") : -1]) <= half
    total = sum(len(data) for data in files.values())
    assert seen[-1].done_bytes == seen[-1].total_bytes == total
    assert all(p.total_bytes == total for p in seen)


def test_a_cancelled_download_keeps_finished_files_and_continues(hub: HubServer) -> None:
    serve_tiny(hub)
    cancel = threading.Event()

    def cancel_after_the_model(progress: hub_module.Progress) -> None:
        if progress.file.endswith(".onnx.json"):
            cancel.set()

    with pytest.raises(DownloadCancelled):
        install(KEY, on_progress=cancel_after_the_model, cancel=cancel)
    assert KEY not in find_voices(models() / "piper")
    assert unfinished_downloads() == [f"piper:{KEY}"]
    assert [p for p in files_under(models() / "piper") if not p.startswith(".downloads/")] == []

    assert len(hub.transfers(MODEL)) == 1
    install(KEY)  # continues: the finished model is not fetched again
    assert len(hub.transfers(MODEL)) == 1
    assert KEY in find_voices(models() / "piper")
    assert unfinished_downloads() == [] and not (models() / "piper" / ".downloads").exists()


def test_progress_counts_a_xet_download_once() -> None:
    """Xet downloads report written and network bytes to the bars huggingface_hub makes from
    our class: the file's bytes must count once, whatever crossed the network."""
    from types import SimpleNamespace

    from huggingface_hub.utils._xet_progress_reporting import XetDownloadProgressReporter

    seen: list[hub_module.Progress] = []
    transfer = hub_module.Transfer(1000, seen.append)
    with XetDownloadProgressReporter(
        reconstruction_desc="x", total=1000, log_level=30, tqdm_class=transfer.bar_class
    ) as reporter:
        for written, received in ((400, 300), (1000, 600)):
            reporter.update_progress(
                SimpleNamespace(
                    total_bytes_completed=written,
                    total_transfer_bytes_completed=received,
                    total_bytes_completion_rate=None,
                    total_transfer_bytes_completion_rate=None,
                    total_bytes=1000,
                )
            )
    assert [p.done_bytes for p in seen] == [400, 1000]


def test_disk_space_is_checked_before_anything_is_fetched(
    hub: HubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    serve_tiny(hub)
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 1000, 1000))
    with pytest.raises(NotEnoughSpace, match=r"needs .* but .* has only 1.0 kB free"):
        install(KEY)
    assert hub.transfers(MODEL) == []
    assert files_under(models()) == []


def test_a_second_download_of_the_same_voice_at_once_is_refused(hub: HubServer) -> None:
    import filelock

    serve_tiny(hub)
    staging = models() / "piper" / ".downloads" / KEY
    staging.parent.mkdir(parents=True)
    with filelock.FileLock(str(staging) + ".lock"):
        with pytest.raises(DownloadFailed, match="already being downloaded"):
            install(KEY)


def test_remove_takes_away_what_was_downloaded_and_nothing_else(
    hub: HubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    from voices import add_voice_with_rate

    serve_tiny(hub)
    install(KEY)
    mine = add_voice_with_rate(models() / "piper", "fr_FR-mine-low", 16000)
    assert main(["voices", "remove", f"piper:{KEY}"]) == 0
    assert f"removed {models() / 'piper' / KEY}.onnx" in capsys.readouterr().out
    assert files_under(models() / "piper") == ["fr_FR-mine-low.onnx", "fr_FR-mine-low.onnx.json"]

    assert main(["voices", "remove", KEY]) == 1
    assert f"No Piper voice '{KEY}' is installed" in capsys.readouterr().err
    with pytest.raises(AudiopubError, match="your own"):
        remove("fr_FR-mine-low")
    assert mine.is_file()
    with pytest.raises(AudiopubError, match="built into Audiopub"):
        remove("piper:en_US-joe-medium")


def test_hub_offline_mode_is_named(hub: HubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    serve_tiny(hub)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(DownloadFailed, match="HF_HUB_OFFLINE"):
        install(KEY)


# --- Supertonic --------------------------------------------------------------------------


def test_supertonic_downloads_its_pinned_revision_and_speaks(
    hub: HubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = serve_supertonic(
        hub, SUPERTONIC_DEFAULT.repo, SUPERTONIC_DEFAULT.revision, tmp_path / "built"
    )
    assert main(["voices", "download", "supertonic"]) == 0
    out = capsys.readouterr().out
    target = models() / "supertonic-3"
    assert "Installed supertonic-3" in out and "--engine supertonic" in out
    installed = files_under(target)
    assert "samples/not-needed.wav" not in installed  # only what Audiopub needs, and licence
    assert {
        "LICENSE",
        "README.md",
        "audiopub-download.json",
        "onnx/vocoder.onnx",
        "voice_styles/F1.json",
    } <= set(installed)
    assert not any(path.startswith(".cache") for path in installed)
    for path in installed:
        if path != "audiopub-download.json":
            assert (target / path).read_bytes() == served[path], path
    record = json.loads((target / "audiopub-download.json").read_text())
    assert record["commit"] == SUPERTONIC_DEFAULT.revision
    engine = get_engine("supertonic")
    assert [voice.id for voice in engine.voices()] == ["F1", "M1"]
    (result,) = engine.synthesize(["Hello."], "F1", SynthesisOptions(steps=2, seed=1))
    assert len(result.audio) > 0
    assert files_under(models() / ".downloads") == []

    assert main(["voices", "remove", "supertonic"]) == 0
    assert not target.exists() and files_under(models()) == []


def test_supertonic_takes_another_revision_or_says_it_does_not_exist(
    hub: HubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = SUPERTONIC_RELEASES[1]  # supertonic-2
    serve_supertonic(hub, release.repo, "1" * 40, tmp_path / "built")
    assert main(["voices", "download", "supertonic-2"]) == 1  # its pinned commit is not there
    assert f"{release.repo} has no revision '{release.revision}'" in capsys.readouterr().err
    assert main(["voices", "download", "supertonic-2", "--revision", "main"]) == 0
    out = capsys.readouterr().out
    assert "Speak with it: audiopub convert BOOK.epub --engine supertonic" in out  # the only one
    record = json.loads((models() / "supertonic-2" / "audiopub-download.json").read_text())
    assert (record["revision"], record["commit"]) == ("main", "1" * 40)
    assert main(["voices"]) == 0
    assert (
        f"supertonic (supertonic-2 in {models() / 'supertonic-2'}: en, ko, es, pt, fr):"
        in capsys.readouterr().out
    )


def test_a_damaged_supertonic_graph_installs_nothing(hub: HubServer, tmp_path: Path) -> None:
    serve_supertonic(hub, SUPERTONIC_DEFAULT.repo, SUPERTONIC_DEFAULT.revision, tmp_path / "built")
    hub.damage(SUPERTONIC_DEFAULT.repo, "onnx/text_encoder.onnx")
    with pytest.raises(
        ChecksumMismatch, match="text_encoder.onnx does not match its published SHA-256"
    ):
        install("supertonic")
    assert files_under(models()) == []


def test_an_unreachable_hub_keeps_nothing_for_supertonic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    server = HubServer().start()
    server.stop()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    with pytest.raises(HubUnreachable):
        install("supertonic")
    assert files_under(tmp_path / "models") == []
