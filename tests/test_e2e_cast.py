"""The Cast panel in a real browser (Debian's Chromium, driven by Playwright, against
`audiopub serve`): a few paragraphs of a real book with three speakers uploaded, the cast
switched on, one character given another voice, and the panel and the book's cast file both
saying so."""

from __future__ import annotations

import json
import re
from pathlib import Path

from epub_factory import build_epub
from playwright.sync_api import expect
from server_helper import (
    browser_context,
    free_port,
    require_chromium,
    serve_command,
    server,
    wait_for_voice,
)
from voices import SPEAKERS, add_multi_speaker_voice

from audiopub.book.epub.reader import read_epub
from audiopub.voices.casting import book_cast_path

HOLMES = Path(__file__).parent / "data" / "epubs" / "pg1661-adventures-of-sherlock-holmes.epub"
NARRATOR = "en_US-joe-medium"


def test_a_character_is_given_another_voice_in_the_cast_panel(tmp_path: Path) -> None:
    chromium = require_chromium()
    # "The Engineer's Thumb": Hatherley, Holmes and Bradstreet talk it over on the train.
    paragraphs = read_epub(HOLMES).chapters[9].paragraphs[155:163]
    book = build_epub(
        tmp_path / "thumb.epub",
        [("The Engineer’s Thumb", list(paragraphs))],
        title="The Engineer’s Thumb",
        author="Arthur Conan Doyle",
    )
    models = tmp_path / "models"  # the embedded voice narrates; a tiny model's speakers act
    add_multi_speaker_voice(models / "piper", "en_GB-tiny-medium")
    port = free_port()
    command = serve_command(port)  # no preview is heard: without the previews' warm-up
    extra = {"AUDIOPUB_MODELS_DIR": str(models)}
    with (
        server(command, tmp_path, port, extra) as url,
        browser_context(chromium, tmp_path) as context,
    ):
        page = context.new_page()
        page.goto(url)
        wait_for_voice(page, NARRATOR)
        page.locator("input[type=file]").set_input_files(book)
        page.get_by_text("The Engineer’s Thumb").first.wait_for(timeout=30_000)
        page.get_by_role("switch", name=re.compile("voice of their own")).click()
        holmes = page.get_by_label("Voice for Holmes", exact=True)
        holmes.wait_for(timeout=60_000)
        page.get_by_text(re.compile(r"^cast: \d characters in \d voices")).wait_for()
        before = holmes.input_value()
        other = next(
            s for s in SPEAKERS if f"speaker {s}" not in before
        )  # a speaker Holmes does not have yet
        holmes.click()
        page.get_by_role("option", name=re.compile(f"speaker {other}")).click()
        # The panel is drawn again from the saved cast: Holmes is listed in the new voice.
        expect(page.get_by_label("Voice for Holmes", exact=True)).to_have_value(
            re.compile(f"speaker {other}"), timeout=30_000
        )
        page.screenshot(path=tmp_path / "cast-panel.png", full_page=True)

    saved = json.loads(book_cast_path(tmp_path / "data", book).read_text("utf-8"))
    assert saved["voices"] == {"Holmes": f"en_GB-tiny-medium#{other}"}
