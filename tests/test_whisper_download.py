"""`audiopub voices download whisper:base` from a local Hub in the layout of
`Systran/faster-whisper-base` (the real model, see whisper_model): the files Audiopub reads and
no others, checksums, a resumed download, listing and removing."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hub_repos import local_hub
from hub_server import HubServer
from whisper_model import REPO

from audiopub.cli import main
from audiopub.errors import ChecksumMismatch, VoiceNotFound
from audiopub.listen import installed_listening_models
from audiopub.listen.whisper_files import RECORD
from audiopub.listen.whisper_install import install_whisper
from audiopub.tts.downloads import STAGING


@pytest.fixture
def hub(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, whisper_repo: dict[str, bytes]
) -> Iterator[HubServer]:
    yield from local_hub(tmp_path, monkeypatch, {REPO: whisper_repo})


def models() -> Path:
    return Path(os.environ["AUDIOPUB_MODELS_DIR"])


def installed_files() -> list[str]:
    folder = models() / "whisper-base"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_download_installs_what_listening_reads_once_and_removes_it(
    hub: HubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert installed_listening_models() == []
    assert main(["voices", "download", "whisper:base"]) == 0
    assert "Installed whisper:base" in capsys.readouterr().out
    assert installed_files() == sorted(
        ["model.bin", "config.json", "tokenizer.json", "vocabulary.txt", RECORD]
    )
    folder = models() / "whisper-base"
    assert (folder / "model.bin").read_bytes() == hub.repos[REPO].files["model.bin"].content
    record = json.loads((folder / RECORD).read_text("utf-8"))
    assert record["repo"] == REPO and record["files"]["model.bin"]["sha256"]
    assert installed_listening_models() == ["base"]
    asked = len(hub.requests)
    assert main(["voices", "download", "whisper:base"]) == 0
    assert "already installed" in capsys.readouterr().out
    assert len(hub.requests) == asked  # not even asked
    assert main(["voices"]) == 0
    assert f"listening model: whisper:base in {folder}" in capsys.readouterr().out
    assert main(["voices", "remove", "whisper:base"]) == 0
    assert not folder.exists() and installed_listening_models() == []


def test_a_damaged_model_installs_nothing(hub: HubServer) -> None:
    hub.damage(REPO, "model.bin")
    with pytest.raises(ChecksumMismatch, match="model.bin does not match"):
        install_whisper("whisper:base")
    assert installed_files() == [] and not (models() / STAGING).exists()
    assert installed_listening_models() == []


def test_a_dropped_connection_resumes(hub: HubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", 1 << 20)
    hub.drop_after("model.bin", 40 << 20)
    install_whisper("whisper:base")
    content = hub.repos[REPO].files["model.bin"].content
    assert (models() / "whisper-base" / "model.bin").read_bytes() == content
    first, second = hub.transfers("model.bin")
    assert first is None and second is not None and second.startswith("bytes=")


def test_an_unknown_size_is_named(hub: HubServer, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(VoiceNotFound, match="whisper:tiny, whisper:base"):
        install_whisper("whisper:huge")
    assert main(["voices", "download", "whisper:huge"]) == 1
    assert "There is no listening model 'whisper:huge'" in capsys.readouterr().err
