"""One real-browser run: Debian's Chromium, driven by Playwright, against `audiopub serve`.

Upload a small real EPUB, generate it with the embedded Piper voice, download the .m4b, check
its chapters with ffmpeg, and keep screenshots of the finished page, of the library playing a
book with the sentence being heard under the player, and of the GPU panel on a fake NVML in
the test's folder. With AUDIOPUB_UPDATE_SCREENSHOT=1 they are also copied to docs/ for the
README. And a name fixed in the book's lexicon: heard in the page (the audio element really
plays), saved, and said so by the next conversion of the book.

Chromium comes from the system (scripts/install_browser.sh installs Debian's package);
Playwright only brings its driver and never downloads a browser. No Chromium → the test fails
and says how to get it.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from epub_factory import build_epub, tiny_png
from server_helper import (
    ROOT,
    browser,
    free_port,
    fresh_context,
    require_chromium,
    serve_command,
    server,
    wait_for_voice,
)

from audiopub.audio.ffmpeg import probe
from audiopub.book.lexicons.lexicon import book_lexicon_path, read
from audiopub.jobs.store import JobStore

TESTS = Path(__file__).resolve().parent
CHAPTERS = [
    (
        "The Harbour",
        [
            "The rain had stopped by the time the train reached the coast.",
            "A dog slept in the shade of the ticket office.",
        ],
    ),
    ("The Lighthouse", ["She counted the lighthouses as they passed, one for every mile."]),
    ("Departure", ["Somewhere a radio was playing an old dance tune."]),
]
GENERATE_TIMEOUT_MS = 180_000

# The GPU panel's screenshot runs the app with a fake NVML put into its services object (the
# product has no switch for fakes): a stand-in whose readings move, so the plot shows a line.
GPU_DEMO = """
import math, sys, time
sys.path.insert(0, {tests!r})
from pathlib import Path
from test_gpu_monitor import FakeNvml
from audiopub.ui import app
from audiopub.ui.services import Services

class BusyGpu(FakeNvml):
    def nvmlDeviceGetMemoryInfo(self, handle):
        self.used_mb = int(9000 + 5000 * math.sin(time.monotonic() / 3))
        return super().nvmlDeviceGetMemoryInfo(handle)

    def nvmlDeviceGetTemperature(self, handle, sensor):
        super().nvmlDeviceGetTemperature(handle, sensor)
        return int(58 + 8 * math.sin(time.monotonic() / 4))

app.main(host="127.0.0.1", port={port}, show=False,
         services=Services(Path({data!r}), nvml=BusyGpu(), gpu_interval_s=0.1,
                           warm_previews=False))
