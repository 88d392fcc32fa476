"""The web UI through NiceGUI's simulated browser (`user` fixture): every control of issue #5.

Each test gets its own data dir and its own `Services` (job store, one worker, a GPU monitor
on a fake NVML), installed before the app's main file runs. Books are generated with
`epub_factory` and synthesised for real with the embedded Piper voice.
"""

from __future__ import annotations

import asyncio
import gc
import io
import json
import subprocess
import time
import weakref
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import httpx
import pynvml
import pytest
import soundfile as sf
from documents import make_documents
from epub_factory import build_epub, build_frankenstein_like, tiny_png
from nicegui import core, ui
from nicegui.testing import User
from test_gpu_monitor import NAME as FAKE_GPU_NAME
from test_gpu_monitor import FakeNvml
from tiny_supertonic import build_tiny_model
from ui_services import NO_CUDA, installed_services
from voices import SPEAKERS, add_multi_speaker_voice

from audiopub.audio.ffmpeg import ffmpeg_exe
from audiopub.book.epub.reader import read_epub
from audiopub.book.lexicons.lexicon import Entry, Lexicon, book_lexicon_path, user_lexicon_path
from audiopub.book.models import Book
from audiopub.book.pictures import image_size
from audiopub.book.reading import read_book
from audiopub.export.audiobookshelf import export_audiobookshelf
from audiopub.figures import approx_duration
from audiopub.jobs.models import JobSettings, JobState
from audiopub.jobs.submission import language_note
from audiopub.tts.engine import voice_of
from audiopub.tts.piper.files import embedded_voice
from audiopub.tts.registry import get_engine
from audiopub.ui.components.book_card import ROWS_PER_BATCH
from audiopub.ui.engine_catalog import GpuSupport
from audiopub.ui.services import Services

pytestmark = pytest.mark.nicegui_main_file("tests/ui_main.py")

SLOW_PARAGRAPH = (
    "The lighthouse keeper wrote every evening in a thick blue notebook, "
    "describing the weather, the ships and the birds that rested on the rail."
)


@pytest.fixture
def nvml() -> FakeNvml:
    return FakeNvml()


@pytest.fixture
def gpu_support() -> GpuSupport:
    return GpuSupport(False, NO_CUDA)


@pytest.fixture(scope="module")
def models_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """No Supertonic model. One folder for all tests: engines are cached per model folder."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(autouse=True)
def services(
    data_dir: Path,
    models_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    nvml: FakeNvml,
    gpu_support: GpuSupport,
    shared_model_cache: None,
) -> Iterator[Services]:
    """Runs before `user`, so the app's main file finds these services already installed.
    The run's model cache: a job's rewritten voice graph is made once, not in every test that
    converts (the rewrites are tested in test_conv_layout.py and test_half_precision.py)."""
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(models_dir))
    monkeypatch.delenv("AUDIOPUB_SUPERTONIC_DIR", raising=False)
    yield from installed_services(
        data_dir, monkeypatch, nvml=nvml, gpu_support=gpu_support, upload_limit_bytes=300_000
    )


@pytest.fixture
def small_book(tmp_path: Path) -> Path:
    return build_epub(
        tmp_path / "small.epub",
        [
            ("Chapter One", ["It was a bright cold day in April.", "The clocks struck thirteen."]),
            ("Chapter Two", ["The hallway smelt of cabbage."]),
            ("Appendix", ["Notes on the text."]),
        ],
        title="A Small Book",
        author="Ann Author",
        language="en",
        cover=tiny_png(),
    )


@pytest.fixture
def long_book(tmp_path: Path) -> Path:
    """Long enough (about half a minute of synthesis) to pause or cancel while it runs."""
    paragraphs = [f"{SLOW_PARAGRAPH} Entry {n}." for n in range(30)]
    return build_epub(tmp_path / "long.epub", [("Logbook", paragraphs)], title="Logbook")


# --- helpers ---------------------------------------------------------------------------------


# How long a test waits for the app to show what it should. Only a failing test waits this long;
# a machine busy with other work (a parallel run, another engineer's tests) can take many times
# longer than a quiet one to get there, and a short deadline made such waits flaky.
PATIENCE_S = 60.0


async def eventually(check: Callable[[], object], timeout: float = PATIENCE_S) -> None:
    """Poll `check` (an assertion or a predicate) while the app runs; fail after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if check() is not False:
                return
        except AssertionError:
            if time.monotonic() > deadline:
                raise
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.1)


async def see(user: User, timeout: float = PATIENCE_S, **filters: object) -> None:
    await eventually(
        lambda: user._sees(None, None, filters.get("marker"), filters.get("content")), timeout
    )


def element(user: User, marker: str) -> ui.element:
    found = user.find(marker=marker).elements
    assert len(found) == 1, f"{len(found)} elements marked {marker!r}"
    return next(iter(found))


def text(user: User, marker: str) -> str:
    return element(user, marker).text  # type: ignore[attr-defined]


async def press(user: User, marker: str, timeout: float = PATIENCE_S) -> None:
    """Click a button once the app has enabled it. NiceGUI's simulated user ignores a click on
    a disabled element, and a button waiting on work off the loop (the voices of an engine just
    chosen) can still be disabled when the test gets there: the click must not be lost."""
    await eventually(lambda: element(user, marker).enabled, timeout)
    user.find(marker=marker).click()


async def upload(
    user: User, path: Path | None = None, *, data: bytes | None = None, name: str | None = None
) -> None:
    uploader = element(user, "upload")
    payload = data if data is not None else path.read_bytes()  # type: ignore[union-attr]
    file = ui.upload.SmallFileUpload(name or path.name, "application/epub+zip", payload)  # type: ignore[union-attr]
    await uploader.handle_uploads([file])  # type: ignore[attr-defined]


async def open_with_book(user: User, book: Path) -> None:
    """The page with the book's card complete: its title comes first, and its chapters (in
    batches, the event loop getting turns between them) and their summary last."""
    await user.open("/")
    await see(user, marker="voice", content="en_US-joe-medium")
    await upload(user, book)
    await see(user, marker="book-title")
    await eventually(lambda: text(user, "book-summary") != "")


def only_job(services: Services) -> str:
    (job,) = services.store.queue.list_jobs()
    return job.id


async def job_state(user: User, state: str, timeout: float = 60.0) -> None:
    await eventually(lambda: text(user, "job-state") == state, timeout)


# --- upload and the book card ----------------------------------------------------------------


