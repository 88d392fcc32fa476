"""The UI's plain helpers, without a page: formatting, preferences, uploads, job figures."""

from __future__ import annotations

import asyncio
import io
import json
import os
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiopub import figures as fmt
from audiopub import settings
from audiopub.book.lexicons.lexicon import Entry
from audiopub.errors import AudiopubError, LexiconError, UploadRejected
from audiopub.figures import Clock, Speed
from audiopub.jobs.events import EventBus, JobEvent
from audiopub.jobs.models import (
    ChapterProgress,
    ChapterState,
    Job,
    JobProgress,
    JobSettings,
    JobState,
)
from audiopub.ui.activity import LOG_LINES, JobActivity
from audiopub.ui.jobview import is_listed_as_active, metrics
from audiopub.ui.preferences import Preferences, UiSettings
from audiopub.ui.previews import SAY_PAUSE_S
from audiopub.ui.services import Services
from audiopub.ui.uploads import display_name, remove_stale_uploads, save_upload


def test_clock_and_estimates() -> None:
    assert fmt.clock(None) == "—"
    assert fmt.clock(5.4) == "0:05"
    assert fmt.clock(125) == "2:05"
    assert fmt.clock(3723) == "1:02:03"
    assert fmt.approx_duration(12) == "≈ 12 s"
    assert fmt.approx_duration(8220) == "≈ 2 h 17 min"
    assert fmt.estimate_speech_s(1500, speed=2.0) == pytest.approx(50.0)
    assert fmt.size(200_000_000) == "200 MB" and fmt.size(1_400_000) == "1.4 MB"


def test_stage_times_read_in_the_order_a_job_runs() -> None:
    times = {
        "stitch": 0.104,
        "engine.phonemes": 0.05,
        "encode": 130.2,
        "engine.model": 12.06,
        "synthesis": 14.34,
        "prepare": 0.4,
        "engine.load": 2.2,
    }
    assert fmt.stage_times(times) == (
        "prepare 0.40 s · synthesis 14.3 s · load 2.20 s · "
        "phonemes 0.05 s · model 12.1 s · stitch 0.10 s · "
        "encode 130 s"
    )
    assert fmt.stage_times({}) == "—"


def test_preferences_survive_restarts_and_bad_files(tmp_path: Path) -> None:
    path = tmp_path / "ui-settings.json"
    prefs = Preferences(path)
    assert prefs.get() == UiSettings()
    prefs.update(speed=1.5, steps=32, use_gpu=True, dark=False, voice="en_US-joe-medium")
    assert [p.name for p in tmp_path.iterdir()] == ["ui-settings.json"]  # no temp file left
    again = Preferences(path).get()
    assert (again.speed, again.steps, again.use_gpu, again.dark) == (1.5, 32, True, False)
    path.write_text(json.dumps({"speed": 99, "steps": "many", "dark": "yes", "colour": "red"}))
    odd = Preferences(path).get()
    assert odd.speed == settings.MAX_SPEED and odd.steps == settings.DEFAULT_STEPS
    assert odd.dark is None
    path.write_text("{not json")
    assert Preferences(path).get() == UiSettings()


def test_preferences_clear_the_temp_file_of_a_crashed_write(tmp_path: Path) -> None:
    stale = tmp_path / "ui-settings.json.tmp-999-abcd"
    stale.write_text("{")
    Preferences(tmp_path / "ui-settings.json")
    assert not stale.exists()


class _Upload:
    def __init__(self, name: str, data: bytes) -> None:
        self.name, self._data = name, data

    def size(self) -> int:
        return len(self._data)

    async def save(self, path: str | Path) -> None:
        Path(path).write_bytes(self._data)


def test_uploads_get_random_names_and_a_size_limit(tmp_path: Path) -> None:
    saved = asyncio.run(save_upload(_Upload("../../x.epub", b"PK"), tmp_path / "up", 10))
    assert saved.parent == tmp_path / "up" and saved.name != "x.epub" and saved.suffix == ".epub"
    with pytest.raises(UploadRejected, match="limit"):
        asyncio.run(save_upload(_Upload("big.epub", b"x" * 11), tmp_path / "up", 10))
    with pytest.raises(UploadRejected, match="empty"):
        asyncio.run(save_upload(_Upload("nil.epub", b""), tmp_path / "up", 10))
    assert issubclass(UploadRejected, AudiopubError)
    assert display_name("C:\\Users\\me\\book.epub") == "book.epub"
    assert display_name("") == "The file"


