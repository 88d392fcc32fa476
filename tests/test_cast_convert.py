"""`convert --cast` end to end: a short real chapter read by the real Kokoro (int8) in a cast
of voices, heard by the real Whisper base. No words lost, the subtitles follow the voices to
the cue, and the read-along book highlights every word.

The Kokoro test voices are real style vectors (Japanese speakers', `kokoro_model`) saved under
English voices' names, so that the English book is cast from them: what is tested is who reads
what, not how English those speakers sound.
"""

from __future__ import annotations

import contextlib
import io
import json
import posixpath
import re
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from epub_factory import build_epub
from kokoro_model import install_folder, voice_vectors
from lxml import etree

from audiopub.audio.ffmpeg import ffmpeg_exe
from audiopub.book.epub.reader import read_epub
from audiopub.book.text import normalise_text
from audiopub.cli import main
from audiopub.jobs.models import ChunkRow
from audiopub.jobs.store import JobStore
from audiopub.listen.judge import judge
from audiopub.listen.listener import Clip, Listener

HOLMES = Path(__file__).parent / "data" / "epubs" / "pg1661-adventures-of-sherlock-holmes.epub"
NARRATOR = "af_heart"
SMIL = "{http://www.w3.org/ns/SMIL}"
# English names for the packaged voices; bm_george is a blend of two of them, as a mix is.
VOICES = {
    "af_heart": {"jf_alpha": 1.0},
    "af_bella": {"jf_nezumi": 1.0},
    "am_adam": {"jm_kumo": 1.0},
    "bm_george": {"jm_kumo": 0.6, "jf_tebukuro": 0.4},
}


@dataclass(frozen=True)
class Converted:
    paragraphs: tuple[str, ...]  # the chapter as the book reads: its heading, then the text
    output: Path
    summary: str
    chunks: list[ChunkRow]
    voices: dict[str, str]  # what `cast --json` says: character → voice


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory, kokoro_model_file: Path) -> Converted:
    """Four paragraphs of "The Engineer's Thumb" (three speakers and their tags), converted
    once for the module with `--cast` and subtitles."""
    folder = tmp_path_factory.mktemp("cast-convert")
    kokoro = install_folder(folder / "models" / "kokoro", kokoro_model_file, voices=())
    (kokoro / "voices").mkdir()
    vectors = voice_vectors()
    for name, parts in VOICES.items():
        blend = sum(weight * vectors[part] for part, weight in parts.items())
        (kokoro / "voices" / f"{name}.bin").write_bytes(np.asarray(blend).astype("<f4").tobytes())
    paragraphs = read_epub(HOLMES).chapters[9].paragraphs[155:159]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUDIOPUB_DATA_DIR", str(folder / "data"))
        patch.setenv("AUDIOPUB_MODELS_DIR", str(folder / "models"))
        patch.delenv("AUDIOPUB_KOKORO_DIR", raising=False)
        epub = build_epub(
            folder / "thumb.epub",
            [("The Engineer’s Thumb", list(paragraphs))],
            title="The Engineer’s Thumb",
            author="Arthur Conan Doyle",
        )
        out = folder / "thumb.m4b"
        table, listing, summary = io.StringIO(), io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(table):
            assert main(["cast", str(epub), "--engine", "kokoro", "--voice", NARRATOR]) == 0
        with contextlib.redirect_stdout(listing):
            assert (
                main(["cast", str(epub), "--engine", "kokoro", "--voice", NARRATOR, "--json"]) == 0
            )
        with contextlib.redirect_stdout(summary):
            command = ["convert", str(epub), "--engine", "kokoro", "--voice", NARRATOR]
            assert (
                main([*command, "--cast", "-o", str(out), "--subtitles", "srt", "--read-along"])
                == 0
            )
        with JobStore.open_default() as store:
            (job,) = store.queue.list_jobs()
            chunks = store.ledger.all_chunks(job.id)
    cast = json.loads(listing.getvalue())
    voices = {c["name"]: c["voice"] for c in cast["characters"]}
    # The table says the same as the JSON, a line a character.
    for name, voice in voices.items():
        assert re.search(rf"^{re.escape(name)} +{voice} ", table.getvalue(), re.M), name
    return Converted(
        read_epub(epub).chapters[0].paragraphs, out, summary.getvalue(), chunks, voices
    )


