"""Chapter levels: measured by ffmpeg, brought to the audiobook standard, kept and shown."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from epub_factory import build_epub

from audiopub.audio.levels import (
    MAX_PEAK_DB,
    RMS_RANGE_DB,
    Levels,
    level_chapter,
    master_chapter,
    measure_levels,
)
from audiopub.audio.stitch import stitch_chapter
from audiopub.book.epub.reader import read_epub
from audiopub.jobs.models import JobSettings, JobState
from audiopub.jobs.report import job_details
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import submit_job
from audiopub.jobs.worker import execute_job
from audiopub.tts.registry import get_engine

pytestmark = pytest.mark.usefixtures("embedded_voice_loaded_once")

SENTENCES = [
    "It was a dark and stormy night; the rain fell in torrents.",
    "Except at occasional intervals, when it was checked by a violent gust of wind.",
    "It swept up the streets, rattling along the housetops.",
]


def _finished_job(folder: Path) -> tuple[JobStore, str]:
    epub = build_epub(folder / "b.epub", [("Part one", SENTENCES), ("Part two", SENTENCES[:2])])
    engine = get_engine("piper")
    store = JobStore(folder / "jobs.sqlite3")
    job = submit_job(store, epub, read_epub(epub), folder / "b.m4b", JobSettings(), engine)
    store.queue.set_state(job.id, JobState.RUNNING)
    assert execute_job(store, job.id, None, engine) is JobState.DONE
    return store, job.id


@pytest.fixture(scope="module")
def finished(
    tmp_path_factory: pytest.TempPathFactory, shared_models_dir: Path
) -> tuple[JobStore, str]:
    with pytest.MonkeyPatch.context() as patch:  # the engine of `embedded_voice_loaded_once`
        patch.setenv("AUDIOPUB_MODELS_DIR", str(shared_models_dir))
        return _finished_job(tmp_path_factory.mktemp("job"))


def test_every_chapter_and_the_book_land_in_the_audiobook_range(
    finished: tuple[JobStore, str],
) -> None:
    store, job_id = finished
    for chapter in store.ledger.chapters(job_id):
        before = Levels.from_dict(chapter.levels["before"])
        after = Levels.from_dict(chapter.levels["after"])
        assert before.problems()  # the voice alone is too quiet for the standard
        assert after.problems() == []
        assert after.integrated_lufs == pytest.approx(-20, abs=1.0)
        assert after.true_peak_db is not None and after.true_peak_db <= -3.5
    book = measure_levels(store.queue.get_job(job_id).output_path)  # AAC, as a listener gets it
    low, high = RMS_RANGE_DB
    assert book.rms_db is not None and low <= book.rms_db <= high
    assert book.peak_db is not None and book.peak_db <= MAX_PEAK_DB


def test_levelling_moves_no_sample(finished: tuple[JobStore, str], tmp_path: Path) -> None:
    """Gain and limiter keep every chunk where the store says it is: the levelled chapter is
    the chunks' own audio, louder, at the same frames."""
    store, job_id = finished
    chunks = store.ledger.chapter_chunks(job_id, 0)
    folder = store.job_dir(job_id)
    plain, levelled = tmp_path / "plain.wav", tmp_path / "levelled.wav"
    stitched = stitch_chapter(
        [(folder / str(c.audio_path), c.ends_paragraph) for c in chunks], 22050, plain
    )
    shutil.copyfile(plain, levelled)
    assert master_chapter(levelled, measure_levels(levelled))
    a, _ = sf.read(str(levelled), dtype="float32")
    b, _ = sf.read(str(plain), dtype="float32")
    assert len(a) == len(b) == stitched.frames
    assert not np.any(a[: stitched.clips[0][0]])  # the room tone at the head stays silence
    for start, length in stitched.clips:  # the limiter reshapes a few peaks, nothing moves
        same = np.corrcoef(a[start : start + length], b[start : start + length])[0, 1]
        shifted = np.corrcoef(a[start + 110 : start + length], b[start : start + length - 110])[
            0, 1
        ]
        assert same > 0.97 and shifted < same - 0.1  # 5 ms late would be another signal
    assert np.sqrt(np.mean(a**2)) > 1.5 * np.sqrt(np.mean(b**2))  # and louder


def test_the_details_show_each_chapters_levels(finished: tuple[JobStore, str]) -> None:
    store, job_id = finished
    job = store.queue.get_job(job_id)
    lines = job_details(store, job, store.ledger.progress(job_id))
    levels = [line for line in lines if line.strip().startswith("levels:")]
    assert len(levels) == 2 and "LUFS" in levels[0] and "spoken at" in levels[0]
    assert not any("outside the audiobook levels" in line for line in lines)


def test_out_of_range_levels_are_named() -> None:
    quiet = Levels(-26.0, -5.0, -25.8, -5.2, None)
    assert quiet.problems() == ["RMS -25.8 dB (should be -23 to -18)"]
    hot = Levels(-16.0, -0.5, -17.0, -1.0, -50.0)
    assert hot.problems() == [
        "RMS -17.0 dB (should be -23 to -18)",
        "peak -1.0 dB (should be at most -3)",
        "noise floor -50.0 dB (should be at most -60)",
    ]
    assert Levels.from_dict(hot.to_dict()) == hot
    assert quiet.describe() == "-26.0 LUFS, RMS -25.8 dB, peak -5.2 dB, noise floor -inf"


def test_silence_is_measured_and_left_alone(tmp_path: Path) -> None:
    wav = tmp_path / "silence.wav"
    sf.write(str(wav), np.zeros(22050, dtype=np.float32), 22050, subtype="PCM_16")
    levels = measure_levels(wav)
    assert levels.integrated_lufs is None and levels.rms_db is None
    assert master_chapter(wav, levels) is False
    assert levels.problems() == []


def test_levelling_can_be_switched_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIOPUB_LEVEL_CHAPTERS", "0")
    store, job_id = _finished_job(tmp_path)
    chapter = store.ledger.chapters(job_id)[0]
    assert chapter.levels["after"] == chapter.levels["before"]  # measured all the same


def test_a_chapter_that_is_mostly_pause_still_reaches_the_rms_window(tmp_path: Path) -> None:
    """Loudness gates the pauses out, RMS counts them: a title page needs more gain than its
    loudness asks for."""
    from audiopub.tts.engine import SynthesisOptions

    (spoken,) = get_engine("piper").synthesize(
        ["Poetry, by Edgar Allan Poe."], "en_US-joe-medium", SynthesisOptions(seed=1)
    )
    wav = tmp_path / "title.wav"
    audio = np.concatenate([spoken.audio, np.zeros(3 * spoken.sample_rate, np.float32)])
    sf.write(str(wav), audio, spoken.sample_rate, subtype="PCM_16")
    before, after = level_chapter(wav)
    assert before.rms_db is not None and before.rms_db < RMS_RANGE_DB[0] - 3
    assert after.problems() == [], after.describe()