async def test_good_upload_shows_the_book_card(
    user: User, small_book: Path, services: Services
) -> None:
    await open_with_book(user, small_book)
    assert text(user, "book-title") == "A Small Book"
    assert text(user, "book-author") == "Ann Author"
    assert text(user, "book-language") == "en"
    with user.scope(marker="book-cover"):
        await user.should_see(kind=ui.image)
    await user.should_see("Chapter One")
    await user.should_see("Appendix")
    chars = [text(user, f"chapter-chars-{n}") for n in (1, 2, 3)]
    assert all(c.endswith(" chars") for c in chars), chars
    assert text(user, "chapter-duration-1").startswith("≈ ")
    # Set once every row is built, a turn of the event loop after the last batch.
    await eventually(lambda: text(user, "book-summary").startswith("3 of 3 chapters"))
    # The upload is kept under a random name; the client's file name is never a path.
    (saved,) = services.uploads_dir.iterdir()
    assert saved.name != "small.epub" and saved.suffix == ".epub" and len(saved.stem) == 32
    await user.should_not_see(marker="book-warnings")  # nothing to say about this one


@pytest.mark.parametrize("kind", ["txt", "pdf", "docx"])
async def test_a_book_in_another_format_shows_its_chapters(
    user: User, tmp_path: Path, services: Services, kind: str
) -> None:
    document = make_documents(tmp_path / "documents")[kind]
    book = read_book(document)
    await user.open("/")
    await upload(user, document, name=f"War of the Worlds.{kind}")
    await see(user, marker="book-title", timeout=60)
    assert text(user, "book-title") == "The War of the Worlds"
    assert text(user, "book-author") == "H. G. Wells"
    for chapter in book.chapters:
        await user.should_see(chapter.title)
    shown = f"{len(book.default_selection)} of {len(book.chapters)} chapters"
    await eventually(lambda: text(user, "book-summary").startswith(shown))
    (saved,) = services.uploads_dir.iterdir()  # kept with its extension, which tells a format
    assert saved.suffix == f".{kind}" and len(saved.stem) == 32


async def test_a_closed_tab_lets_go_of_its_book_at_once(
    user: User, small_book: Path, services: Services
) -> None:
    """A tab's page is a web of elements that refer to each other, freed only when Python next
    looks for such cycles: the book (its text, its cover) must not wait for that."""
    gc.collect()
    gc.disable()  # as between two of Python's full collections, which an idle server may not run
    try:
        # `type(o) is`, not isinstance: isinstance asks each object its __class__, and some
        # modules' objects (torch's deprecated aliases) warn when asked.
        earlier = {id(o) for o in gc.get_objects() if type(o) is Book}  # other tests' tabs
        await open_with_book(user, small_book)
        await eventually(lambda: text(user, "book-summary").startswith("3 of 3 chapters"))
        shown = [
            weakref.ref(o) for o in gc.get_objects() if type(o) is Book and id(o) not in earlier
        ]
        assert shown  # the tab holds its book
        element(user, "book-title").client.delete()
        assert [ref for ref in shown if ref() is not None] == [], "the book outlived its tab"
        assert not any(services.uploads_dir.iterdir())
    finally:
        gc.enable()


async def test_a_book_of_many_chapters_lists_them_all(user: User, tmp_path: Path) -> None:
    """The rows are built in batches, the event loop free in between; all of them arrive, and
    the book can be converted only once they have."""
    count = 2 * ROWS_PER_BATCH + 50
    book = build_epub(
        tmp_path / "many.epub",
        [(f"Part {n}", [f"Line {n}."]) for n in range(1, count + 1)],
        title="Many Parts",
    )
    await user.open("/")
    await see(user, marker="voice", content="en_US-joe-medium")
    rows_seen: set[int] = set()  # how many rows there were whenever the loop had a turn

    async def watch() -> None:
        while True:
            rows_seen.add(
                sum(
                    1
                    for el in user.find(kind=ui.checkbox).elements
                    if any(m.startswith("chapter-") for m in el._markers)
                )
            )
            await asyncio.sleep(0)

    watcher = asyncio.create_task(watch())
    try:
        await upload(user, book)
        await see(user, marker="book-summary", content=f"{count} of {count} chapters")
    finally:
        watcher.cancel()
    assert ROWS_PER_BATCH in rows_seen and 2 * ROWS_PER_BATCH in rows_seen, sorted(rows_seen)
    assert text(user, f"chapter-chars-{count}").endswith(" chars")
    assert len(user.find(kind=ui.checkbox, marker=f"chapter-{count}").elements) == 1


async def test_the_cover_is_a_thumbnail_served_by_url(
    user: User, tmp_path: Path, services: Services
) -> None:
    """The page gets a small picture by URL, never the cover itself as a data: URI (a 100 MB
    one hung the page); the thumbnail goes when the book does."""
    picture = tmp_path / "cover.png"
    subprocess.run(
        [
            ffmpeg_exe(),
            "-hide_banner",
            "-loglevel",
            "error",
            "-nostdin",
            "-f",
            "lavfi",
            "-i",
            "color=c=navy:s=2000x1500",
            "-frames:v",
            "1",
            str(picture),
        ],
        check=True,
    )
    book = build_epub(
        tmp_path / "wide.epub",
        [("One", ["A line."])],
        title="Wide Cover",
        cover=picture.read_bytes(),
    )
    await open_with_book(user, book)
    with user.scope(marker="book-cover"):
        (image,) = user.find(kind=ui.image).elements
    source = image.source  # type: ignore[attr-defined]
    assert source.startswith("/covers/"), source[:40]
    response = await user.http_client.get(source)
    assert response.status_code == 200 and response.headers["content-type"] == "image/png"
    assert image_size(response.content) == (480, 360)
    for wrong in ("/covers/..%2Fjobs.sqlite3", "/covers/" + "0" * 32 + ".png", "/covers/x.png"):
        assert (await user.http_client.get(wrong)).status_code == 404, wrong

    user.find(marker="another-book").click()
    await eventually(lambda: not list((services.data_dir / "cover-thumbnails").iterdir()))
    assert (await user.http_client.get(source)).status_code == 404


