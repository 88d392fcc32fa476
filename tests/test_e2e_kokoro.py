"""Kokoro in a real browser: choose it, mix two voices, hear the mix, save it, convert with it.

Debian's Chromium, driven by Playwright, against `audiopub serve`, with the real Kokoro-82M
int8 model and voices (`kokoro_model`) installed beforehand in the server's models folder,
as `audiopub voices download kokoro` leaves them.
"""

from __future__ import annotations

from contextlib import closing
from pathlib import Path

import pytest
from epub_factory import build_epub
from kokoro_model import install_folder
from server_helper import (
    browser_context,
    free_port,
    require_chromium,
    serve_command,
    server,
    wait_for_voice,
)

from audiopub.audio.ffmpeg import probe
from audiopub.jobs.models import JobState
from audiopub.jobs.store import JobStore

MIX = "jf_alpha:0.7+jm_kumo:0.3"
GENERATE_TIMEOUT_MS = 180_000


@pytest.fixture(scope="module")
def chromium() -> Path:
    return require_chromium()


def test_a_kokoro_mix_is_heard_saved_and_speaks_the_book(
    chromium: Path, tmp_path: Path, kokoro_model_file: Path
) -> None:
    from playwright.sync_api import expect

    models = tmp_path / "models"
    install_folder(models / "kokoro", kokoro_model_file, voices=("jf_alpha", "jm_kumo"))
    book = build_epub(
        tmp_path / "dawn.epub",
        [("Dawn", ["The sun rose over the quiet bay."])],
        title="Dawn",
        language="en",
    )
    port = free_port()
    # Without the warm-up of the Piper voice previews start with (~5 CPU s): the mix heard
    # here is Kokoro's, spoken when asked for.
    command = serve_command(port)
    env = {"AUDIOPUB_MODELS_DIR": str(models), "AUDIOPUB_CPU_WORKERS": "1"}
    with (
        server(command, tmp_path, port, env) as url,
        browser_context(chromium, tmp_path) as context,
    ):
        page = context.new_page()
        page.goto(url)
        wait_for_voice(page, "en_US-joe-medium")
        page.get_by_label("Engine", exact=True).click()
        page.get_by_role("option", name="Kokoro").click()
        wait_for_voice(page, "jf_alpha")

        mixer = page.locator(".q-expansion-item", has_text="Mix Kokoro voices")
        mixer.get_by_text("Mix Kokoro voices").click()
        sliders = mixer.get_by_role("slider")
        expect(sliders).to_have_count(2, timeout=10_000)
        # A click along a slider's track sets it there: 70 and 30 of 100.
        for slider, share in zip(sliders.all(), (0.7, 0.3), strict=True):
            slider.click(trial=True)  # waits until the opening mixer has stopped moving
            box = slider.bounding_box()
            slider.click(position={"x": share * box["width"], "y": box["height"] / 2})
        mixer.get_by_text("70%").wait_for(timeout=10_000)
        mixer.get_by_text("30%").wait_for(timeout=10_000)
        mixer.get_by_role("button", name="Hear the mix").click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('audio')].some(a => "
            "a.src.startsWith('data:audio/wav') && a.played.length > 0)",  # played, or playing
            timeout=180_000,  # the mix is spoken first: minutes on a busy machine
        )
        mixer.get_by_label("Name of the mix").fill("Bay narrator")
        mixer.get_by_role("button", name="Save the mix").click()
        wait_for_voice(page, "Bay narrator (mix)", timeout_ms=30_000)

        page.locator("input[type=file]").set_input_files(book)
        page.get_by_text("Dawn").first.wait_for(timeout=30_000)
        generate = page.get_by_role("button", name="Generate audiobook")
        expect(generate).to_be_enabled(timeout=30_000)
        generate.click()
        page.locator(".ap-chip", has_text="Done").wait_for(timeout=GENERATE_TIMEOUT_MS)
        # Opened again, the saved mix is still chosen.
        page.reload()
        wait_for_voice(page, "Bay narrator (mix)")

    data = tmp_path / "data"
    with closing(JobStore(data / "jobs.sqlite3")) as store:
        (job,) = store.queue.list_jobs()
    assert (job.settings.engine, job.settings.voice, job.state) == ("kokoro", MIX, JobState.DONE)
    assert (data / "kokoro-mixes.json").is_file()
    result = probe(job.output_path)
    assert result.sample_rate == 24_000 and result.duration_s > 1
