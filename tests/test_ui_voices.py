"""The Voices page and the Convert page's voice suggestions, through NiceGUI's simulated browser.

Every test has a local server that speaks the Hugging Face Hub's protocol at HF_ENDPOINT
(`hub_server`), serving voices in the real formats (`hub_repos`), and a private models folder;
nothing reaches the network. Downloads really run: files fetched over HTTP, checked, installed.
"""

from __future__ import annotations

import io
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
import soundfile as sf
from epub_factory import build_epub
from hub_repos import (
    local_hub,
    piper_voice_files,
    serve_piper_voices,
    serve_supertonic,
    voice_folder,
)
from hub_server import HubServer
from nicegui.testing import User
from test_ui import element, eventually, see, text, upload
from ui_services import installed_services

from audiopub.errors import AudiopubError
from audiopub.tts.piper.files import embedded_voice, find_voices
from audiopub.tts.piper.index import PIPER_REPO
from audiopub.tts.supertonic.releases import SUPERTONIC_DEFAULT, SUPERTONIC_RELEASES, chosen_release
from audiopub.ui.services import Services
from audiopub.ui.voice_list import VoiceRow, language_options, sample, visible
from audiopub.voices.install import unfinished_downloads

pytestmark = pytest.mark.nicegui_main_file("tests/ui_main.py")

TINY_DE = "de_DE-tiny-medium"
SMALL_DE = "de_DE-small-low"
TINY_FR = "fr_FR-tiny-medium"


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    yield from local_hub(tmp_path, monkeypatch)


@pytest.fixture(autouse=True)
def services(data_dir: Path, hub: HubServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Services]:
    """After `hub` (its models folder, its HF_ENDPOINT), before `user` (the app finds it)."""
    yield from installed_services(data_dir, monkeypatch)


def models() -> Path:
    import os

    return Path(os.environ["AUDIOPUB_MODELS_DIR"])


def serve_three(hub: HubServer, **options: object) -> None:
    serve_piper_voices(
        hub, {key: piper_voice_files(key) for key in (TINY_DE, SMALL_DE, TINY_FR)}, **options
    )  # type: ignore[arg-type]


def shown(user: User) -> list[str]:
    """The ids of the voices listed, in order."""
    with user.client:
        rows = [
            e
            for e in element(user, "voice-list").descendants()
            if any(m.startswith("voice-") for m in e._markers)
        ]
    return [
        next(m for m in row._markers if m.startswith("voice-"))[len("voice-") :] for row in rows
    ]


async def open_voices(user: User, path: str = "/voices") -> None:
    await user.open(path)
    await see(user, marker="voice-list-loaded")


def card_path(key: str) -> str:
    return voice_folder(key) + "MODEL_CARD"


# --- the list ------------------------------------------------------------------------------


async def test_the_hubs_voices_are_listed_with_facts_and_filtered(
    user: User, hub: HubServer
) -> None:
    serve_three(hub)
    await user.open("/")
    user.find(marker="nav-voices").click()
    await see(user, marker="voice-list-loaded")
    await user.should_not_see(marker="catalogue-note")  # the Hub answered
    assert text(user, "catalogue-source") == "Listed from the Hub's voice index."
    ids = shown(user)
    assert ids[:4] == ["supertonic-3", "supertonic-2", "supertonic-1", "kokoro"]
    assert set(ids[4:]) == {f"piper:{k}" for k in (TINY_DE, SMALL_DE, TINY_FR, "en_US-joe-medium")}
    size = sum(len(data) for data in piper_voice_files(TINY_DE).values())
    assert text(user, f"size-piper:{TINY_DE}") == f"{size / 1000:.1f} kB"
    licence = element(user, f"licence-piper:{TINY_DE}")
    assert licence.props["href"] == f"{hub.url}/{PIPER_REPO}/blob/main/{card_path(TINY_DE)}"
    assert (
        element(user, "licence-supertonic-3").props["href"] == f"{hub.url}/Supertone/supertonic-3"
    )
    assert text(user, "status-piper:en_US-joe-medium") == "built in"  # the embedded voice
    await user.should_not_see(marker="remove-piper:en_US-joe-medium")

    language = element(user, "voice-language")
    assert language.options["de"] == "Language de · de (3)"  # type: ignore[attr-defined]
    language.value = "de"
    assert shown(user) == ["supertonic-3", f"piper:{SMALL_DE}", f"piper:{TINY_DE}"]
    element(user, "voice-quality").value = "low"
    assert shown(user) == [f"piper:{SMALL_DE}"]
    assert text(user, "voice-count") == "1 of 8 voices"
    language.value = "fr"
    await see(user, marker="voice-list-empty")