async def test_what_reading_left_out_is_shown_with_the_book(
    user: User,
    small_book: Path,
    tmp_path: Path,
    services: Services,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """A book read with a problem (here: no mimetype entry) says so beside its chapters, and
    the server's log names the file as the person called it, not by the upload's random name."""
    flawed = tmp_path / "flawed.epub"
    with zipfile.ZipFile(small_book) as source, zipfile.ZipFile(flawed, "w") as target:
        for item in source.infolist():
            if item.filename != "mimetype":
                target.writestr(item, source.read(item))
    await open_with_book(user, flawed)
    await see(user, marker="book-warnings")
    assert "1 note on reading this book" in element(user, "book-warnings").props["label"]
    (warning,) = [e.text for e in user.find(marker="book-warning").elements]
    assert warning == "The archive has no “mimetype” entry; it was read as an EPUB anyway."
    (saved,) = services.uploads_dir.iterdir()
    log = capfd.readouterr().err  # the reader's process writes to the server's stderr
    assert f"flawed.epub: {warning}" in log and saved.stem not in log


async def test_a_book_without_a_title_is_called_by_its_file_name(
    user: User, tmp_path: Path
) -> None:
    untitled = build_epub(tmp_path / "book.epub", [("One", ["A line."])], title="")
    await user.open("/")
    await upload(user, untitled, name="My Holiday.epub")
    await see(user, marker="book-title")
    assert text(user, "book-title") == "My Holiday"


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (b"this is not a zip file", "not an EPUB"),
        (b"", "is empty"),
        (b"x" * 300_001, "the limit is 300 kB"),
    ],
)
async def test_bad_uploads_get_a_clear_message(
    user: User, payload: bytes, expected: str, services: Services
) -> None:
    await user.open("/")
    await upload(user, data=payload, name="../../evil name.epub")
    await see(user, marker="upload-error")
    message = text(user, "upload-error")
    assert expected.lower() in message.lower() and "Traceback" not in message, message
    assert "evil name.epub" in message and "../" not in message
    await user.should_see(marker="upload")
    assert not services.uploads_dir.exists() or not any(services.uploads_dir.iterdir())
    assert not element(user, "generate").enabled


async def test_epub_without_text_is_refused(user: User, tmp_path: Path) -> None:
    empty = build_epub(tmp_path / "blank.epub", [("", [])], title="Blank")
    await user.open("/")
    await upload(user, empty)
    await see(user, marker="upload-error")
    assert "blank.epub has no text to narrate" in text(user, "upload-error")


async def test_chapter_selection(user: User, small_book: Path, services: Services) -> None:
    await open_with_book(user, small_book)
    user.find(marker="chapter-3").click()
    assert text(user, "book-summary").startswith("2 of 3 chapters")
    user.find(marker="select-none").click()
    assert text(user, "book-summary").startswith("No chapters selected")
    assert not element(user, "generate").enabled
    assert text(user, "generate-hint") == "Tick at least one chapter."
    user.find(marker="select-all").click()
    user.find(marker="chapter-2").click()
    assert element(user, "generate").enabled
    await press(user, "generate")
    await eventually(lambda: len(services.store.queue.list_jobs()) == 1)
    job = services.store.queue.get_job(only_job(services))
    assert job.settings.chapters == (1, 3)
    await job_state(user, "Done")
    assert [c.title for c in services.store.ledger.chapters(job.id)] == ["Chapter One", "Appendix"]


async def test_title_pages_are_listed_unticked(
    user: User, tmp_path: Path, services: Services
) -> None:
    await open_with_book(user, build_frankenstein_like(tmp_path / "pg84.epub"))
    boxes = [element(user, f"chapter-{n}") for n in range(1, 5)]
    assert [box.value for box in boxes] == [False, False, True, True]  # type: ignore[attr-defined]
    await eventually(lambda: text(user, "book-summary").startswith("2 of 4 chapters"))
    await press(user, "generate")
    await eventually(lambda: len(services.store.queue.list_jobs()) == 1)
    assert services.store.queue.get_job(only_job(services)).settings.chapters == (3, 4)


# --- settings --------------------------------------------------------------------------------


async def test_engines_voices_and_unavailable_engines(user: User) -> None:
    await user.open("/")
    await see(user, marker="voice", content="en_US-joe-medium")
    engine = element(user, "engine")
    assert engine.value == "piper" and engine.options == {  # type: ignore[attr-defined]
        "piper": "Piper",
        "supertonic": "Supertonic (not installed)",
        "kokoro": "Kokoro (not installed)",
    }
    # Piper takes no inference steps: the slider is not offered.
    await user.should_not_see(marker="steps")
    # Nothing is said of Supertonic while Piper is chosen; picked, it says where to get it.
    await user.should_not_see(marker="engine-unavailable-supertonic")
    engine.value = "supertonic"  # type: ignore[attr-defined]
    await see(user, marker="engine-unavailable-supertonic")
    with user.scope(marker="engine-unavailable-supertonic"):
        await user.should_see("Supertonic is not installed.")
        assert user.find("Get it on the Voices page").elements.pop().props["href"] == "/voices"
    await user.should_not_see("supertonic-3")  # no folder path: the Voices page installs it
    assert not element(user, "generate").enabled
    engine.value = "piper"  # type: ignore[attr-defined]
    await user.should_not_see(marker="engine-unavailable-supertonic")


async def test_a_voice_dropped_into_the_models_folder_shows_without_a_restart(
    user: User, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = tmp_path / "models"  # not the module's shared folder: this test adds a voice
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(models))
    await user.open("/")
    await see(user, marker="voice", content="en_US-joe-medium")
    assert list(element(user, "voice").options) == ["en_US-joe-medium"]  # type: ignore[attr-defined]

    # A Piper voice is NAME.onnx + NAME.onnx.json; the embedded voice's files will do.
    joe = embedded_voice()
    (models / "piper").mkdir(parents=True)
    (models / "piper" / "en_GB-dropped-medium.onnx").symlink_to(joe.model)
    (models / "piper" / "en_GB-dropped-medium.onnx.json").symlink_to(joe.config)
    await user.open("/")  # the same app, the page opened again
    voice = element(user, "voice")
    await eventually(lambda: "en_GB-dropped-medium" in voice.options)  # type: ignore[attr-defined]