@pytest.fixture
def ears(whisper_listener: Listener) -> Listener:
    return whisper_listener  # loaded once for the run (conftest)


def test_the_cast_reads_each_speaker_in_a_voice_and_the_narrator_the_rest(
    converted: Converted,
) -> None:
    voices = converted.voices
    assert {"Holmes", "Hatherley", "Bradstreet"} <= set(voices)
    assert NARRATOR not in voices.values()
    line = next(line for line in converted.summary.splitlines() if "cast:" in line)
    assert line.strip() == (
        f"cast: {len(voices)} characters in {len(set(voices.values()))} voices "
        f"(narrator {NARRATOR})"
    )
    by_voice = {chunk.voice: chunk for chunk in converted.chunks}
    assert set(by_voice) == {"", *voices.values()}  # the narrator's chunks, and each voice's
    said = {chunk.text: chunk.voice for chunk in converted.chunks}
    assert said["gasped Hatherley."] == ""  # a speech tag: the narrator's
    assert said["said Holmes."] == ""
    assert said['"None at all,"'] == voices["Holmes"]
    assert said['"But the twelve-mile drive?"'] == voices["Hatherley"]
    # Every word of the chapter, once, in order.
    assert (
        " ".join(c.text for c in converted.chunks).split() == " ".join(converted.paragraphs).split()
    )


def test_no_word_is_lost_and_each_subtitle_says_what_is_heard_in_its_time(
    converted: Converted, ears: Listener, tmp_path: Path
) -> None:
    srt = converted.output.with_suffix(".srt").read_text("utf-8")
    blocks = [block.split("\n", 2) for block in srt.strip().split("\n\n")]
    cues = [
        (_seconds(times.split(" --> ")[0]), _seconds(times.split(" --> ")[1]), text)
        for _, times, text in blocks
    ]
    # The subtitles are the book's text as written, every word in order.
    assert " ".join(text for *_, text in cues).split() == " ".join(converted.paragraphs).split()

    wav = tmp_path / "decoded.wav"
    subprocess.run(
        [ffmpeg_exe(), "-v", "error", "-i", str(converted.output), "-ac", "1", str(wav)],
        check=True,
    )
    audio, rate = sf.read(wav, dtype="float32")
    # Heard cue by cue, in the cue's own time: the voice changes at cues, so a cue that ran
    # late or early would hear the wrong words.
    clips = [Clip(audio[int(start * rate) : int(end * rate)], rate, "en") for start, end, _ in cues]
    heard = ears.hear(clips)
    for (start, end, text), words in zip(cues, heard, strict=True):
        if len(text.split()) >= 4:  # a sentence: heard as written, in its own time
            verdict = judge(text.replace("\n", " "), words, "en")
            assert not verdict.flagged, (start, end, text, words, verdict.reason)
        else:  # a speech tag, a name alone: Whisper mishears those out of context
            assert words.strip(), (start, end, text)
    # And the whole, heard at once: no word of the book missing.
    whole = ears.hear([Clip(audio, rate, "en")])[0]
    verdict = judge(" ".join(converted.paragraphs), whole, "en")
    assert not verdict.flagged and verdict.wer < 0.15, (whole, verdict)


def test_the_read_along_book_highlights_every_word_in_order(converted: Converted) -> None:
    (read_along,) = converted.output.parent.glob("*read-aloud*.epub")
    pages: dict[str, etree._Element] = {}
    highlighted = []
    with zipfile.ZipFile(read_along) as book:
        for name in sorted(n for n in book.namelist() if n.endswith(".smil")):
            for text in etree.fromstring(book.read(name)).iter(f"{SMIL}text"):
                page, _, fragment = text.get("src", "").partition("#")
                path = posixpath.normpath(posixpath.join(posixpath.dirname(name), page))
                if path not in pages:
                    pages[path] = etree.fromstring(book.read(path))
                (span,) = [el for el in pages[path].iter() if el.get("id") == fragment]
                highlighted.append("".join(span.itertext()))
    # Each quotation and each tag is a sentence of its own or part of one, never lost between
    # two voices' clips.
    assert normalise_text(" ".join(highlighted)).split() == (
        normalise_text(" ".join(converted.paragraphs)).split()
    )


def _seconds(stamp: str) -> float:
    hours, minutes, rest = stamp.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(rest.replace(",", "."))
