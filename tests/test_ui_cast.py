"""The Convert page's Cast panel through NiceGUI's simulated browser (`user` fixture): a short
book with three speakers, cast from the embedded Piper voice (the narrator) and the three
speakers of a tiny multi-speaker Piper voice; every change lands in the book's cast file, and
Generate speaks with it."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import soundfile as sf
from epub_factory import build_epub
from nicegui.testing import User
from test_ui import element, eventually, job_state, only_job, press, see, text, upload
from ui_services import installed_services
from voices import SPEAKER_OFFSETS, SPEAKERS, add_multi_speaker_voice

from audiopub.book.cast import attribute
from audiopub.book.cast.models import Attribution, Character
from audiopub.book.models import Book
from audiopub.book.reading import read_book
from audiopub.ui.services import Services
from audiopub.voices.casting import BookCast, book_cast_path

pytestmark = pytest.mark.nicegui_main_file("tests/ui_main.py")

NARRATOR = "en_US-joe-medium"
CAST_VOICES = {f"en_GB-tiny-medium#{speaker}" for speaker in SPEAKERS}
KITCHEN = [
    "Mary came into the kitchen, shaking the rain from her coat.",
    "“Where have you been all afternoon?” asked Mary.",
    "“At the market in the square,” said Jem. “The bread was gone by noon.”",
    "“Did you buy any apples at least?” Mary asked him.",
    "“I forgot the apples entirely,” Jem said, and he laughed.",
    "“You two never remember anything,” said Mrs. Hale from the stairs.",
]


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded voice and three speakers of one more, at its sample rate."""
    models = tmp_path_factory.mktemp("models")
    add_multi_speaker_voice(models / "piper", "en_GB-tiny-medium")
    return models


@pytest.fixture(autouse=True)
def services(
    data_dir: Path, models_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Services]:
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(models_dir))
    monkeypatch.delenv("AUDIOPUB_SUPERTONIC_DIR", raising=False)
    yield from installed_services(data_dir, monkeypatch)


@pytest.fixture
def kitchen(tmp_path: Path) -> Path:
    return build_epub(
        tmp_path / "kitchen.epub", [("The Kitchen", KITCHEN)], title="Rain", language="en"
    )


async def open_cast(user: User, book: Path) -> None:
    """The page with the book uploaded, the narrator chosen and the cast switched on."""
    await user.open("/")
    await see(user, marker="voice", content=NARRATOR, timeout=30)
    element(user, "voice").value = NARRATOR  # type: ignore[attr-defined]
    await upload(user, book)
    await see(user, marker="book-title", timeout=30)
    await user.should_not_see(marker="cast-name-0")  # off: the default flow is unchanged
    element(user, "cast-switch").value = True  # type: ignore[attr-defined]
    await see(user, marker="cast-name-2", timeout=60)


def names(user: User) -> list[str]:
    """The characters listed, in the panel's order."""
    listed = {e.text: e for e in user.find(marker="cast-name").elements}  # type: ignore[attr-defined]
    return [text(user, f"cast-name-{n}") for n in range(len(listed))]


def cast_file(services: Services, book: Path) -> dict[str, object]:
    return json.loads(book_cast_path(services.data_dir, book).read_text("utf-8"))