async def test_each_speaker_of_a_multi_speaker_voice_is_a_choice_and_speaks_the_job(
    user: User,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    small_book: Path,
    services: Services,
) -> None:
    models = tmp_path / "models"  # not the module's shared folder: this test adds a voice
    add_multi_speaker_voice(models / "piper", "en_GB-tiny-medium")
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(models))
    await open_with_book(user, small_book)
    options = element(user, "voice").options  # type: ignore[attr-defined]
    assert options == {
        "en_US-joe-medium": "en_US-joe-medium · en-US",
        **{f"en_GB-tiny-medium#{s}": f"en_GB-tiny-medium (speaker {s}) · en-GB" for s in SPEAKERS},
    }
    user.find(marker="voice").click()
    user.find("en_GB-tiny-medium (speaker p264) · en-GB").click()
    assert services.preferences.get().voice == "en_GB-tiny-medium#p264"
    await press(user, "generate")
    await eventually(lambda: len(services.store.queue.list_jobs()) == 1)
    job_id = only_job(services)
    assert services.store.queue.get_job(job_id).settings.voice == "en_GB-tiny-medium#p264"
    await job_state(user, "Done")
    chunk = services.store.ledger.all_chunks(job_id)[0]
    assert chunk.audio_path is not None
    audio, _ = sf.read(services.store.job_dir(job_id) / chunk.audio_path)
    assert audio.mean() < -0.2  # p264's own offset in the tiny graph: that speaker spoke


async def test_voice_preview_plays_in_the_page(user: User) -> None:
    await user.open("/")
    await see(user, marker="voice", content="en_US-joe-medium")
    await user.should_not_see(marker="preview-audio")
    user.find(marker="preview").click()
    await see(user, marker="preview-audio")
    source = element(user, "preview-audio").props["src"]
    assert source.startswith("data:audio/wav;base64,") and len(source) > 10_000


async def test_speed_updates_estimates_and_settings_persist(
    user: User, small_book: Path, services: Services
) -> None:
    await open_with_book(user, small_book)
    before = text(user, "chapter-duration-1")
    element(user, "speed").value = 2.0  # type: ignore[attr-defined]
    await eventually(lambda: text(user, "speed-value") == "2.00×")
    assert text(user, "chapter-duration-1") != before
    saved = json.loads((services.data_dir / "ui-settings.json").read_text())
    assert saved["speed"] == 2.0 and saved["engine"] == "piper"
    await user.open("/")  # a later visit
    await see(user, marker="voice", content="en_US-joe-medium")
    assert element(user, "speed").value == 2.0  # type: ignore[attr-defined]


@pytest.fixture
def tiny_supertonic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    model = build_tiny_model(tmp_path / "supertonic")
    monkeypatch.setenv("AUDIOPUB_SUPERTONIC_DIR", str(model))  # engines are cached per folder
    yield model


async def test_steps_slider_only_for_engines_that_use_steps(
    user: User, tiny_supertonic: Path, services: Services
) -> None:
    await user.open("/")
    await see(user, marker="voice", content="en_US-joe-medium")
    await user.should_not_see(marker="steps")
    user.find(marker="engine").click()
    user.find("Supertonic").click()
    await see(user, marker="steps")
    steps = element(user, "steps")
    assert steps.value == 16 and (steps.props["min"], steps.props["max"]) == (2, 128)  # type: ignore[attr-defined]
    assert element(user, "voice").value == "F1"  # type: ignore[attr-defined]
    steps.value = 32  # type: ignore[attr-defined]
    await eventually(lambda: text(user, "steps-value") == "32")
    assert services.preferences.get().steps == 32
    assert services.preferences.get().engine == "supertonic"
    user.find(marker="engine").click()
    user.find("Piper").click()
    await user.should_not_see(marker="steps")


async def test_gpu_switch_is_disabled_with_the_reason(user: User) -> None:
    await user.open("/")
    await see(user, marker="gpu-reason", content=NO_CUDA)
    switch = element(user, "gpu")
    assert not switch.enabled and switch.value is False  # type: ignore[attr-defined]
    user.find(marker="gpu").click()  # a disabled switch ignores clicks
    assert switch.value is False  # type: ignore[attr-defined]


@pytest.mark.parametrize("gpu_support", [GpuSupport(True)])
@pytest.mark.usefixtures("cuda_fails_to_load")
async def test_gpu_switch_shows_what_really_ran(
    user: User, small_book: Path, services: Services
) -> None:
    await open_with_book(user, small_book)
    await eventually(lambda: element(user, "gpu").enabled)
    user.find(marker="gpu").click()
    assert services.preferences.get().use_gpu is True
    await press(user, "generate")
    await job_state(user, "Done", timeout=240)
    assert services.store.queue.get_job(only_job(services)).settings.use_gpu
    # The switch was offered, but CUDA does not load: the job says it ran on the CPU, and why.
    device = text(user, "job-device")
    assert device.startswith("Ran on: CPU — GPU requested but unavailable"), device


async def test_dark_mode_cycles_and_is_remembered(user: User, services: Services) -> None:
    await user.open("/")
    user.find(marker="dark-toggle").click()
    assert services.preferences.get().dark is True
    user.find(marker="dark-toggle").click()
    assert services.preferences.get().dark is False
    await user.open("/library")
    assert element(user, "dark-toggle").props["icon"] == "light_mode"


# --- jobs ------------------------------------------------------------------------------------


