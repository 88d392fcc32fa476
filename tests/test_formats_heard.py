"""A chapter of a PDF and of a Word file, converted with the embedded voice and heard by the
real Whisper base (`whisper_model`): the audiobook says every word of the chapter as the
document has it, by proof-listening's own measure (`listen.judge`: no run of words unheard,
word error rate within bounds). Slow (speech and listening on the CPU): one short chapter per
format, one listener for both."""

from __future__ import annotations

from pathlib import Path

import pytest
import soundfile as sf
from documents import script

from audiopub.audio.ffmpeg import run_ffmpeg
from audiopub.book.reading import read_book
from audiopub.cli import main
from audiopub.listen import Clip, Listener, judge
from audiopub.listen.judge import align, normalise

pytestmark = pytest.mark.usefixtures("embedded_voice_loaded_once")


# The last chapter's first two paragraphs (742 characters): every second of it is spoken and
# heard, and two paragraphs are enough for the claim. In the PDF they still fill both of the
# page's columns, balanced, the second paragraph all in the right one.
LAST_CHAPTER_PARAGRAPHS = 2


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("documents")
    *chapters, last = script().source_chapters()
    chapters.append(type(last)(last.title, last.paragraphs[:LAST_CHAPTER_PARAGRAPHS]))
    return {
        "pdf": script().write_pdf(folder / "book.pdf", chapters),
        "docx": script().write_docx(folder / "book.docx", chapters),
    }


@pytest.fixture
def listener(whisper_listener: Listener) -> Listener:
    return whisper_listener  # loaded once for the run (conftest)


@pytest.mark.parametrize("kind", ["pdf", "docx"])
def test_a_converted_chapter_says_every_word(
    kind: str, documents: dict[str, Path], listener: Listener, tmp_path: Path
) -> None:
    book = read_book(documents[kind])
    # The last chapter: the shortest, and in the PDF the one set in two columns.
    chapter = book.chapters[-1]
    out = tmp_path / "chapter.m4b"
    number = str(chapter.index + 1)
    assert main(["convert", str(documents[kind]), "--chapters", number, "-o", str(out)]) == 0
    wav = tmp_path / "chapter.wav"
    run_ffmpeg(["-v", "error", "-i", str(out), "-ac", "1", str(wav)], "decode the chapter")
    audio, rate = sf.read(wav, dtype="float32")
    heard = listener.hear([Clip(audio, rate, "en")])[0]
    verdict = judge(chapter.text, heard, "en")
    assert not verdict.flagged, (verdict, heard)
    assert verdict.missing_run < 6 and verdict.wer < 0.2, (verdict, heard)
    # The chapter's last paragraph (in the PDF, the right column's end) is heard last.
    last = normalise(chapter.paragraphs[-1], "en")
    _, unheard = align(last, normalise(heard, "en")[-len(last) - 3 :])
    assert unheard <= 2, heard
