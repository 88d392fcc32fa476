"""A Piper voice downloaded on the Voices page, then used to convert a book, in a real browser.

Debian's Chromium, driven by Playwright, against `audiopub serve`, whose HF_ENDPOINT is a local
server speaking the Hugging Face Hub's protocol (`hub_server`) with `rhasspy/piper-voices` in
its real layout (`hub_repos`): nothing reaches the network. The voice is the embedded one's
model under a 16 kHz config, as Piper's `x_low` voices are, so the audiobook shows which voice
spoke it by its sample rate as well as by the job's settings.
"""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path

import pytest
from epub_factory import build_epub
from hub_repos import piper_voice_files, serve_piper_voices
from hub_server import running_hub
from server_helper import (
    browser_context,
    free_port,
    require_chromium,
    serve_command,
    server,
    voice_field,
    wait_for_voice,
)

from audiopub.audio.ffmpeg import probe
from audiopub.jobs.store import JobStore
from audiopub.tts.piper.files import embedded_voice, find_voices

VOICE = "en_GB-tiny-x_low"  # not the best English voice: the page keeps joe until it is picked
RATE = 16_000  # Piper's x_low voices speak at 16 kHz; the embedded joe at 22.05 kHz
GENERATE_TIMEOUT_MS = 180_000


@pytest.fixture(scope="module")
def chromium() -> Path:
    return require_chromium()


def test_a_voice_downloaded_on_the_voices_page_speaks_the_next_book(
    chromium: Path, tmp_path: Path
) -> None:
    book = build_epub(
        tmp_path / "tide.epub",
        [
            (
                "The Tide",
                [
                    "The tide came in over the flats before noon.",
                    "Two gulls argued on the harbour wall.",
                ],
            )
        ],
        title="The Tide",
    )
    models = tmp_path / "models"
    port = free_port()
    command = serve_command(port)  # no preview is heard: without the previews' warm-up
    with running_hub() as hub:
        serve_piper_voices(hub, {VOICE: _voice_at(RATE)})
        env = {
            "HF_ENDPOINT": hub.url,
            "HF_HOME": str(tmp_path / "hf-home"),
            "HF_HUB_OFFLINE": "0",
            "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
            "HF_HUB_DISABLE_PROGRESS_BARS": "1",
            "AUDIOPUB_MODELS_DIR": str(models),
            "AUDIOPUB_CPU_WORKERS": "1",
        }
        with (
            server(command, tmp_path, port, env) as url,
            browser_context(chromium, tmp_path) as context,
        ):
            page = context.new_page()
            page.goto(url + "voices")
            page.get_by_text("Listed from the Hub's voice index.").wait_for(timeout=30_000)
            row = page.locator(".ap-chapter-row", has_text=VOICE)
            row.get_by_role("button", name="Download").click()
            page.get_by_text(f"piper:{VOICE} is installed").wait_for(timeout=60_000)
            row.get_by_text("downloaded").wait_for(timeout=10_000)
            assert VOICE in find_voices(models / "piper")

            page.get_by_role("link", name="Convert").click()
            wait_for_voice(page, "en_US-joe-medium")
            page.locator("input[type=file]").set_input_files(book)
            page.get_by_text("The Tide").first.wait_for(timeout=30_000)
            voice_field(page).fill("x_low")  # typing filters the voices
            page.get_by_role("option", name=VOICE).click()
            wait_for_voice(page, VOICE, timeout_ms=10_000)
            page.get_by_role("button", name="Generate audiobook").click()
            page.locator(".ap-chip", has_text="Done").wait_for(timeout=GENERATE_TIMEOUT_MS)

            with page.expect_download() as download:
                page.get_by_role("button", name="Download .m4b").click()
            assert download.value.suggested_filename == "The Tide.m4b"
            m4b = tmp_path / "downloaded.m4b"
            download.value.save_as(m4b)

    with closing(JobStore(tmp_path / "data" / "jobs.sqlite3")) as store:
        (job,) = store.queue.list_jobs()
    assert (job.settings.engine, job.settings.voice) == ("piper", VOICE)
    result = probe(m4b)
    assert result.sample_rate == RATE and result.duration_s > 2
    assert [c.title for c in result.chapters] == ["The Tide"]


def _voice_at(sample_rate: int) -> dict[str, bytes]:
    """The voice's files as the repository has them: the embedded voice's model (real speech)
    under a config that says `sample_rate`."""
    files = piper_voice_files(VOICE, embedded_voice().model)
    config = json.loads(files[f"{VOICE}.onnx.json"])
    config["audio"]["sample_rate"] = sample_rate
    files[f"{VOICE}.onnx.json"] = json.dumps(config).encode()
    return files