async def test_generate_progress_done_download_library(
    user: User, small_book: Path, services: Services, tmp_path: Path
) -> None:
    await open_with_book(user, small_book)
    await press(user, "generate")
    # Submitting loads the job's engine.
    await see(user, marker="job", timeout=240)
    await job_state(user, "Done")
    job_id = only_job(services)
    assert text(user, "job-percent") == "100%"
    assert text(user, "job-rate").endswith("chars/s")
    assert float(text(user, "job-rtf")) > 0
    assert text(user, "job-device") == "Ran on: CPU"
    assert ":" in text(user, "job-elapsed")
    with user.scope(marker="job-log"):
        await see(user, content="Finished")
    with user.scope(marker="job-chapters"):
        await user.should_see("Chapter Two")
    # Telemetry from the store: per-chapter speed and stages, the job's own stages.
    await eventually(lambda: "encode" in text(user, "job-stages"))
    assert text(user, "job-stages").startswith("Job stages: prepare ")
    figures = [e.text for e in user.find(marker="job-chapter-figures").elements]
    assert len(figures) == 3 and all(
        "chars/s · real-time factor " in f
        and " model " in f
        and "stitch" in f
        and "(engine time: each engine process's seconds added up)" in f
        for f in figures
    ), figures

    user.find(marker="job-download").click()
    response = await user.download.next(timeout=PATIENCE_S)
    assert response.status_code == 200 and response.content[4:8] == b"ftyp"
    disposition = response.headers["content-disposition"]
    assert disposition.startswith("attachment;") and "A%20Small%20Book.m4b" in disposition

    await user.open("/library")
    await see(user, marker=f"book-{job_id}")
    assert "3 chapters" in text(user, "book-facts")
    user.find(marker="book-play").click()
    await user.should_see(marker="book-audio")
    player = element(user, "book-audio").props
    assert player["src"] == f"/library/{job_id}/audio" and player["autoplay"]  # from the start
    assert text(user, "book-play") == "Stop"  # it stops what it started
    user.find(marker="book-chapter-2").click()  # seeks the player to the chapter's start
    # Read along: the sentence heard at the player's time shows under it.
    cues = services.library.book_cues(job_id)
    second = cues[1]
    user.find(marker="book-audio").trigger("timeupdate", (second.start_s + second.end_s) / 2)
    assert text(user, "book-sentence") == second.text.replace("\n", " ")
    user.find(marker="book-subtitles-srt").click()
    subtitles = await user.download.next(timeout=PATIENCE_S)
    # The first words come after the chapter's room tone at its head.
    assert subtitles.content.decode("utf-8").startswith("1\n00:00:00,750 --> ")
    # Exports made from the kept audio, then downloaded.
    user.find(marker="book-export-epub").click()
    epub = await user.download.next(timeout=60)
    assert epub.status_code == 200 and epub.content[30:38] == b"mimetype"
    with zipfile.ZipFile(io.BytesIO(epub.content)) as book:
        assert any(name.endswith(".smil") for name in book.namelist())
    user.find(marker="book-export-mp3").click()
    chapters = await user.download.next(timeout=60)
    with zipfile.ZipFile(io.BytesIO(chapters.content)) as archive:
        assert archive.namelist() == [
            "A Small Book/01 - Chapter One.mp3",
            "A Small Book/02 - Chapter Two.mp3",
            "A Small Book/03 - Appendix.mp3",
        ]
    user.find(marker="book-export-mp3-book").click()
    whole = await user.download.next(timeout=60)
    assert whole.status_code == 200 and whole.content[:3] == b"ID3"  # tags and chapters
    user.find(marker="book-export-opus").click()
    opus = await user.download.next(timeout=60)
    with zipfile.ZipFile(io.BytesIO(opus.content)) as archive:
        assert archive.namelist()[0] == "A Small Book/01 - Chapter One.opus"
    # The Audiobookshelf folder, exactly as `audiopub export --audiobookshelf` writes it.
    user.find(marker="book-export-audiobookshelf").click()
    shelf = await user.download.next(timeout=60)
    cli = export_audiobookshelf(services.store, job_id, tmp_path / "shelf")
    written = sorted(p for p in cli.rglob("*") if p.is_file())
    with zipfile.ZipFile(io.BytesIO(shelf.content)) as archive:
        assert archive.namelist() == [p.relative_to(tmp_path / "shelf").as_posix() for p in written]
        assert archive.namelist()[:2] == [
            "Ann Author/A Small Book/A Small Book.m4b",
            "Ann Author/A Small Book/cover.jpg",
        ]
        assert all(
            archive.read(p.relative_to(tmp_path / "shelf").as_posix()) == p.read_bytes()
            for p in written
        )
    exports = [
        services.library.export_path(services.store.queue.get_job(job_id), kind)
        for kind in ("epub", "mp3", "mp3-book", "opus", "audiobookshelf")
    ]
    assert all(path.is_file() for path in exports)
    played = await user.http_client.get(f"/library/{job_id}/audio", headers={"Range": "bytes=0-99"})
    assert played.status_code == 206 and len(played.content) == 100

    output = services.store.queue.get_job(job_id).output_path
    user.find(marker="book-delete").click()
    await see(user, marker="confirm-delete")
    user.find(marker="confirm-delete").click()
    await eventually(lambda: not services.store.queue.list_jobs())
    await see(user, marker="library-empty")
    assert not output.exists()
    assert not any(path.exists() for path in exports)


async def test_forms_chosen_before_converting_are_offered_in_the_library(
    user: User, small_book: Path, services: Services
) -> None:
    await open_with_book(user, small_book)
    # The hint speaks of the book once every chapter row is built (on a busy machine, after
    # the title shows).
    await eventually(lambda: text(user, "book-summary").startswith("3 of 3 chapters"))
    # A combination the command line refuses is refused here, with its words.
    set_value(user, "forms-split", "chapters")
    refusal = "An .m4b is one file with chapters: for a file per chapter, choose --format"
    assert text(user, "forms-error").startswith(refusal)
    assert not element(user, "generate").enabled
    assert text(user, "generate-hint").startswith(refusal)
    set_value(user, "forms-audio", "opus")
    set_value(user, "forms-split", "none")
    assert text(user, "forms-error").startswith("One opus file for the whole book is not")
    set_value(user, "forms-audio", "mp3")
    set_value(user, "forms-split", "chapters")
    set_value(user, "forms-srt", True)
    assert element(user, "generate").enabled and text(user, "generate-hint") == ""

    await press(user, "generate")
    await job_state(user, "Done")
    job = services.store.queue.get_job(only_job(services))
    assert job.settings.forms == {
        "audio_format": "mp3",
        "split": "chapters",
        "subtitles": ["srt"],
        "read_along": False,
    }
    # The finished job says where they are.
    assert text(user, "job-library") == (
        "Listen in the library (and get MP3 (VBR), a file per chapter; .srt subtitles)"
    )
    spoken = [(c.cache_key, c.done_at) for c in services.store.ledger.all_chunks(job.id)]

    # The library makes them from the book's audio on its first view, then offers each.
    await user.open("/library")
    await see(user, marker="book-form-1", timeout=60)
    assert [e.text for e in user.find(marker="book-form-0").elements] == [
        "A Small Book chapters.zip"
    ]
    user.find(marker="book-form-0").click()
    chapters = await user.download.next(timeout=PATIENCE_S)
    assert "A%20Small%20Book%20chapters.zip" in chapters.headers["content-disposition"]
    with zipfile.ZipFile(io.BytesIO(chapters.content)) as archive:
        assert archive.namelist() == [
            f"A Small Book chapters/{number:02d} - {title}.{suffix}"
            for number, title in enumerate(("Chapter One", "Chapter Two", "Appendix"), 1)
            for suffix in ("mp3", "srt")
        ]
        assert archive.read("A Small Book chapters/01 - Chapter One.mp3")[:3] == b"ID3"
    user.find(marker="book-form-1").click()
    subtitles = await user.download.next(timeout=PATIENCE_S)
    assert "A%20Small%20Book.srt" in subtitles.headers["content-disposition"]
    assert subtitles.content.decode("utf-8") == services.library.subtitles(job.id, "srt")
    # Nothing was spoken again, and a second view offers what the first one made.
    assert [(c.cache_key, c.done_at) for c in services.store.ledger.all_chunks(job.id)] == spoken
    made = sorted(p.name for p in job.output_path.parent.iterdir())
    await user.open("/library")
    await see(user, marker="book-form-1")
    assert sorted(p.name for p in job.output_path.parent.iterdir()) == made
    missing = await user.http_client.get(f"/library/{job.id}/forms/2")
    assert missing.status_code == 404

    user.find(marker="book-delete").click()
    await see(user, marker="confirm-delete")
    user.find(marker="confirm-delete").click()
    await eventually(lambda: not services.store.queue.list_jobs())
    # The book's files go just after the job leaves the list (`JobControl.delete`).
    await eventually(
        lambda: (
            not any(
                p.name.startswith(job.output_path.stem) for p in job.output_path.parent.iterdir()
            )
        )
    )