async def test_the_characters_are_listed_a_voice_chosen_is_kept_and_heard(
    user: User, kitchen: Path, services: Services
) -> None:
    await open_cast(user, kitchen)
    assert names(user) == ["Jem", "Mary", "Mrs. Hale"]  # most lines first
    assert text(user, "cast-facts-0") == "3 lines · gender unknown"
    assert text(user, "cast-facts-2") == "1 line · female"
    assert text(user, "cast-summary") == f"cast: 3 characters in 3 voices (narrator {NARRATOR})"
    voices = [element(user, f"cast-voice-{n}").value for n in range(3)]  # type: ignore[attr-defined]
    assert set(voices) == CAST_VOICES  # three speakers, one each, never the narrator's
    # The narrator's voice can be chosen; the engine's other voices are offered.
    assert set(element(user, "cast-voice-0").options) == {NARRATOR, *CAST_VOICES}  # type: ignore[attr-defined]

    element(user, "cast-voice-1").value = voices[0]  # type: ignore[attr-defined]
    await eventually(lambda: cast_file(services, kitchen)["voices"] == {"Mary": voices[0]})
    # A voice chosen is taken: Jem, whose voice it was, is given the one left free.
    await eventually(lambda: element(user, "cast-voice-0").value == voices[1])  # type: ignore[attr-defined]
    assert element(user, "cast-voice-1").value == voices[0]  # type: ignore[attr-defined]
    assert text(user, "cast-summary") == f"cast: 3 characters in 3 voices (narrator {NARRATOR})"

    await user.should_not_see(marker="cast-audio")
    user.find(marker="cast-hear-1").click()
    await see(user, marker="cast-audio", timeout=60)
    source = element(user, "cast-audio").props["src"]
    assert source.startswith("data:audio/wav;base64,")
    audio, rate = sf.read(io.BytesIO(base64.b64decode(source.split(",", 1)[1])))
    # Mary's line in Mary's voice: the tiny graph adds its speaker's offset to every sample.
    speaker = voices[0].split("#")[1]
    assert rate == 22050 and len(audio) > 10
    assert abs(audio.mean() - SPEAKER_OFFSETS[SPEAKERS.index(speaker)]) < 0.12, audio.mean()


async def test_rename_merge_gender_and_reassign_a_line_are_saved(
    user: User, kitchen: Path, services: Services
) -> None:
    await open_cast(user, kitchen)
    user.find(marker="cast-rename-2").click()
    await see(user, marker="cast-rename-input")
    element(user, "cast-rename-input").value = "Aunt Hale"  # type: ignore[attr-defined]
    user.find(marker="cast-rename-save").click()
    await eventually(lambda: names(user) == ["Jem", "Mary", "Aunt Hale"])
    assert cast_file(services, kitchen)["names"] == {"Mrs. Hale": "Aunt Hale"}
    assert cast_file(services, kitchen)["genders"] == {}  # unchanged: not written

    user.find(marker="cast-rename-0").click()  # Jem is a man
    await see(user, marker="cast-gender-input")
    element(user, "cast-gender-input").value = "male"  # type: ignore[attr-defined]
    user.find(marker="cast-rename-save").click()
    await eventually(lambda: text(user, "cast-facts-0") == "3 lines · male")
    assert cast_file(services, kitchen)["genders"] == {"Jem": "male"}

    # Another character's name: the two are one.
    user.find(marker="cast-rename-1").click()
    await see(user, marker="cast-rename-input")
    element(user, "cast-rename-input").value = "Jem"  # type: ignore[attr-defined]
    user.find(marker="cast-rename-save").click()
    await eventually(lambda: names(user) == ["Jem", "Aunt Hale"])
    assert text(user, "cast-facts-0") == "5 lines · male"

    # Jem's lines in their paragraphs; the first given to the narrator, the last to Aunt Hale.
    user.find(marker="cast-quotes-0").click()
    await see(user, marker="cast-quotes")
    first = element(user, "cast-quote-0").content  # type: ignore[attr-defined]
    assert first == (
        "<mark class='ap-said'>\"Where have you been all afternoon?\"</mark> asked Mary."
    )
    element(user, "cast-quote-speaker-0").value = "\u2063narrator"  # type: ignore[attr-defined]
    element(user, "cast-quote-speaker-4").value = "Aunt Hale"  # type: ignore[attr-defined]
    await eventually(lambda: len(cast_file(services, kitchen)["speakers"]) == 2)  # type: ignore[arg-type]
    speakers = cast_file(services, kitchen)["speakers"]
    assert speakers == {"0:2:0": None, "0:5:0": "Aunt Hale"}
    user.find(marker="cast-quotes-close").click()
    await eventually(lambda: text(user, "cast-facts-0") == "3 lines · male")
    assert text(user, "cast-facts-1") == "2 lines · female"


