"""Proof-listening in the web app (NiceGUI's `user` fixture), heard by the real Whisper base:
the switch (off on the CPU until set, disabled and saying why without a listening model), and
what it found, in the job's card and in the Library, with a play button at each chunk still
flagged. The tiny Supertonic model speaks tones, so its chunks stay flagged."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from epub_factory import build_epub
from nicegui.testing import User
from test_ui import element, eventually, job_state, only_job, press, see, text, upload
from tiny_supertonic import build_tiny_model
from ui_services import installed_services

from audiopub.ui.components.listen_switch import ABOUT
from audiopub.ui.services import Services

pytestmark = pytest.mark.nicegui_main_file("tests/ui_main.py")


@pytest.fixture
def models_dir(whisper_base: Path) -> Path:
    return whisper_base


@pytest.fixture(autouse=True)
def services(
    data_dir: Path, models_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Services]:
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(models_dir))
    monkeypatch.setenv("AUDIOPUB_SUPERTONIC_DIR", str(build_tiny_model(tmp_path / "st")))
    yield from installed_services(data_dir, monkeypatch)


@pytest.mark.parametrize("models_dir", [Path("/nonexistent/models")])
async def test_without_a_listening_model_the_switch_is_off_and_says_why(user: User) -> None:
    await user.open("/")
    await see(user, marker="proof-listen-reason", content="Unavailable")
    assert "audiopub voices download whisper:base" in text(user, "proof-listen-reason")
    switch = element(user, "proof-listen")
    assert not switch.enabled and switch.value is False  # type: ignore[attr-defined]


async def test_a_job_that_listens_shows_what_is_still_flagged_and_plays_it(
    user: User, tmp_path: Path, services: Services
) -> None:
    book = build_epub(
        tmp_path / "tones.epub",
        [("Only", ["The clocks were striking thirteen all over the little town."])],
        title="Tones",
    )
    await user.open("/")
    await see(user, marker="proof-listen-reason", content=ABOUT)
    switch = element(user, "proof-listen")
    assert switch.enabled and switch.value is False  # type: ignore[attr-defined]  # the CPU
    user.find(marker="proof-listen").click()
    assert switch.value is True  # type: ignore[attr-defined]
    user.find(marker="engine").click()
    user.find("Supertonic").click()
    await see(user, marker="steps")
    await upload(user, book)
    await see(user, marker="book-title")
    await press(user, "generate")
    await see(user, marker="job", timeout=90)
    await job_state(user, "Done", timeout=240)
    job_id = only_job(services)
    assert services.store.queue.get_job(job_id).settings.proof_listen is True
    summary = services.store.hearings.listening_summary(job_id)
    flagged = services.store.hearings.still_flagged(job_id)
    assert summary.still_flagged == len(flagged) >= 1
    await eventually(lambda: text(user, "job-listening") == summary.describe())
    with user.scope(marker="job-flagged"):
        await user.should_see(flagged[0].text)
        await user.should_see(f"Heard: {flagged[0].heard or '(nothing)'}")

    await user.open("/library")
    await see(user, marker=f"book-{job_id}")
    assert text(user, "book-listening") == summary.describe()
    with user.scope(marker="book-flagged"):
        await user.should_see(flagged[-1].text)
    user.find(marker=f"book-flagged-play-{len(flagged)}").click()  # opens the player there
    await user.should_see(marker="book-audio")
    assert text(user, "book-play") == "Stop"
    # The new player starts itself there: a seek sent beside it could reach the page first.
    player = element(user, "book-audio").props
    assert player["autoplay"] and player["src"].endswith(f"#t={flagged[-1].book_s:.3f}")