async def test_a_book_not_in_the_voices_language_is_said_on_its_job_card(
    user: User, tmp_path: Path, services: Services
) -> None:
    book = build_epub(
        tmp_path / "fr.epub", [("Un", ["Le train arriva."])], title="Le Train", language="fr"
    )
    await open_with_book(user, book)
    await press(user, "generate")
    await see(user, marker="job-language-note", timeout=240)
    note = text(user, "job-language-note")
    # The same words as the command line's warning.
    assert note == language_note("fr", voice_of(get_engine("piper"), "en_US-joe-medium"))
    assert "pronounced as English" in note and "piper:fr_FR-siwis-medium" in note
    await job_state(user, "Done", timeout=180)


async def test_cancel_a_running_job(user: User, long_book: Path, services: Services) -> None:
    await open_with_book(user, long_book)
    await press(user, "generate")
    await job_state(user, "Running")
    await eventually(lambda: services.store.ledger.progress(only_job(services)).chunks_done > 0)
    user.find(marker="job-cancel").click()
    await job_state(user, "Cancelled")
    assert services.store.queue.get_job(only_job(services)).state is JobState.CANCELLED
    await eventually(lambda: element(user, "job-delete").enabled)  # the worker has let go
    user.find(marker="job-delete").click()
    await see(user, marker="confirm-delete")
    user.find(marker="confirm-delete").click()
    await eventually(lambda: not services.store.queue.list_jobs())
    await see(user, marker="job-list-empty")


async def test_pause_and_resume(user: User, long_book: Path, services: Services) -> None:
    await open_with_book(user, long_book)
    await press(user, "generate")
    await job_state(user, "Running")
    user.find(marker="job-pause").click()
    await job_state(user, "Paused")
    await user.should_not_see(marker="job-pause")
    await eventually(lambda: element(user, "job-resume").enabled)  # the worker has let go
    assert services.worker.current_job is None
    user.find(marker="job-resume").click()
    await eventually(lambda: text(user, "job-state") in ("Queued", "Running"))
    await job_state(user, "Running")
    user.find(marker="job-cancel").click()
    await job_state(user, "Cancelled")


async def test_the_estimate_is_a_guess_until_the_voice_has_finished_a_book_then_its_pace(
    user: User, small_book: Path, services: Services
) -> None:
    await open_with_book(user, small_book)
    assert text(user, "book-summary").endswith(
        "of audio (a rough guess, until this voice has finished a book)"
    )
    await press(user, "generate")
    await eventually(lambda: len(services.store.queue.list_jobs()) == 1)
    await job_state(user, "Done")
    made_s = sum(c.duration_s or 0.0 for c in services.store.ledger.chapters(only_job(services)))

    await open_with_book(user, small_book)  # the same book again: its estimate is what it made
    assert text(user, "book-summary").endswith(
        f"{approx_duration(made_s)} of audio (at this voice's pace in the books it finished)"
    )


async def test_closing_the_tab_never_stops_a_job_and_every_tab_sees_it(
    user: User, small_book: Path, services: Services
) -> None:
    await open_with_book(user, small_book)
    await press(user, "generate")
    await see(user, marker="job")
    await user.open("/library")  # the convert page (its client, its timers) goes away
    job_id = only_job(services)
    await eventually(lambda: services.store.queue.get_job(job_id).state is JobState.DONE, 60)
    other = User(
        httpx.AsyncClient(transport=httpx.ASGITransport(core.app), base_url="http://test")
    )  # a second tab
    for tab in (user, other):
        await tab.open("/")
        await see(tab, marker="job-state", content="Done")
        assert text(tab, "job-percent") == "100%"


async def test_a_reopened_page_shows_jobs_made_elsewhere(
    user: User, small_book: Path, services: Services
) -> None:
    """Jobs live in the store, not in a tab: a job queued by another tab or the CLI shows up."""
    await user.open("/")
    await see(user, marker="job-list-empty")
    book = replace(read_epub(small_book), title="From elsewhere")
    services.store.queue.create_job(
        small_book,
        services.library.folder / "x.m4b",
        JobSettings(voice="en_US-joe-medium"),
        book=book,
    )
    await user.open("/")
    await see(user, marker="job-title", content="From elsewhere")


# --- GPU panel -------------------------------------------------------------------------------


async def test_gpu_panel_with_one_gpu(user: User) -> None:
    await user.open("/")
    await see(user, marker="gpu-0-name", content=FAKE_GPU_NAME)
    assert text(user, "gpu-0-vram") == "1.0 / 24.0 GiB"
    assert text(user, "gpu-0-temp") == "45 °C"
    assert text(user, "gpu-0-util") == "37 %"
    assert text(user, "gpu-0-power") == "120 W"
    chart = element(user, "gpu-0-chart")
    await eventually(lambda: len(chart.options["series"][0]["data"]) >= 2, timeout=5)  # type: ignore[attr-defined]
    await user.should_not_see(marker="gpu-status")


def _failing_nvml() -> FakeNvml:
    fake = FakeNvml()
    fake.init_error = pynvml.NVMLError_DriverNotLoaded
    return fake


@pytest.mark.parametrize("nvml", [_failing_nvml()])
async def test_gpu_panel_without_nvml(user: User) -> None:
    await user.open("/")
    await see(user, marker="gpu-status", content="No NVIDIA GPU detected")
    assert "driver is not loaded" in text(user, "gpu-none-reason")
    await user.should_not_see(marker="gpu-warning")


# --- safety ----------------------------------------------------------------------------------


