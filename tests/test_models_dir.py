"""Models live in the data directory, found the same wherever Audiopub is started; what the
old `./models` of the current directory holds is still read, with a note saying how to move it."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from tiny_supertonic import build_tiny_model
from voices import add_voice_with_rate

from audiopub import settings
from audiopub.cli import main
from audiopub.tts.downloads import YOURS
from audiopub.tts.piper.downloads import piper_dir, piper_voices
from audiopub.tts.piper.files import find_voices
from audiopub.tts.supertonic.engine import default_model_dir
from audiopub.tts.supertonic.environment import DIR
from audiopub.tts.supertonic.releases import SUPERTONIC_DEFAULT, active_release, release_dir


@pytest.fixture(autouse=True)
def no_models_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AUDIOPUB_MODELS_DIR", raising=False)
    monkeypatch.delenv(DIR.env, raising=False)


def test_voices_finds_the_data_directorys_models_wherever_it_starts(
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    add_voice_with_rate(data_dir / "models" / "piper", "en_US-dropped-low", 16_000)
    build_tiny_model(data_dir / "models" / "supertonic-3")
    for start in (tmp_path / "one", tmp_path / "two" / "deeper"):
        start.mkdir(parents=True)
        monkeypatch.chdir(start)
        assert main(["voices"]) == 0
        listed = capsys.readouterr().out
        assert "en_US-dropped-low" in listed and "F1" in listed, listed
        assert default_model_dir() == data_dir / "models" / "supertonic-3"
    # Downloads land there too.
    assert piper_dir() == data_dir / "models" / "piper"
    assert release_dir(SUPERTONIC_DEFAULT) == data_dir / "models" / "supertonic-3"


def test_the_models_directory_moves_with_its_variable(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "big-disk" / "models"
    add_voice_with_rate(elsewhere / "piper", "en_US-moved-low", 16_000)
    add_voice_with_rate(tmp_path / "models" / "piper", "en_US-cwd-low", 16_000)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(elsewhere))
    found = find_voices()
    assert "en_US-moved-low" in found and "en_US-cwd-low" not in found
    assert piper_dir() == elsewhere / "piper"


def test_the_old_models_folder_is_still_read_with_a_note_on_moving_it(
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    old = tmp_path / "models"
    add_voice_with_rate(old / "piper", "en_US-old-low", 16_000)
    add_voice_with_rate(old / "piper", "en_US-both-low", 16_000)
    add_voice_with_rate(data_dir / "models" / "piper", "en_US-both-low", 22_050)
    build_tiny_model(old / "supertonic-2")
    monkeypatch.chdir(tmp_path)
    with caplog.at_level(logging.WARNING, logger="audiopub.settings"):
        found = find_voices()
        assert found["en_US-old-low"].model.parent == old / "piper"
        # A voice in both places is the models directory's.
        assert found["en_US-both-low"].model.parent == data_dir / "models" / "piper"
        assert {v.id: v.origin for v in piper_voices()}["en_US-old-low"] == YOURS
        release = active_release()
        assert release is not None and release.id == "supertonic-2"
        assert default_model_dir() == old / "supertonic-2"
    notes = [r.getMessage() for r in caplog.records if str(old) in r.getMessage()]
    assert len(notes) == 1  # once, however often the folder is read
    assert str(data_dir / "models") in notes[0] and "AUDIOPUB_MODELS_DIR" in notes[0]


def test_a_checkouts_own_models_readme_is_not_an_old_models_folder(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "README.md").write_text("Model files\n")
    monkeypatch.chdir(tmp_path)
    assert settings.old_models_dir() is None
    assert settings.model_folders("piper") == [data_dir / "models" / "piper"]
