"""Blocking work started from a page (`ui.blocking.run_blocking`): its result, or its error said
in the page, an AudiopubError as it is and a bug with its type (and whole in the log); the
button that started it spins no more. Through the helper, then through each page that uses it
(NiceGUI's `user` fixture; the engine's failures are stand-ins, the pages run for real)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from epub_factory import build_epub
from hub_repos import local_hub
from hub_server import HubServer
from nicegui.testing import User
from test_ui import element, open_lexicon, see, text
from ui_services import installed_services
from voices import add_multi_speaker_voice

from audiopub.errors import AudiopubError, SynthesisFailed
from audiopub.ui import blocking
from audiopub.ui.blocking import run_blocking
from audiopub.ui.components import lexicon_editor
from audiopub.ui.services import Services

pytestmark = pytest.mark.nicegui_main_file("tests/ui_main.py")


def _bug(*_: object, **__: object) -> bytes:
    raise RuntimeError("the engine tripped")


def _refused(*_: object, **__: object) -> bytes:
    raise SynthesisFailed("No voice can say this")


# --- the helper --------------------------------------------------------------------------------


async def test_the_result_comes_back_and_nothing_is_said() -> None:
    said: list[str] = []
    assert await run_blocking(pow, 2, 10, show=said.append, failing="Counting failed") == 1024
    assert said == []


async def test_an_audiopub_error_is_said_as_it_is() -> None:
    said: list[str] = []

    def refuse() -> int:
        raise AudiopubError("Choose a voice first")

    assert await run_blocking(refuse, show=said.append, failing="Counting failed") is None
    assert said == ["Choose a voice first"]


async def test_a_bug_is_said_with_its_type_and_logged_whole(
    caplog: pytest.LogCaptureFixture,
) -> None:
    said: list[str] = []
    with caplog.at_level(logging.ERROR, logger=blocking.__name__):
        assert await run_blocking(_bug, show=said.append, failing="Counting failed") is None
    assert said == ["Counting failed (RuntimeError: the engine tripped)"]
    (record,) = caplog.records
    assert record.getMessage() == "Counting failed" and record.exc_info is not None


# --- the pages ---------------------------------------------------------------------------------


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    yield from local_hub(tmp_path, monkeypatch)  # the Voices page asks it; it has no voices


@pytest.fixture(autouse=True)
def services(data_dir: Path, hub: HubServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Services]:
    yield from installed_services(data_dir, monkeypatch)


def spinning(user: User, marker: str) -> bool:
    return "loading" in element(user, marker).props


def logged_bugs(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The bugs logged (the `user` fixture fails a test that leaves an ERROR log behind)."""
    logged = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.ERROR and r.exc_info is not None
    ]
    caplog.clear()
    return logged


async def test_the_voice_preview_says_why_it_failed(
    user: User,
    services: Services,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await user.open("/")
    await see(user, marker="voice", content="en_US-joe-medium")
    monkeypatch.setattr(services.previews, "preview", _refused)
    user.find(marker="preview").click()
    await see(user, marker="preview-error", content="No voice can say this")
    monkeypatch.setattr(services.previews, "preview", _bug)
    user.find(marker="preview").click()
    await see(
        user,
        marker="preview-error",
        content="The preview failed (RuntimeError: the engine tripped)",
    )
    assert not spinning(user, "preview")
    await user.should_not_see(marker="preview-audio")
    assert logged_bugs(caplog) == ["The preview failed"]


async def test_the_lexicon_editor_says_why_hearing_or_saving_failed(
    user: User,
    services: Services,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    book = build_epub(
        tmp_path / "names.epub", [("One", ["Quillfeather sailed at dawn."])], title="Names Book"
    )
    await open_lexicon(user, book)
    user.find(marker="lexicon-add").click()
    element(user, "lexicon-written-1").value = "Quillfeather"  # type: ignore[attr-defined]
    element(user, "lexicon-say-1").value = "Kwill-feather"  # type: ignore[attr-defined]
    monkeypatch.setattr(services.previews, "say", _bug)
    user.find(marker="lexicon-hear-1").click()
    await see(
        user, marker="lexicon-error", content="Speaking failed (RuntimeError: the engine tripped)"
    )
    await user.should_not_see(marker="lexicon-audio")

    def full_disk(*_: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(lexicon_editor, "save", full_disk)
    user.find(marker="lexicon-save").click()
    await see(user, marker="lexicon-error", content="Saving failed (OSError: [Errno 28] No space")
    assert not spinning(user, "lexicon-save")
    await user.should_see(marker="lexicon-unsaved")
    assert logged_bugs(caplog) == ["Speaking failed", "Saving failed"]


async def test_the_voices_page_preview_says_why_it_failed(
    user: User,
    services: Services,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    import os

    key = "en_GB-many-medium"
    add_multi_speaker_voice(Path(os.environ["AUDIOPUB_MODELS_DIR"]) / "piper", key)
    monkeypatch.setattr(services.previews, "say", _bug)
    await user.open("/voices")
    await see(user, marker="voice-list-loaded")
    user.find(marker=f"preview-piper:{key}").click()
    await see(
        user,
        marker="voice-preview-error",
        content="The preview failed (RuntimeError: the engine tripped)",
    )
    await user.should_not_see(marker="voice-preview-audio")
    assert text(user, "voice-preview-note").startswith(f"{key}: “")
    assert logged_bugs(caplog) == ["The preview failed"]