async def test_books_are_found_by_job_id_only(user: User) -> None:
    await user.open("/")
    for path in (
        "/library/not-a-job/download",
        "/library/..%2F..%2Fetc%2Fpasswd/download",
        f"/library/{'0' * 32}/download",
        f"/library/{'0' * 32}/audio",
    ):
        response = await user.http_client.get(path)
        assert response.status_code == 404, path


async def test_the_pages_stylesheet_and_icon_are_served(user: User) -> None:
    """They live in the repository's top-level static/ folder; the app serves them."""
    await user.open("/")
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(core.app), base_url="http://test"
    ) as client:
        css = await client.get("/static/audiopub.css")
        icon = await client.get("/static/icon.svg")
    root = Path(__file__).resolve().parents[1] / "static"
    assert css.status_code == 200 and css.content == (root / "audiopub.css").read_bytes()
    assert icon.status_code == 200 and icon.content == (root / "icon.svg").read_bytes()


async def test_the_books_names_to_check_are_listed_under_it(user: User, tmp_path: Path) -> None:
    book = build_epub(
        tmp_path / "names.epub",
        [
            (
                "One",
                [
                    "The ship left port with Captain Quillfeather aboard.",
                    "Nobody doubted Quillfeather, and the crew trusted Quillfeather.",
                    "Then the storm came.",
                ],
            ),
        ],
        title="Names Book",
    )
    await open_with_book(user, book)
    await see(user, marker="book-names", content="Names to check: Quillfeather")
    with user.scope(marker="book-names"):
        await user.should_see("Quillfeather")
        await user.should_see("3×")  # as often as the book says it
        await user.should_see("The ship left port with Captain Quillfeather aboard.")  # example


# --- the book's lexicon: editor, Hear it -----------------------------------------------------

NAMES_CHAPTERS = [
    (
        "One",
        [
            "The ship left port with Captain Quillfeather aboard.",
            "Nobody doubted Quillfeather, and the crew trusted Quillfeather.",
            "Then the storm came.",
        ],
    )
]
NAME_EXAMPLE = "The ship left port with Captain Quillfeather aboard."


@pytest.fixture
def names_book(tmp_path: Path) -> Path:
    return build_epub(tmp_path / "names.epub", NAMES_CHAPTERS, title="Names Book")


@dataclass(frozen=True)
class Said:
    texts: list[str]
    entries: list[Entry]
    language: str | None


@pytest.fixture
def said(services: Services, monkeypatch: pytest.MonkeyPatch) -> list[Said]:
    """What the page asked `Services.say` to speak, which still speaks it for real."""
    calls: list[Said] = []
    real = services.previews.say

    def say(
        texts: Sequence[str],
        engine: str,
        voice: str,
        speed: float,
        steps: int,
        lexicon_entries: Sequence[Entry] = (),
        language: str | None = None,
    ) -> bytes:
        calls.append(Said(list(texts), list(lexicon_entries), language))
        return real(texts, engine, voice, speed, steps, lexicon_entries, language)

    monkeypatch.setattr(services.previews, "say", say)
    return calls


async def notified(user: User, message: str) -> None:
    await eventually(lambda: user.notify.contains(message))
    user.notify.messages.clear()  # the next save must say so again


def set_value(user: User, marker: str, value: object) -> None:
    element(user, marker).value = value  # type: ignore[attr-defined]


async def open_lexicon(user: User, book: Path) -> None:
    await open_with_book(user, book)
    await eventually(lambda: element(user, "lexicon-save").enabled)  # the file is loaded


async def test_the_book_lexicon_editor_loads_edits_and_saves_the_file(
    user: User, names_book: Path, services: Services
) -> None:
    path = book_lexicon_path(services.data_dir, names_book)
    path.parent.mkdir(parents=True)
    path.write_text("# the captain\nQuillfeather\tKwill-feather\n\n# the end\n", "utf-8")
    await open_lexicon(user, names_book)
    assert element(user, "lexicon-written-1").value == "Quillfeather"  # type: ignore[attr-defined]
    assert element(user, "lexicon-say-1").value == "Kwill-feather"  # type: ignore[attr-defined]
    assert text(user, "lexicon-path") == str(path)
    await user.should_not_see(marker="lexicon-unsaved")

    set_value(user, "lexicon-say-1", "Kwill-fether")
    user.find(marker="lexicon-add").click()
    set_value(user, "lexicon-written-2", "NASA")
    set_value(user, "lexicon-say-2", "nasa")
    user.find(marker="lexicon-case-2").click()
    user.find(marker="lexicon-add").click()  # left empty: not written
    await user.should_see(marker="lexicon-unsaved")
    # A job reads the file, not the page: Generate says so, and still works.
    assert "lexicon has changes not saved yet" in text(user, "generate-hint")
    assert element(user, "generate").enabled
    user.find(marker="lexicon-save").click()
    await notified(user, "Saved 2 entries")
    assert path.read_text("utf-8") == (
        "# the captain\nQuillfeather\tKwill-fether\nNASA\tnasa\tcase\n\n# the end\n"
    )
    await user.should_not_see(marker="lexicon-unsaved")
    assert text(user, "generate-hint") == ""

    user.find(marker="lexicon-delete-1").click()  # its comment stays, over the next entry
    user.find(marker="lexicon-save").click()
    await notified(user, "Saved 1 entry")
    assert path.read_text("utf-8") == "# the captain\nNASA\tnasa\tcase\n\n# the end\n"


@pytest.mark.parametrize(
    ("written", "say", "regex", "message"),
    [
        ("Zorg", "/zɔːɹ₮/", False, "row 1: 'Zorg' → '/zɔːɹ₮/': the voice has no phoneme '₮'"),
        ("colo(u", "color", True, "row 1: 'colo(u' is not a regular expression"),
        ("Quillfeather", "", False, "row 1: say how 'Quillfeather' is said"),
        ("#tag", "hashtag", False, "row 1: a written form cannot start with '#'"),
    ],
)
async def test_a_bad_entry_shows_its_message_and_nothing_is_written(
    user: User,
    names_book: Path,
    services: Services,
    written: str,
    say: str,
    regex: bool,
    message: str,
) -> None:
    await open_lexicon(user, names_book)
    user.find(marker="lexicon-add").click()
    set_value(user, "lexicon-written-1", written)
    set_value(user, "lexicon-say-1", say)
    set_value(user, "lexicon-regex-1", regex)
    user.find(marker="lexicon-save").click()
    await see(user, marker="lexicon-error")
    path = book_lexicon_path(services.data_dir, names_book)
    assert text(user, "lexicon-error").startswith(f"{path}:{message}")
    assert not path.exists()
    await user.should_see(marker="lexicon-unsaved")
    # Fixed, it saves, and the message goes.
    set_value(user, "lexicon-written-1", "Zorg")
    set_value(user, "lexicon-say-1", "zorg")
    set_value(user, "lexicon-regex-1", False)
    user.find(marker="lexicon-save").click()
    await notified(user, "Saved 1 entry")
    await user.should_not_see(marker="lexicon-error")
    assert path.read_text("utf-8") == "Zorg\tzorg\n"


