"""Kokoro on the Convert page, with the real int8 model and voices (`kokoro_model`): the voice
mixer (hear a mix, save it under a name, convert with it) and which voices the page puts first
for a book's language. Loading the model is slow on a small machine: the module shares one
models folder, so the registry loads each engine once, and keeps to two tests."""

from __future__ import annotations

import base64
import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import soundfile as sf
from epub_factory import build_epub
from hub_repos import local_hub
from hub_server import HubServer
from kokoro_model import REPO, install_folder, voice_vectors
from nicegui.testing import User
from test_ui import element, eventually, only_job, press, see, text, upload
from ui_services import installed_services

from audiopub.jobs.models import JobState
from audiopub.ui.services import Services

pytestmark = pytest.mark.nicegui_main_file("tests/ui_main.py")

MIX = "af_heart:0.7+jf_alpha:0.3"


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory, kokoro_model_file: Path) -> Path:
    """Kokoro with two Japanese voices and one named as American English (af_heart: another
    Japanese voice's vectors, as a voice of another language in the same folder)."""
    models = tmp_path_factory.mktemp("models")
    folder = install_folder(models / "kokoro", kokoro_model_file, voices=("jf_alpha", "jm_kumo"))
    vectors = voice_vectors()["jf_nezumi"].astype("<f4").tobytes()
    (folder / "voices" / "af_heart.bin").write_bytes(vectors)
    return models


@pytest.fixture(autouse=True)
def services(
    data_dir: Path, models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Services]:
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(models_dir))
    monkeypatch.delenv("AUDIOPUB_SUPERTONIC_DIR", raising=False)
    monkeypatch.delenv("AUDIOPUB_KOKORO_DIR", raising=False)
    yield from installed_services(data_dir, monkeypatch)


async def choose_kokoro(user: User) -> None:
    await user.open("/")
    await see(user, marker="voice", content="en_US-joe-medium", timeout=60)
    await user.should_not_see(marker="voice-mixer")  # Piper's voices are not mixed
    element(user, "engine").value = "kokoro"  # type: ignore[attr-defined]
    await see(user, marker="voice-mixer")


async def test_a_mix_is_heard_saved_under_a_name_and_speaks_the_book(
    user: User, services: Services, tmp_path: Path
) -> None:
    await choose_kokoro(user)
    assert element(user, "voice").value == "af_heart"  # type: ignore[attr-defined]
    # The mixer starts from the chosen voice and the next one, half and half.
    assert element(user, "mix-voice-0").value == "af_heart"  # type: ignore[attr-defined]
    assert element(user, "mix-voice-1").value == "jf_alpha"  # type: ignore[attr-defined]
    assert text(user, "mix-share-0") == "50%"
    element(user, "mix-weight-0").value = 70  # type: ignore[attr-defined]
    element(user, "mix-weight-1").value = 30  # type: ignore[attr-defined]
    assert (text(user, "mix-share-0"), text(user, "mix-share-1")) == ("70%", "30%")

    await user.should_not_see(marker="mix-audio")
    user.find(marker="mix-hear").click()
    await see(user, marker="mix-audio", timeout=120)
    source = element(user, "mix-audio").props["src"]
    assert source.startswith("data:audio/wav;base64,") and len(source) > 10_000

    user.find(marker="mix-save").click()  # no name yet: refused, nothing saved
    await see(user, marker="mix-error", content="Give the mix a name.")
    assert services.mixes.all() == {}
    element(user, "mix-name").value = "Warm narrator"  # type: ignore[attr-defined]
    user.find(marker="mix-save").click()
    voice = element(user, "voice")
    await eventually(lambda: voice.value == MIX)  # type: ignore[attr-defined]
    assert voice.options[MIX] == "Warm narrator (mix) · en-US"  # type: ignore[attr-defined]
    assert services.mixes.all() == {"Warm narrator": MIX}
    assert services.preferences.get().voice == MIX
    assert text(user, "saved-mix-0") == "Warm narrator (mix)"

    # Opened again, the saved mix is among Kokoro's voices and still chosen.
    await user.open("/")
    await see(user, marker="voice-mixer", timeout=60)
    voice = element(user, "voice")
    assert voice.value == MIX and MIX in voice.options  # type: ignore[attr-defined]

    book = build_epub(
        tmp_path / "morning.epub", [("Morning", ["Good morning."])], title="Morning", language="en"
    )
    await upload(user, book)
    await see(user, marker="book-title", timeout=60)
    assert element(user, "voice").value == MIX  # type: ignore[attr-defined]
    await eventually(lambda: element(user, "generate").enabled, 60)
    await press(user, "generate")
    await eventually(lambda: len(services.store.queue.list_jobs()) == 1)
    job_id = only_job(services)
    # The job's voice is the mix itself: its cache key follows the voices and their weights,
    # and removing the saved mix, even while the job runs, leaves the job its voice.
    assert services.store.queue.get_job(job_id).settings.voice == MIX

    user.find(marker="mix-remove-0").click()
    await see(user, marker="confirm-delete")
    user.find(marker="confirm-delete").click()
    await eventually(lambda: MIX not in voice.options)  # type: ignore[attr-defined]
    assert voice.value == "af_heart"  # type: ignore[attr-defined]
    assert services.mixes.all() == {} and services.preferences.get().voice == "af_heart"
    await user.should_not_see(marker="saved-mix-0")

    await eventually(lambda: services.store.queue.get_job(job_id).state == JobState.DONE, 180)
    assert services.store.queue.get_job(job_id).settings.voice == MIX
    chunk = services.store.ledger.all_chunks(job_id)[0]
    assert chunk.audio_path is not None
    audio, rate = sf.read(services.store.job_dir(job_id) / chunk.audio_path)
    assert rate == 24_000 and len(audio) > rate // 4


