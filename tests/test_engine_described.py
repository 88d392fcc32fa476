"""A new engine is its package and one `registry.register`: the test-only engine of
tests/tiny_engine/ (Piper's embedded model under voices of its own) is listed, downloaded,
offered by the web app and cast, and nothing of Audiopub names it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from hub_repos import local_hub
from hub_server import HubServer
from tiny_engine import NAME, TINY, TinyEngine

from audiopub.book.cast.models import Character
from audiopub.cli import main
from audiopub.tts import registry
from audiopub.ui.engine_catalog import EngineCatalog, GpuSupport
from audiopub.ui.voice_downloads import VoiceDownloads
from audiopub.ui.voice_list import (
    AVAILABLE,
    INSTALLED,
    build_rows,
    installed_now,
    qualities,
    visible,
)
from audiopub.ui.voice_mixes import VoiceMixes
from audiopub.voices.casting import assign_voices
from audiopub.voices.catalogue import local_catalogue

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def tiny(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    """The engine registered, a private models folder, and a Hub that does not answer."""
    registry.register(TINY)
    try:
        for hub in local_hub(tmp_path, monkeypatch):
            hub.stop()  # the other engines' lists come from what ships with Audiopub
            yield hub
    finally:
        registry.unregister(NAME)


@pytest.mark.usefixtures("tiny")
def test_the_command_line_lists_downloads_and_removes_its_voices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["voices", "--all"]) == 0
    out = capsys.readouterr().out
    assert "Tiny voices (2, shipped with the tests):" in out
    assert "tiny:anna" in out and "tiny:bert" in out

    assert main(["voices", "download", "tiny:bert"]) == 0
    out = capsys.readouterr().out
    assert "Installed tiny:bert" in out
    assert "--engine tiny --voice en_US-bert-medium" in out

    assert main(["voices"]) == 0
    out = capsys.readouterr().out
    assert f"\n{NAME}:\n  en_US-bert-medium" in out  # its voices, under its name
    # Where it came from, as its catalogue's installed offer says, and how it was made.
    assert "downloaded, from a recording" in out.split(f"\n{NAME}:\n", 1)[1].splitlines()[0]

    assert main(["voices", "remove", "tiny:bert"]) == 0
    assert "removed" in capsys.readouterr().out
    assert not (registry.default_model_dir(NAME) / "en_US-bert-medium.onnx").exists()


@pytest.mark.usefixtures("tiny")
def test_the_web_app_offers_downloads_and_speaks_with_it(tmp_path: Path) -> None:
    downloads = VoiceDownloads()
    downloads.start("tiny:anna")
    assert downloads._thread is not None
    downloads._thread.join(60)
    state = downloads.state()
    assert state is not None and state.error is None and state.installed is not None

    rows = {row.id: row for row in build_rows(local_catalogue(), installed_now(), "")}
    assert rows["tiny:anna"].status == INSTALLED and rows["tiny:anna"].engine == NAME
    assert rows["tiny:anna"].removable and rows["tiny:anna"].voice == "en_US-anna-medium"
    assert rows["tiny:bert"].status == AVAILABLE
    # The quality filter offers its grades, and finds its voices by them.
    assert "medium" in qualities() and rows["tiny:anna"].quality == "medium"
    medium = {row.id for row in visible(list(rows.values()), None, "medium")}
    assert {"tiny:anna", "tiny:bert"} <= medium

    catalog = EngineCatalog(VoiceMixes(tmp_path / "mixes.json", None), GpuSupport(False, "none"))
    choice = next(c for c in catalog.engines() if c.name == NAME)
    assert choice.label == "Tiny" and choice.available
    assert [voice.id for voice in choice.voices] == ["en_US-anna-medium"]
    assert not choice.uses_steps and choice.mixing is None


@pytest.mark.usefixtures("tiny")
def test_casting_gives_characters_voices_of_their_gender() -> None:
    for download_id in ("tiny:anna", "tiny:bert"):
        assert main(["voices", "download", download_id]) == 0
    engine = registry.get_engine(NAME)
    assert isinstance(engine, TinyEngine)
    voices = engine.voices()
    assert {voice.id: voice.gender for voice in voices} == {
        "en_US-anna-medium": "female",
        "en_US-bert-medium": "male",
    }
    narrator = registry.get_engine("piper").voices()[0]
    characters = [Character("Mary", gender="female", lines=3), Character("Tom", gender="male")]
    assert assign_voices(characters, voices, narrator) == {
        "Mary": "en_US-anna-medium",
        "Tom": "en_US-bert-medium",
    }


@pytest.mark.usefixtures("tiny")
def test_a_book_in_its_language_suggests_its_voice() -> None:
    from audiopub.voices.suggest import voices_for

    assert ("tiny", "en_US-anna-medium", "tiny:anna") in {
        (s.engine, s.voice, s.download) for s in voices_for("en-US")
    }
    assert "tiny" not in {s.engine for s in voices_for("fr")}


@pytest.mark.usefixtures("tiny")
def test_its_setting_is_checked_as_a_command_starts_and_read_where_it_speaks(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUDIOPUB_TINY_BERT", "robot")
    assert main(["voices"]) == 1
    assert "AUDIOPUB_TINY_BERT: expected female or male, not 'robot'" in capsys.readouterr().err

    monkeypatch.setenv("AUDIOPUB_TINY_BERT", "Female")
    assert main(["voices", "download", "tiny:bert"]) == 0
    assert [voice.gender for voice in registry.get_engine(NAME).voices()] == ["female"]


def test_nothing_of_audiopub_names_it() -> None:
    """The proof that registering is all it takes: no module outside the tests knows it."""
    found = subprocess.run(
        ["git", "grep", "-n", "-i", "-e", "tiny_engine", "-e", "tiny:", "--", "audiopub"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.stdout == ""