def test_stale_uploads_are_removed(tmp_path: Path) -> None:
    old, new = tmp_path / "old.epub", tmp_path / "new.epub"
    old.write_bytes(b"1")
    new.write_bytes(b"2")
    os.utime(old, (time.time() - 3 * 86400,) * 2)
    assert remove_stale_uploads(tmp_path) == 1
    assert not old.exists() and new.exists()


def test_stale_cover_thumbnails_are_removed(tmp_path: Path) -> None:
    from audiopub.ui.book_reading import THUMBNAILS, remove_stale_thumbnails

    folder = tmp_path / THUMBNAILS
    folder.mkdir()
    old, new = folder / f"{'a' * 32}.jpg", folder / f"{'b' * 32}.jpg"
    old.write_bytes(b"1")
    new.write_bytes(b"2")
    os.utime(old, (time.time() - 3 * 86400,) * 2)
    assert remove_stale_thumbnails(tmp_path) == 1
    assert not old.exists() and new.exists()
    assert remove_stale_thumbnails(tmp_path / "no such folder") == 0


def _job(state: JobState, started: float | None = 100.0, finished: float | None = None) -> Job:
    return Job(
        id="a" * 32,
        state=state,
        created_at=90.0,
        updated_at=150.0,
        started_at=started,
        finished_at=finished,
        title="T",
        author="A",
        epub_path=Path("b.epub"),
        output_path=Path("b.m4b"),
        settings=JobSettings(voice="v"),
        error=None,
        device=None,
    )


def _progress(
    done: int, total: int, synth_s: float = 0.0, audio_s: float = 0.0, wall_s: float = 0.0
) -> JobProgress:
    chapter = ChapterProgress(0, "One", ChapterState.PENDING, 1, 2, done, total)
    return JobProgress(1, 2, done, total, audio_s, synth_s, (chapter,), wall_s=wall_s)


def test_a_jobs_speed_means_the_same_while_it_runs_and_once_it_is_done() -> None:
    """The card's speed is the job's characters over the wall-clock time its runs spent
    speaking them: not this run's rate while running and engine time once done."""
    # Two engine processes: 8 engine seconds of work in 4 wall seconds.
    progress = _progress(400, 1000, synth_s=8.0, audio_s=40.0, wall_s=4.0)
    this_run = Speed(100, 2.0, 10.0, Clock.WALL)  # resumed: this run made only part of it
    event = JobEvent("a" * 32, JobState.RUNNING, run=this_run, eta_s=12.0)
    running = metrics(_job(JobState.RUNNING), progress, event, now=130.0)
    assert (running.chars_per_s, running.rtf, running.elapsed_s) == (100.0, 0.1, 30.0)
    assert running.speed.clock is Clock.WALL
    assert running.eta_s == 12.0  # the rest at this run's speed, as the worker reckons it
    done = metrics(_job(JobState.DONE, finished=140.0), progress, None, now=999.0)
    assert (done.chars_per_s, done.rtf) == (running.chars_per_s, running.rtf)
    without_event = metrics(_job(JobState.RUNNING), progress, None, now=130.0)
    assert without_event.eta_s == 6.0  # the job's own speed


def test_speed_describes_itself_with_its_clock() -> None:
    speed = Speed(16_903, 132.0, 1_100.0, Clock.WALL)
    assert speed.describe() == (
        "16,903 chars in 132 s = 128 chars/s, real-time factor 0.120 (wall clock)"
    )
    assert Speed(0, 0.0, 0.0, Clock.ENGINE).chars_per_s is None


def test_metrics_of_stopped_jobs_freeze() -> None:
    done = metrics(_job(JobState.DONE, finished=140.0), _progress(10, 10, 1.0, 5.0), None, 999.0)
    assert (done.elapsed_s, done.eta_s) == (40.0, 0.0)
    paused = metrics(_job(JobState.PAUSED), _progress(5, 10), None, now=999.0)
    assert paused.elapsed_s == 50.0 and paused.eta_s is None and paused.chars_per_s is None
    queued = metrics(_job(JobState.QUEUED, started=None), _progress(0, 0), None, now=999.0)
    assert queued.elapsed_s is None


