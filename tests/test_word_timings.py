"""Word timings through a whole job: spoken, kept with the job, placed in the chapter's audio,
and used by the subtitles."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import soundfile as sf
from epub_factory import build_epub

from audiopub.cli import main
from audiopub.export.chapter_audio import chapter_wavs
from audiopub.export.timeline import book_timeline
from audiopub.jobs.store import JobStore

EXACT = "Yes. Antidisestablishmentarianism is long. No."
MERGED = "It was a dark and stormy night."  # espeak says "was a" as one word


def _rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(samples))))


def test_a_converted_book_knows_when_each_word_is_heard(tmp_path: Path) -> None:
    epub = build_epub(tmp_path / "Words.epub", [("One", [EXACT, MERGED])], title="Words")
    # A fixed seed: VITS draws its durations with noise, and how far a word's first sound
    # rings back into the pause before it varies with them (the check below held for 10 of
    # 12 unseeded runs).
    assert main(["convert", str(epub), "-o", str(tmp_path / "Words.m4b"), "--seed", "2"]) == 0
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
        chunks = [c for c in store.ledger.chapter_chunks(job.id, 0) if c.text in (EXACT, MERGED)]
        (chapter,) = [c for c in book_timeline(store, job.id)]
        (wav,) = chapter_wavs(store, job.id, tmp_path)
    assert [c.text for c in chunks] == [EXACT, MERGED]
    assert [len(c.word_starts or ()) for c in chunks] == [5, 6]  # the engine's words
    exact, merged = [p for p in chapter.passages if p.text in (EXACT, MERGED)]
    assert merged.word_starts_s is None  # its words are not the book's: none rather than wrong
    starts = exact.word_starts_s
    assert starts is not None and len(starts) == 5
    assert exact.start_s <= starts[0] < starts[1] < starts[2] < starts[3] < starts[4] < exact.end_s
    assert starts[2] - starts[1] > 8 * (starts[3] - starts[2])  # Antidis… against "is"

    # In the chapter file: the pause after a full stop lies before the next word's start.
    audio, rate = sf.read(wav, dtype="float32")
    for word in (1, 4):
        at = round(starts[word] * rate)
        assert _rms(audio[at - rate // 50 : at]) < 0.1 * _rms(audio[at : at + rate // 10])

    # The subtitles: the second sentence of the chunk starts at its first word, to the ms.
    assert main(["export", job.id[:8], "--format", "srt"]) == 0
    (srt,) = tmp_path.glob("*.srt")
    cues = re.findall(r"(\d+):(\d+):(\d+),(\d+) --> \S+\n(.+)", srt.read_text("utf-8"))
    (begin,) = [
        (int(h) * 3600 + int(m) * 60 + int(s)) * 1000 + int(ms)
        for h, m, s, ms, text in cues
        if text.startswith("Antidisestablishmentarianism")
    ]
    assert abs(begin - (chapter.start_s + starts[1]) * 1000) <= 1
