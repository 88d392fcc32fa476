"""The web UI on a job store damaged in the middle, through NiceGUI's simulated browser: every
page says plainly that the store is damaged, which file and what to do; the Library still
lists the finished book from its file; Generate still answers, with the same message; the
worker says it once and stops, instead of failing again at every look at the queue."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from damaged_store import BOOK_NAME, TITLE, copy_data_dir, damage_middle, made_data_dir
from epub_factory import build_epub
from nicegui import core, ui
from nicegui.testing import User
from test_ui import eventually, press
from ui_services import installed_services

from audiopub.ui.services import Services

pytestmark = [
    pytest.mark.nicegui_main_file("tests/ui_main.py"),
    pytest.mark.usefixtures("embedded_voice_loaded_once"),
]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory, shared_models_dir: Path) -> Path:
    return made_data_dir(tmp_path_factory.mktemp("finished"), shared_models_dir)


@pytest.fixture
def store(made: Path, data_dir: Path) -> Path:
    store = copy_data_dir(made, data_dir)
    damage_middle(store)
    return store


@pytest.fixture(autouse=True)
def services(store: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Services]:
    """Built on the damaged store before `user` runs the app's main file."""
    yield from installed_services(data_dir, monkeypatch)


def texts(user: User, marker: str) -> list[str]:
    """The text of the shown elements with `marker`, in the open page."""
    try:
        found = user.find(marker=marker).elements
    except AssertionError:  # none
        return []
    return [e.text for e in found if e.visible]  # type: ignore[attr-defined]


def banner_says_what_to_do(user: User, store: Path) -> None:
    banners = texts(user, "store-damaged")
    assert len(banners) == 1, banners
    banner = banners[0]
    assert f"The job store {store} is damaged (database disk image is malformed)" in banner
    assert f"was saved in {store.with_name('jobs.recovered.sqlite3')}" in banner
    assert "AUDIOPUB_DATA_DIR" in banner


async def test_every_page_says_the_store_is_damaged_and_the_library_lists_the_book_file(
    user: User, services: Services, store: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    try:
        await pages_on_a_damaged_store(user, services, store, tmp_path)
        # Seconds of pages polling the store: the damage was said once, by the worker.
        damage = [r for r in caplog.records if "is damaged" in r.getMessage()]
        assert [(r.name, r.levelname) for r in damage] == [("audiopub.jobs.worker", "ERROR")]
        assert damage[0].getMessage().startswith(f"The worker stopped: The job store {store}")
        assert not [r for r in caplog.records if r.exc_info], "a traceback was logged"
        assert services.worker.stopped_by is not None
    finally:  # the one ERROR this test expects (the `user` fixture fails on any)
        caplog.records[:] = [
            r for r in caplog.records if not r.getMessage().startswith("The worker stopped: ")
        ]


async def pages_on_a_damaged_store(
    user: User, services: Services, store: Path, tmp_path: Path
) -> None:
    await user.open("/library")
    await eventually(lambda: banner_says_what_to_do(user, store))
    await eventually(lambda: texts(user, "book-title") == [TITLE])
    assert texts(user, "library-empty") == []  # "No finished audiobooks yet." is not said
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(core.app), base_url="http://test"
    ) as client:
        book = await client.get(f"/library/files/{BOOK_NAME}")
        elsewhere = await client.get("/library/files/..%2Fjobs.sqlite3")
    assert book.status_code == 200
    assert book.content == (services.library.folder / BOOK_NAME).read_bytes()
    assert elsewhere.status_code == 404

    # Generate answers with the same message, rather than staying disabled.
    await user.open("/")
    await eventually(lambda: banner_says_what_to_do(user, store))
    await eventually(
        lambda: "en_US-joe-medium" in str(next(iter(user.find(marker="voice").elements)).value)
    )
    uploader = next(iter(user.find(marker="upload").elements))
    epub = build_epub(tmp_path / "new.epub", [("One", ["A new book to make."])], title="New")
    await uploader.handle_uploads(
        [
            ui.upload.SmallFileUpload(  # type: ignore[attr-defined]
                epub.name, "application/epub+zip", epub.read_bytes()
            )
        ]
    )
    await press(user, "generate")
    await eventually(lambda: "is damaged" in " ".join(texts(user, "generate-error")))
    await asyncio.sleep(3)  # the job list and the banner poll meanwhile