"""


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    """One Chromium for the module (starting one costs ~2 s of CPU); each test has a fresh
    context of its own in it (`fresh_context`)."""
    with browser(require_chromium()) as launched:
        yield launched


@pytest.mark.engine_processes  # the app as it is run: a job speaks in engine processes
def test_generate_and_download_in_a_real_browser(chromium: Any, tmp_path: Path) -> None:
    book = build_epub(
        tmp_path / "harbour.epub",
        CHAPTERS,
        title="The Harbour Book",
        author="Ann Author",
        cover=tiny_png(60, 90, (62, 110, 126)),
    )
    port = free_port()
    command = serve_command(port)  # no preview is heard: without the previews' warm-up
    with server(command, tmp_path, port) as url, fresh_context(chromium) as context:
        page = context.new_page()
        outside = _record_outside_requests(page)
        _generate(page, url, book, "The Harbour Book")

        with page.expect_download() as download:
            page.get_by_role("button", name="Download .m4b").click()
        assert download.value.suggested_filename == "The Harbour Book.m4b"
        m4b = tmp_path / "downloaded.m4b"
        download.value.save_as(m4b)

        page.locator(".q-notification").first.wait_for(state="detached", timeout=15_000)
        _screenshot(page, tmp_path / "finished.png")
        page.get_by_role("button").filter(
            has=page.locator("i", has_text="brightness_auto")
        ).click()  # follows the system → dark
        page.mouse.move(0, 0)
        page.wait_for_timeout(500)
        _screenshot(page, tmp_path / "finished-dark.png")

        page.get_by_role("link", name="Listen in the library").click()
        page.get_by_role("button", name="Play").click()
        audio = page.locator("audio")
        page.wait_for_function(
            "() => document.querySelector('audio')?.duration > 3", timeout=20_000
        )
        page.get_by_role("button", name="The Lighthouse").click()  # seeks to chapter 2
        start = _chapter_start(page, "The Lighthouse")
        page.wait_for_function(
            f"() => document.querySelector('audio').currentTime >= {start}", timeout=10_000
        )
        assert audio.evaluate("a => a.currentTime") >= start > 0
        _screenshot(page, tmp_path / "library-dark.png")
        assert outside == [], f"the page fetched from outside 127.0.0.1: {outside}"

    result = probe(m4b)
    assert [c.title for c in result.chapters] == [title for title, _ in CHAPTERS]
    assert result.audio_codec == "aac" and result.duration_s > 3 and result.has_cover
    _publish(tmp_path / "finished.png", "screenshot.png")


def test_a_lexicon_entry_is_heard_then_used_by_the_next_conversion(
    chromium: Any, tmp_path: Path
) -> None:
    """Convert once, fix a name in the book's lexicon (hearing it first), convert again."""
    book = build_epub(
        tmp_path / "captain.epub",
        [
            (
                "The Voyage",
                [
                    "The ship left port with Captain Quillfeather aboard.",
                    "Nobody doubted Quillfeather.",
                ],
            )
        ],
        title="The Captain",
    )
    port = free_port()
    # Without the previews' warm-up (~5 CPU s a start): the one "Hear it" here loads its voice
    # when asked, as a server's first preview does while the warm-up has not finished.
    command = serve_command(port)
    with server(command, tmp_path, port) as url, fresh_context(chromium) as context:
        page = context.new_page()
        page.goto(url)
        wait_for_voice(page, "en_US-joe-medium")
        page.locator("input[type=file]").set_input_files(book)
        page.get_by_text("Names to check: Quillfeather").wait_for(timeout=30_000)
        generate = page.get_by_role("button", name="Generate audiobook")
        done = page.locator(".ap-chip", has_text="Done")
        generate.click()
        done.first.wait_for(timeout=GENERATE_TIMEOUT_MS)

        page.get_by_text("Names to check: Quillfeather").click()
        page.get_by_role("button", name="Fix").click()  # a row for the name, in the editor
        editor = page.locator(".q-expansion-item", has_text="How to say words in this book")
        editor.get_by_label("How to say it").fill("Kwillfayther")
        editor.get_by_role("button", name="Hear it").click()
        # Played, whether still playing or already ended when looked at: a clip of a word is
        # short, and a busy machine may look only after its end.
        page.wait_for_function(
            "() => [...document.querySelectorAll('audio')].some(a => "
            "a.src.startsWith('data:audio/wav') && a.played.length > 0)",
            timeout=60_000,
        )
        editor.get_by_role("button", name="Save").click()
        page.get_by_text("Saved 1 entry").wait_for(timeout=10_000)
        generate.click()
        done.nth(1).wait_for(timeout=GENERATE_TIMEOUT_MS)

    data = tmp_path / "data"
    assert read(book_lexicon_path(data, book))[0].say == "Kwillfayther"
    with closing(JobStore(data / "jobs.sqlite3")) as store:
        first, second = sorted(store.queue.list_jobs(), key=lambda job: job.created_at)
        before = " ".join(chunk.spoken for chunk in store.ledger.all_chunks(first.id))
        after = " ".join(chunk.spoken for chunk in store.ledger.all_chunks(second.id))
    assert "Quillfeather" in before and "Kwillfayther" not in before
    assert "Kwillfayther" in after and "Quillfeather" not in after


READ_ALONG = [
    (
        "The Harbour",
        [
            "The rain had stopped by the time the train reached the coast.",
            "A dog slept in the shade of the ticket office.",
            "Somewhere a radio was playing an old dance tune.",
        ],
    ),
    ("The Lighthouse", ["She counted the lighthouses as they passed, one for every mile."]),
]
SENTENCE = ".ap-read-along"  # the line under the player