async def test_find_again_reads_the_book_afresh_and_keeps_the_changes(
    user: User, kitchen: Path, services: Services
) -> None:
    # A cast kept from an earlier finder that gave every line to Mary, with a change of the
    # user's that names a character that finder missed.
    def earlier(book: Book) -> Attribution:
        found = attribute(book)
        return Attribution(
            (Character("Mary", lines=len(found.quotes)),),
            tuple(replace(q, speaker="Mary") for q in found.quotes),
        )

    kept = BookCast.of(services.data_dir, kitchen, read_book(kitchen), earlier)
    assert kept.file.names == {}  # attributed and written
    path = book_cast_path(services.data_dir, kitchen)
    path.write_text(
        json.dumps({**cast_file(services, kitchen), "names": {"Mrs. Hale": "Aunt Hale"}}),
        encoding="utf-8",
    )
    await user.open("/")
    await see(user, marker="voice", content=NARRATOR, timeout=30)
    element(user, "voice").value = NARRATOR  # type: ignore[attr-defined]
    await upload(user, kitchen)
    await see(user, marker="book-title", timeout=30)
    element(user, "cast-switch").value = True  # type: ignore[attr-defined]
    await see(user, marker="cast-name-0", timeout=60)
    assert names(user) == ["Mary"]

    user.find(marker="cast-again").click()
    await eventually(lambda: names(user) == ["Jem", "Mary", "Aunt Hale"], timeout=60)
    assert cast_file(services, kitchen)["names"] == {"Mrs. Hale": "Aunt Hale"}


async def test_generate_speaks_with_the_cast(user: User, kitchen: Path, services: Services) -> None:
    await open_cast(user, kitchen)
    chosen = element(user, "cast-voice-0").value  # type: ignore[attr-defined]
    await press(user, "generate")
    await eventually(lambda: len(services.store.queue.list_jobs()) == 1, timeout=60)
    cast = services.store.queue.get_job(only_job(services)).settings.cast
    assert cast is not None
    assert (cast.engine, cast.narrator) == ("piper", NARRATOR)
    assert cast.voices["Jem"] == chosen and set(cast.voices) == {"Jem", "Mary", "Mrs. Hale"}
    assert cast.spans[(0, 3)] == ((0, 30, chosen), (41, 70, chosen))  # Jem's two lines
    await see(user, marker="job-cast", timeout=30)
    assert text(user, "job-cast") == f"cast: 3 characters in 3 voices (narrator {NARRATOR})"
    await job_state(user, "Done", timeout=120)
    voiced = {c.voice for c in services.store.ledger.all_chunks(only_job(services))}
    assert chosen in voiced


async def test_with_one_voice_the_characters_are_listed_and_generate_says_what_is_needed(
    user: User, kitchen: Path, services: Services, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))  # the narrator alone
    await user.open("/")
    await see(user, marker="voice", content=NARRATOR, timeout=30)
    await upload(user, kitchen)
    await see(user, marker="book-title", timeout=30)
    element(user, "cast-switch").value = True  # type: ignore[attr-defined]
    # A fresh install: who speaks is shown, to check and correct, with no voices to choose.
    await see(user, marker="cast-name-2", timeout=60)
    assert sorted(names(user)) == ["Jem", "Mary", "Mrs. Hale"]
    assert text(user, "cast-summary").startswith("A cast of voices needs Kokoro")
    await user.should_not_see(marker="cast-voice-0")
    await user.should_not_see(marker="cast-error")
    user.find(marker="cast-quotes-0").click()  # their lines, to reassign, all the same
    await see(user, marker="cast-quotes", timeout=30)
    await press(user, "generate")
    await see(user, marker="generate-error", content="No voice is left for the characters")
    assert services.store.queue.list_jobs() == []