async def test_an_unreachable_hub_lists_the_shipped_voices_with_a_note(
    user: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as sock:  # a port where nothing listens
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", dead)
    await open_voices(user, "/voices?language=de_DE")
    # One note, in words: no OS error number, and no second line saying where the list is from.
    assert text(user, "catalogue-note") == (
        f"Offline: the Hugging Face Hub at {dead} can't be reached (Connection refused), so "
        "this is the voice index shipped with Audiopub. Downloads need a connection."
    )
    await user.should_not_see(marker="catalogue-source")
    ids = shown(user)
    assert "piper:de_DE-thorsten-medium" in ids and "supertonic-3" in ids
    assert all(i.startswith("piper:de_") or i == "supertonic-3" for i in ids), ids
    assert element(user, "voice-language").value == "de"
    assert element(user, "voice-language").options["de"].startswith("German · Deutsch (")  # type: ignore[attr-defined]

    # A download without the Hub says why, in the page.
    user.find(marker="download-piper:de_DE-thorsten-medium").click()
    await see(user, marker="download-error")
    assert text(user, "download-error").startswith(f"Can't reach the Hugging Face Hub at {dead}")
    assert not models().exists() or not any(models().rglob("*.onnx"))

    await open_voices(user, "/voices?language=xx&quality=best")
    assert text(user, "filter-note") == (
        "No voice in the list speaks “xx”: showing every "
        "language. “best” is not a quality (x_low, low, "
        "medium, high)."
    )
    assert len(shown(user)) > 90


# --- downloads -----------------------------------------------------------------------------


async def test_a_download_shows_progress_goes_on_without_the_tab_and_is_offered(
    user: User, hub: HubServer, services: Services
) -> None:
    serve_three(hub)
    hub.hold(card_path(TINY_DE))  # the model and config arrive, then the transfer waits
    try:
        await open_voices(user)
        user.find(marker=f"download-piper:{TINY_DE}").click()
        await see(user, marker="download-panel")
        await eventually(lambda: hub.held(card_path(TINY_DE)))
        files = piper_voice_files(TINY_DE)
        total = sum(len(data) for data in files.values())
        done = total - len(files["MODEL_CARD"])
        # The page reads the figures on its timer: they may show an earlier moment at first.
        await eventually(
            lambda: text(user, "download-figures").startswith(
                f"{done / 1000:.1f} kB of {total / 1000:.1f} kB, "
            )
        )
        assert text(user, "download-figures").endswith(" left")
        assert element(user, "download-progress").value == round(done / total, 4)  # type: ignore[attr-defined]
        assert text(user, f"status-piper:{TINY_DE}") == "downloading"
        assert not element(user, f"download-piper:{TINY_FR}").enabled  # one at a time
        with pytest.raises(AudiopubError, match=f"piper:{TINY_DE} is being downloaded"):
            services.downloads.start(f"piper:{TINY_FR}")

        await user.open("/")  # the Voices tab is gone; the download is not
    finally:
        hub.release(card_path(TINY_DE))
    await eventually(lambda: TINY_DE in find_voices(models() / "piper"))
    await user.open("/")  # the Convert page lists voices as they are when it opens
    await see(user, marker="voice", content="en_US-joe-medium")
    assert TINY_DE in element(user, "voice").options  # type: ignore[attr-defined]


async def test_cancel_installs_nothing_and_discard_removes_what_was_kept(
    user: User, hub: HubServer
) -> None:
    serve_three(hub)
    hub.hold(card_path(TINY_DE))
    try:
        await open_voices(user)
        user.find(marker=f"download-piper:{TINY_DE}").click()
        await eventually(lambda: hub.held(card_path(TINY_DE)))
        user.find(marker="download-cancel").click()
    finally:
        hub.release(card_path(TINY_DE))
    await see(user, marker="download-error")
    assert text(user, "download-error").startswith("Cancelled: nothing was installed.")
    await user.should_not_see(marker="download-panel")
    assert TINY_DE not in find_voices(models() / "piper")
    assert unfinished_downloads() == [f"piper:{TINY_DE}"]
    await see(user, marker=f"status-piper:{TINY_DE}", content="unfinished")

    user.find(marker=f"remove-piper:{TINY_DE}").click()  # Discard
    await see(user, marker="confirm-delete")
    user.find(marker="confirm-delete").click()
    await see(
        user,
        marker="download-message",
        content=f"Discarded the unfinished download of piper:{TINY_DE}.",
    )
    assert unfinished_downloads() == []
    assert not (models() / "piper" / ".downloads").exists()
    await user.should_see(marker=f"download-piper:{TINY_DE}", content="Download")


async def test_a_checksum_mismatch_or_a_404_says_so_and_installs_nothing(
    user: User, hub: HubServer
) -> None:
    serve_three(hub, leave_out=(card_path(SMALL_DE),))
    # The config: the tiny voices share their model, which the "CDN" serves by its SHA-256.
    hub.damage(PIPER_REPO, voice_folder(TINY_FR) + f"{TINY_FR}.onnx.json")
    await open_voices(user)
    user.find(marker=f"download-piper:{TINY_FR}").click()
    await see(user, marker="download-error")
    message = text(user, "download-error")
    assert f"{TINY_FR}.onnx.json does not match its published MD5" in message, message
    assert "Traceback" not in message

    # The list is drawn again after the first failure: a click on a row being replaced is lost,
    # so the button is found afresh and clicked again until the second download has run.
    for attempt in range(3):
        user.find(marker=f"download-piper:{SMALL_DE}").click()
        try:
            await see(user, marker="download-error", content="(404)")
            break
        except AssertionError:
            if attempt == 2:
                raise
    assert text(user, "download-error").startswith(
        f"The Hugging Face Hub at {hub.url} has no {card_path(SMALL_DE)} in {PIPER_REPO}"
    )
    assert not models().exists() or not any(models().rglob("*.onnx"))
    assert unfinished_downloads() == []
    await user.should_see(marker=f"download-piper:{TINY_FR}")


async def test_a_downloaded_voice_previews_in_its_language_and_is_removed(
    user: User, hub: HubServer
) -> None:
    key = "de_DE-joecopy-medium"  # the embedded voice's real model: real speech
    serve_piper_voices(hub, {key: piper_voice_files(key, embedded_voice().model)})
    await open_voices(user)
    await user.should_not_see(marker=f"preview-piper:{key}")
    user.find(marker=f"download-piper:{key}").click()
    await see(user, marker="download-message", timeout=60)
    assert text(user, "download-message").startswith(f"piper:{key} is installed (63.2 MB).")
    await see(user, marker=f"status-piper:{key}", content="downloaded")

    user.find(marker=f"preview-piper:{key}").click()
    await see(user, marker="voice-preview-audio")
    assert (
        text(user, "voice-preview-note")
        == f"{key}: “Hallo! So klinge ich, wenn ich dein Buch vorlese.”"
    )
    source = element(user, "voice-preview-audio").props["src"]
    assert source.startswith("data:audio/wav;base64,")
    import base64

    audio, rate = sf.read(io.BytesIO(base64.b64decode(source.split(",", 1)[1])))
    assert rate == 22050 and len(audio) / rate > 1.0

    user.find(marker=f"remove-piper:{key}").click()
    await see(user, marker="confirm-delete")
    user.find(marker="confirm-delete").click()
    await see(user, marker="download-message", content=f"Removed piper:{key}.")
    assert key not in find_voices(models() / "piper")
    await user.should_see(marker=f"download-piper:{key}")


async def test_an_installed_multi_speaker_voice_previews_with_its_first_speaker(user: User) -> None:
    from voices import add_multi_speaker_voice

    key = "en_GB-many-medium"
    add_multi_speaker_voice(models() / "piper", key)
    await open_voices(user)
    await see(user, marker=f"status-piper:{key}", content="added by you")
    user.find(marker=f"preview-piper:{key}").click()
    await see(user, marker="voice-preview-audio")
    await user.should_not_see(marker="voice-preview-error")
    assert text(user, "voice-preview-note").startswith(f"{key}: “")


# --- the Convert page's suggestions ----------------------------------------------------------


def german_book(tmp_path: Path, name: str = "buch.epub") -> Path:
    return build_epub(
        tmp_path / name,
        [("Erstes Kapitel", ["Es war ein heller, kalter Tag."])],
        title="Ein Buch",
        language="de-DE",
    )


async def open_convert_with(user: User, book: Path) -> None:
    await user.open("/")
    await see(user, marker="voice", content="en_US-joe-medium")
    await upload(user, book)
    await see(user, marker="book-title")


async def test_a_german_book_without_a_german_voice_links_to_german_voices(
    user: User, tmp_path: Path
) -> None:
    await open_convert_with(user, german_book(tmp_path))
    await see(user, marker="voice-suggestion")
    # The shipped index: nine German Piper voices and Supertonic-3.
    assert text(user, "voice-suggestion") == (
        "No installed Piper voice speaks German (Deutsch); 10 voices can be downloaded."
    )
    link = element(user, "voice-suggestion-link")
    assert link.props["href"] == "/voices?language=de"
    assert element(user, "voice").value == "en_US-joe-medium"  # nothing better to choose

    await user.open("/")  # an English book needs no suggestion
    await see(user, marker="voice", content="en_US-joe-medium")
    await upload(user, build_epub(tmp_path / "en.epub", [("One", ["A day."])], language="en"))
    await see(user, marker="book-title")
    await user.should_not_see(marker="voice-suggestion")


async def test_an_installed_german_voice_is_chosen_for_a_german_book(
    user: User, tmp_path: Path
) -> None:
    from voices import add_voice_with_rate

    for key in ("de_DE-low-low", "de_DE-good-high"):
        add_voice_with_rate(models() / "piper", key, 22050)
    await open_convert_with(user, german_book(tmp_path))
    voice = element(user, "voice")
    await eventually(lambda: voice.value == "de_DE-good-high")  # the best of the two
    assert list(voice.options)[:2] == ["de_DE-good-high", "de_DE-low-low"]  # type: ignore[attr-defined]
    await user.should_not_see(marker="voice-suggestion")

    # A voice the person chose is theirs: another German book does not change it.
    voice.value = "en_US-joe-medium"
    user.find(marker="another-book").click()
    await upload(user, german_book(tmp_path, "zweites.epub"))
    await see(user, marker="book-title")
    assert voice.value == "en_US-joe-medium"


async def test_a_multi_speaker_voice_is_ranked_by_its_models_quality(
    user: User, tmp_path: Path
) -> None:
    from voices import add_multi_speaker_voice, add_voice_with_rate

    add_voice_with_rate(models() / "piper", "de_DE-low-low", 22050)
    add_multi_speaker_voice(models() / "piper", "de_DE-many-high")
    await open_convert_with(user, german_book(tmp_path))
    voice = element(user, "voice")
    await eventually(lambda: voice.value == "de_DE-many-high#p239")  # high beats low


# --- what the page computes ----------------------------------------------------------------


def test_a_preview_sentence_is_in_the_voices_language_or_says_it_is_english() -> None:
    assert sample("de-AT") == ("Hallo! So klinge ich, wenn ich dein Buch vorlese.", None)
    assert sample("pt_BR")[0].startswith("Olá!")
    text_, note = sample("ka")
    assert text_ == sample("en")[0]
    assert note == "No sample sentence in “ka” yet: this one is English."


def test_a_quality_filter_leaves_out_supertonic_and_counts_follow_the_rows() -> None:
    rows = [
        VoiceRow("supertonic-3", "supertonic", "supertonic-3", ("en", "de"), "many"),
        VoiceRow(f"piper:{TINY_DE}", "piper", TINY_DE, ("de",), "German", quality="medium"),
        VoiceRow(f"piper:{SMALL_DE}", "piper", SMALL_DE, ("de",), "German", quality="low"),
    ]
    assert [r.id for r in visible(rows, "de", None)] == [r.id for r in rows]
    assert [r.id for r in visible(rows, "de", "low")] == [f"piper:{SMALL_DE}"]
    assert visible(rows, "fr", "") == []
    options = language_options(rows, {"de": ("German", "Deutsch"), "en": ("English", "English")})
    assert options == {"": "All languages (3)", "en": "English (1)", "de": "German · Deutsch (3)"}


# --- Supertonic releases ---------------------------------------------------------------------


async def download_in_page(user: User, release: str) -> None:
    await open_voices(user)
    user.find(marker=f"download-{release}").click()
    await see(user, marker="download-message", content=f"{release} is installed", timeout=60)


async def choose_supertonic(user: User) -> None:
    await user.open("/")
    await see(user, marker="voice", content="en_US-joe-medium")
    user.find(marker="engine").click()
    user.find("Supertonic").click()
    await see(user, marker="steps")


async def test_supertonic_downloaded_or_removed_in_the_page_needs_no_restart(
    user: User, hub: HubServer, tmp_path: Path
) -> None:
    serve_supertonic(hub, SUPERTONIC_DEFAULT.repo, SUPERTONIC_DEFAULT.revision, tmp_path / "st")
    await user.open("/")
    await eventually(
        lambda: (
            element(user, "engine").options.get(  # type: ignore[attr-defined]
                "supertonic"
            )
            == "Supertonic (not installed)"
        ),
        20,
    )

    await download_in_page(user, "supertonic-3")
    await see(
        user,
        marker="note-supertonic-3",  # once the rows are read again
        content="In use: Supertonic speaks with this release.",
    )
    await choose_supertonic(user)  # the same app: no restart
    assert list(element(user, "voice").options) == ["F1", "M1"]  # type: ignore[attr-defined]
    assert element(user, "steps").visible
    await user.should_see(marker="gpu")
    await user.should_not_see(marker="engine-unavailable-supertonic")

    await open_voices(user)
    user.find(marker="remove-supertonic-3").click()
    await see(user, marker="confirm-delete")
    user.find(marker="confirm-delete").click()
    await see(user, marker="download-message", content="Removed supertonic-3.")
    await user.open("/")
    await see(user, marker="voice", content="en_US-joe-medium")
    assert element(user, "engine").options == {  # type: ignore[attr-defined]
        "piper": "Piper",
        "supertonic": "Supertonic (not installed)",
        "kokoro": "Kokoro (not installed)",
    }
    await user.should_not_see(marker="steps")


async def test_use_switches_the_release_and_its_languages_follow(
    user: User, hub: HubServer, tmp_path: Path
) -> None:
    for release in SUPERTONIC_RELEASES[:2]:
        serve_supertonic(hub, release.repo, release.revision, tmp_path / release.id)
    await download_in_page(user, "supertonic-2")
    await download_in_page(user, "supertonic-3")  # the newest installed speaks
    await see(
        user,
        marker="note-supertonic-2",
        content="Installed; Supertonic speaks with another release.",
    )
    await user.should_not_see(marker="use-supertonic-3")
    await user.should_not_see(marker="preview-supertonic-2")  # only the one in use is heard

    user.find(marker="use-supertonic-2").click()
    await see(
        user, marker="download-message", content="Supertonic speaks with supertonic-2 from now on."
    )
    await see(
        user, marker="note-supertonic-2", content="In use: Supertonic speaks with this release."
    )
    await user.should_see(marker="use-supertonic-3")
    assert chosen_release() == SUPERTONIC_RELEASES[1]  # kept where the CLI reads it too

    # supertonic-2 reads no German: a German book is offered what can be downloaded.
    await open_convert_with(user, german_book(tmp_path))
    user.find(marker="engine").click()
    user.find("Supertonic").click()
    await see(
        user,
        marker="voice-suggestion",
        content="No installed Supertonic voice speaks German (Deutsch)",
    )