def test_the_library_player_shows_the_sentence_being_heard(chromium: Any, tmp_path: Path) -> None:
    """A finished book plays in the library; the line under the player follows it from one
    sentence to the next. Its picture is the README's read-along screenshot."""
    book = build_epub(
        tmp_path / "harbour.epub",
        READ_ALONG,
        title="The Harbour Book",
        author="Ann Author",
        cover=tiny_png(60, 90, (62, 110, 126)),
    )
    first, second = READ_ALONG[0][1][:2]
    port = free_port()
    command = serve_command(port)  # no preview is heard: without the previews' warm-up
    with server(command, tmp_path, port) as url, fresh_context(chromium) as context:
        page = context.new_page()
        _generate(page, url, book, "The Harbour Book")
        page.get_by_role("link", name="Listen in the library").click()
        page.get_by_role("button", name="Play").click()
        page.wait_for_function(
            "() => { const a = document.querySelector('audio');"
            " return a && !a.paused && a.currentTime > 0 }",
            timeout=20_000,
        )
        sentence = page.locator(SENTENCE)
        sentence.filter(has_text=first).wait_for(timeout=10_000)
        sentence.filter(has_text=second).wait_for(timeout=15_000)  # it played on: the next one
        assert page.locator("audio").evaluate("a => !a.paused")
        card = page.locator(".ap-card", has_text="The Harbour Book").bounding_box()
        assert card is not None
        bottom = card["y"] + card["height"] + 24  # the header and the book, no empty page
        page.screenshot(
            path=tmp_path / "read-along.png", clip={"x": 0, "y": 0, "width": 1400, "height": bottom}
        )
    _publish(tmp_path / "read-along.png", "read-along.png")


def test_gpu_panel_with_a_fake_gpu(chromium: Any, tmp_path: Path) -> None:
    port = free_port()
    code = GPU_DEMO.format(tests=str(TESTS), data=str(tmp_path / "data"), port=port)
    with (
        server([sys.executable, "-c", code], tmp_path, port) as url,
        fresh_context(chromium) as context,
    ):
        page = context.new_page()
        page.set_viewport_size({"width": 1400, "height": 900})
        page.goto(url)
        panel = page.locator(".q-card", has_text="RTX 4090")
        panel.wait_for(timeout=30_000)
        panel.filter(has_text="°C").filter(has_text="GiB").wait_for(timeout=30_000)
        # Some history for the plot: ten seconds of it for the README's picture, a second
        # when no picture is published (the checks below read the panel's text).
        page.wait_for_timeout(10_000 if _publishing() else 1_000)
        assert "°C" in panel.inner_text() and "GiB" in panel.inner_text()
        panel.screenshot(path=tmp_path / "gpu-panel.png")
    _publish(tmp_path / "gpu-panel.png", "gpu-panel.png")


# --- helpers -------------------------------------------------------------------------------------


def _generate(page: Any, url: str, book: Path, title: str) -> None:
    """Upload `book` on the Convert page and generate it with the default voice, to the end."""
    page.goto(url)
    wait_for_voice(page, "en_US-joe-medium")
    page.locator("input[type=file]").set_input_files(book)
    page.get_by_text(title).first.wait_for(timeout=30_000)
    page.get_by_role("button", name="Generate audiobook").click()
    page.locator(".ap-chip", has_text="Done").wait_for(timeout=GENERATE_TIMEOUT_MS)


def _screenshot(page: Any, path: Path) -> None:
    """The whole page in one picture, with the sticky header where it belongs (at the top)."""
    height = page.evaluate("document.documentElement.scrollHeight")
    page.set_viewport_size({"width": 1400, "height": max(900, int(height))})
    page.wait_for_timeout(300)
    page.screenshot(path=path)


def _chapter_start(page: Any, title: str) -> float:
    """The start time the library lists for a chapter, e.g. "0:09" → 9.0."""
    row = page.get_by_role("button", name=title).inner_text()
    minutes, seconds = row.strip().splitlines()[-1].split(":")[-2:]
    return int(minutes) * 60 + int(seconds)


def _record_outside_requests(page: Any) -> list[str]:
    """Every request that leaves 127.0.0.1: the UI must work offline."""
    outside: list[str] = []

    def check(request: Any) -> None:
        if not request.url.startswith(("http://127.0.0.1", "data:", "blob:")):
            outside.append(request.url)

    page.on("request", check)
    return outside


def _publishing() -> bool:
    return os.environ.get("AUDIOPUB_UPDATE_SCREENSHOT") == "1"


def _publish(screenshot: Path, name: str) -> None:
    if _publishing():
        docs = ROOT / "docs"
        docs.mkdir(exist_ok=True)
        shutil.copyfile(screenshot, docs / name)