def test_finished_jobs_leave_the_job_list_after_a_while() -> None:
    assert is_listed_as_active(_job(JobState.FAILED), now=1e9)
    recent = replace(_job(JobState.DONE), finished_at=1000.0)
    assert is_listed_as_active(recent, now=1100.0)
    assert not is_listed_as_active(recent, now=1000.0 + 3600)


def test_activity_keeps_a_bounded_log_per_job() -> None:
    bus = EventBus()
    activity = JobActivity(bus)
    bus.publish(JobEvent("j", JobState.RUNNING, message="Started"))
    bus.publish(JobEvent("j", JobState.RUNNING, chapter_title="One"))
    bus.publish(JobEvent("j", JobState.RUNNING, chapter_title="One"))
    assert activity.version == 0 and activity.drain() == 3
    total, lines = activity.log("j")
    assert total == 2 and lines[0].endswith("Started") and lines[1].endswith("Reading “One”")
    for n in range(LOG_LINES + 5):
        bus.publish(JobEvent("j", JobState.RUNNING, message=f"line {n}"))
    activity.drain()
    total, lines = activity.log("j")
    assert total == LOG_LINES + 7 and len(lines) == LOG_LINES
    assert activity.latest("j") is not None
    activity.forget("j")
    assert activity.log("j") == (0, []) and activity.latest("j") is None
    activity.close()


def test_the_settings_line_counts_chapters_in_words_that_agree() -> None:
    from audiopub.ui.components.job_card import settings_summary

    one = replace(_job(JobState.QUEUED), settings=JobSettings(voice="v", chapters=(2,)))
    two = replace(one, settings=JobSettings(voice="v", chapters=(2, 3)))
    assert settings_summary(one).endswith("1 chapter chosen")
    assert settings_summary(two).endswith("2 chapters chosen")


def test_say_speaks_each_piece_with_a_pause_and_the_lexicon(data_dir: Path) -> None:
    services = Services(data_dir)

    def said(texts: list[str], entries: tuple[Entry, ...] = ()) -> tuple[np.ndarray, int]:
        wav = services.previews.say(
            texts, "piper", "en_US-joe-medium", 1.0, settings.DEFAULT_STEPS, entries
        )
        audio, rate = sf.read(io.BytesIO(wav), dtype="int16")
        return audio, rate

    def longest_silence_s(texts: list[str]) -> float:
        audio, rate = said(texts)
        edges = np.diff(np.concatenate(([0], audio == 0, [0])).astype(np.int8))
        runs = np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)
        return float(runs.max(initial=0)) / rate

    try:
        # The pause between pieces is digital silence, which the voice itself never makes.
        assert longest_silence_s(["Quillfeather"]) < 0.1
        assert longest_silence_s(["Quillfeather", "Quillfeather"]) == pytest.approx(
            SAY_PAUSE_S, abs=0.01
        )
        # The entry is what is said: a long respelling takes far longer than the name.
        name, rate = said(["Quillfeather"])
        long = Entry("Quillfeather", "Bartholomew Montgomery Fitzwilliam of Quillfeather")
        assert len(said(["Quillfeather"], (long,))[0]) > len(name) + rate
        with pytest.raises(LexiconError, match="'Quillfeather' → '/₮/': the voice has no "):
            said(["Quillfeather"], (Entry("Quillfeather", "₮", phonemes=True),))
        with pytest.raises(AudiopubError, match="nothing to say"):
            said(["  "])
    finally:
        services.stop()


def test_an_engine_nobody_installed_is_no_warning_at_start(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A first start has no Supertonic files: the page says so when it is picked; the terminal
    gets no WARNING for the normal state (a broken engine still gets one)."""
    import logging

    from audiopub.ui import engine_catalog

    monkeypatch.setattr(engine_catalog, "_logged_unavailable", set())
    nowhere = Path(os.environ["AUDIOPUB_DATA_DIR"]) / "none"
    monkeypatch.setenv("AUDIOPUB_SUPERTONIC_DIR", str(nowhere))
    with caplog.at_level(logging.INFO, logger="audiopub.ui.engine_catalog"):
        choice = engine_catalog.load_engine_choice("supertonic")
    assert choice.missing and not choice.available
    records = [r for r in caplog.records if "supertonic is unavailable" in r.getMessage()]
    assert [r.levelno for r in records] == [logging.INFO]