async def test_a_file_the_editor_cannot_show_is_left_alone(
    user: User, names_book: Path, services: Services
) -> None:
    path = book_lexicon_path(services.data_dir, names_book)
    path.parent.mkdir(parents=True)
    path.write_text("Zorg\tzorg\tloud\n", "utf-8")
    await open_with_book(user, names_book)
    await see(user, marker="lexicon-error", content="unknown option 'loud'")
    assert "can't be edited here until it is fixed" in text(user, "lexicon-error")
    assert not element(user, "lexicon-save").enabled
    path.write_text("Zorg\tzorg\n", "utf-8")  # fixed by hand: Reload picks it up
    user.find(marker="lexicon-reload").click()
    await eventually(lambda: element(user, "lexicon-save").enabled)
    assert element(user, "lexicon-say-1").value == "zorg"  # type: ignore[attr-defined]
    await user.should_not_see(marker="lexicon-error")


async def test_hear_it_speaks_the_word_and_its_sentence_with_the_unsaved_entry(
    user: User, names_book: Path, services: Services, said: list[Said]
) -> None:
    user_file = user_lexicon_path(services.data_dir)
    user_file.parent.mkdir(parents=True, exist_ok=True)
    user_file.write_text("Quillfeather\tQuill\nCaptain\tCap'n\n", "utf-8")
    await open_lexicon(user, names_book)
    await user.should_not_see(marker="lexicon-audio")
    user.find(marker="name-fix-Quillfeather").click()  # a row for it, to fill in
    assert element(user, "lexicon-written-1").value == "Quillfeather"  # type: ignore[attr-defined]
    set_value(user, "lexicon-say-1", "Kwill-feather")
    user.find(marker="lexicon-hear-1").click()
    await see(user, marker="lexicon-audio")
    source = element(user, "lexicon-audio").props["src"]
    assert source.startswith("data:audio/wav;base64,") and len(source) > 10_000
    (call,) = said
    assert call.texts == ["Quillfeather", NAME_EXAMPLE] and call.language == "en"
    # Layered as a job would: the editor's rows (the book's scope) before the user's file.
    assert [(e.written, e.say) for e in call.entries] == [
        ("Quillfeather", "Kwill-feather"),
        ("Quillfeather", "Quill"),
        ("Captain", "Cap'n"),
    ]
    spoken = Lexicon(call.entries, None).speak(NAME_EXAMPLE, str)
    assert spoken == "The ship left port with Cap'n Kwill-feather aboard."
    assert not book_lexicon_path(services.data_dir, names_book).exists()  # heard, not saved


async def test_hear_it_with_a_bad_entry_says_why(user: User, names_book: Path) -> None:
    await open_lexicon(user, names_book)
    user.find(marker="lexicon-add").click()
    set_value(user, "lexicon-written-1", "Quillfeather")
    set_value(user, "lexicon-say-1", "/kwɪl₮/")
    user.find(marker="lexicon-hear-1").click()
    await see(user, marker="lexicon-error", content="the voice has no phoneme '₮'")
    await user.should_not_see(marker="lexicon-audio")
    set_value(user, "lexicon-say-1", "kwill")  # the page goes on working
    set_value(user, "lexicon-written-1", "colou?r")
    set_value(user, "lexicon-regex-1", True)
    user.find(marker="lexicon-hear-1").click()
    await see(
        user,
        marker="lexicon-error",
        content="'colou?r' is a regular expression, and nothing in the book matches it",
    )


async def test_the_names_list_hears_a_name_and_fixes_it_in_the_editor(
    user: User, names_book: Path, said: list[Said]
) -> None:
    await open_lexicon(user, names_book)
    await see(user, marker="lexicon-empty")
    user.find(marker="name-hear-Quillfeather").click()
    await see(user, marker="lexicon-audio")
    assert said[0].texts == ["Quillfeather", NAME_EXAMPLE] and said[0].entries == []
    user.find(marker="name-fix-Quillfeather").click()
    user.find(marker="name-fix-Quillfeather").click()  # a word has one row to fix
    assert len(user.find(marker="lexicon-row").elements) == 1
    assert element(user, "lexicon-written-1").value == "Quillfeather"  # type: ignore[attr-defined]
    assert element(user, "book-lexicon").value is True  # type: ignore[attr-defined]  # opened


async def test_your_own_lexicon_has_its_page(
    user: User, services: Services, said: list[Said]
) -> None:
    path = user_lexicon_path(services.data_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# mine\nNASA\tnasa\tcase\n", "utf-8")
    await user.open("/")
    user.find(marker="nav-lexicon").click()
    await see(user, marker="lexicon-voice", content="Piper · en_US-joe-medium")
    await eventually(lambda: element(user, "lexicon-save").enabled)
    assert text(user, "lexicon-path") == str(path)
    assert element(user, "lexicon-written-1").value == "NASA"  # type: ignore[attr-defined]
    user.find(marker="lexicon-add").click()
    set_value(user, "lexicon-written-2", "Quillfeather")
    set_value(user, "lexicon-say-2", "Kwill-feather")
    user.find(marker="lexicon-hear-2").click()
    await see(user, marker="lexicon-audio")
    (call,) = said  # no book here: the word alone, with the page's rows as they are
    assert call.texts == ["Quillfeather"] and call.language is None
    assert [(e.written, e.say) for e in call.entries] == [
        ("NASA", "nasa"),
        ("Quillfeather", "Kwill-feather"),
    ]
    user.find(marker="lexicon-save").click()
    await notified(user, "Saved 2 entries")
    assert path.read_text("utf-8") == "# mine\nNASA\tnasa\tcase\nQuillfeather\tKwill-feather\n"
    set_value(user, "lexicon-regex-1", True)
    user.find(marker="lexicon-hear-1").click()
    await see(user, marker="lexicon-error", content="there is no book to find what it matches in")