async def test_a_mix_that_cannot_be_heard_says_why(
    user: User,
    services: Services,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await choose_kokoro(user)
    element(user, "mix-weight-1").value = 0  # type: ignore[attr-defined]
    user.find(marker="mix-hear").click()
    await see(
        user,
        marker="mix-error",
        content="A mix needs at least two different voices with a weight above 0.",
    )
    element(user, "mix-weight-1").value = 30  # type: ignore[attr-defined]

    def engine_bug(*_: object) -> bytes:
        raise RuntimeError("the engine tripped")

    monkeypatch.setattr(services.previews, "preview", engine_bug)
    user.find(marker="mix-hear").click()
    await see(
        user,
        marker="mix-error",
        content="The mix could not be heard (RuntimeError: the engine tripped)",
    )
    assert "loading" not in element(user, "mix-hear").props
    await user.should_not_see(marker="mix-audio")
    assert [r.levelname for r in caplog.records if r.exc_info] == ["ERROR"]  # logged whole
    caplog.clear()  # expected: the `user` fixture fails a test that leaves an ERROR log


async def test_kokoro_puts_the_voices_of_the_books_own_language_first(
    user: User, services: Services, tmp_path: Path
) -> None:
    """Every Kokoro voice reads all nine of its languages; a voice whose own language is the
    book's comes first, and is chosen over one that merely reads it."""
    services.mixes.save("Blend", "af_heart+jm_kumo")
    services.preferences.update(engine="kokoro", voice="af_heart")
    await user.open("/")
    await see(user, marker="voice-mixer", timeout=60)
    voice = element(user, "voice")
    options = list(voice.options)  # type: ignore[attr-defined]
    assert options == ["af_heart", "jf_alpha", "jm_kumo", "af_heart+jm_kumo"]
    book = build_epub(
        tmp_path / "ja.epub", [("一", ["おはようございます。"])], title="朝", language="ja"
    )
    await upload(user, book)
    await see(user, marker="book-title", timeout=60)
    await eventually(lambda: voice.value == "jf_alpha")  # type: ignore[attr-defined]
    assert list(voice.options)[:2] == ["jf_alpha", "jm_kumo"]  # type: ignore[attr-defined]
    await user.should_not_see(marker="voice-suggestion")


@pytest.fixture
def hub(
    services: Services,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kokoro_repo: dict[str, bytes],
) -> Iterator[HubServer]:
    """After `services`: a Hub with Kokoro's repository, and an empty models folder."""
    yield from local_hub(tmp_path, monkeypatch, {REPO: kokoro_repo})


async def test_the_voices_page_downloads_previews_and_removes_kokoro(
    user: User, hub: HubServer
) -> None:
    folder = Path(os.environ["AUDIOPUB_MODELS_DIR"]) / "kokoro"
    await user.open("/voices")
    await see(user, marker="voice-list-loaded")
    await see(user, marker="voice-kokoro")
    await user.should_not_see(marker="status-kokoro")
    await user.should_not_see(marker="preview-kokoro")
    user.find(marker="download-kokoro").click()
    await see(user, marker="download-message", content="kokoro is installed (", timeout=120)
    await see(user, marker="status-kokoro", content="downloaded")
    assert text(user, "note-kokoro") == "Its voices can be mixed on the Convert page."
    assert sorted(p.stem for p in (folder / "voices").glob("*.bin")) == ["jf_alpha", "jm_kumo"]

    user.find(marker="preview-kokoro").click()
    await see(user, marker="voice-preview-audio", timeout=120)
    source = element(user, "voice-preview-audio").props["src"]
    audio, rate = sf.read(io.BytesIO(base64.b64decode(source.split(",", 1)[1])))
    assert rate == 24_000 and len(audio) / rate > 1.0

    user.find(marker="remove-kokoro").click()
    await see(user, marker="confirm-delete")
    user.find(marker="confirm-delete").click()
    await see(user, marker="download-message", content="Removed kokoro.")
    assert not folder.exists()
    await see(user, marker="download-kokoro")


def test_a_stopped_kokoro_download_is_kokoros_to_continue_or_discard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from audiopub.tts.downloads import STAGING
    from audiopub.ui.voice_list import UNFINISHED, build_rows, installed_now
    from audiopub.voices.catalogue import local_catalogue

    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    (tmp_path / "models" / STAGING / "kokoro").mkdir(parents=True)
    have = installed_now()
    assert have.unfinished == {"kokoro"}
    assert [offer.installed for offer in have.offers if offer.engine == "kokoro"] == [None]
    (row,) = [row for row in build_rows(local_catalogue(), have, "") if row.engine == "kokoro"]
    assert row.status == UNFINISHED and row.removable
