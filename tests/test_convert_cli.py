"""`audiopub convert` end to end on a small generated EPUB, checked with ffmpeg."""

from __future__ import annotations

import importlib
import logging
import re
from pathlib import Path

import pytest
from epub_factory import build_epub, build_frankenstein_like, with_metadata
from tiny_supertonic import build_tiny_model
from voices import add_voice_with_rate

from audiopub import settings
from audiopub.atomic import TEMP_MARK
from audiopub.audio.ffmpeg import probe
from audiopub.audio.stitch import pause_after
from audiopub.book.epub.reader import read_epub
from audiopub.book.lexicons.lexicon import user_lexicon_path
from audiopub.cli import main
from audiopub.jobs import foreground
from audiopub.jobs.events import JobEvent
from audiopub.jobs.models import JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import submit_job
from audiopub.jobs.terminal import JOBS_TITLE_COLUMN, fit_title
from audiopub.jobs.worker import runner_lock
from audiopub.tts import onnx_runtime
from audiopub.tts.registry import get_engine

pytestmark = pytest.mark.usefixtures("embedded_voice_loaded_once")


def test_convert_writes_a_chapterised_m4b(
    three_chapter_epub: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out" / "coastline.m4b"
    assert main(["convert", str(three_chapter_epub), "-o", str(out)]) == 0

    result = probe(out)
    assert [c.title for c in result.chapters] == ["Arrival", "The Harbour; at dusk", "Departure"]
    assert result.tags["title"] == "Coastline"
    assert result.tags["artist"] == "Ann Author"
    assert result.tags["genre"] == "Audiobook"
    assert result.has_cover and result.audio_codec == "aac"
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
        chapters = store.ledger.chapters(job.id)
    # chapter markers are the stitched chapters, back to back, and the book is their sum
    total = sum(c.duration_s for c in chapters)
    assert result.duration_s == pytest.approx(total, abs=0.15)
    for mark, chapter in zip(result.chapters, chapters):
        assert mark.end_s - mark.start_s == pytest.approx(chapter.duration_s, abs=0.01)
    assert not list(out.parent.glob(f"*{TEMP_MARK}*"))
    summary = capsys.readouterr().out
    assert "chapters: 3" in summary and "ran on: CPU" in summary
    assert "this run: " in summary and "chars/s" in summary
    assert "(wall clock, start to finish)" in summary
    assert "whole job" not in summary  # nothing was made before this run

    # The job's telemetry: its speed on the wall clock and its stages; per chapter speed,
    # real-time factor and stages on engine time.
    assert main(["jobs", "--details"]) == 0
    details = capsys.readouterr().out.splitlines()
    assert any(
        line.strip().startswith("stages: prepare ") and " encode " in line for line in details
    ), details
    assert any(
        line.strip().startswith("speaking: ") and "(wall clock, speaking only)" in line
        for line in details
    ), details
    assert any(line.strip() == "chapters (engine time):" for line in details), details
    chapter_lines = [line for line in details if re.search(r"chars/s, RTF \d+\.\d{3}$", line)]
    assert len(chapter_lines) == 3
    stage_lines = [line.strip() for line in details if line.strip().startswith("synthesis ")]
    assert len(stage_lines) == 3
    assert all(
        " model " in line and " phonemes " in line and " stitch " in line for line in stage_lines
    ), stage_lines


def test_title_pages_are_not_narrated_unless_chosen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    epub = build_frankenstein_like(tmp_path / "pg84.epub")
    assert main(["convert", str(epub), "-o", str(tmp_path / "f.m4b")]) == 0
    assert [c.title for c in probe(tmp_path / "f.m4b").chapters] == ["Letter 1", "Chapter 1"]
    assert (
        "Not narrated (title page or dedication): 1 “Frankenstein;”, 2 “or, the Modern "
        "Prometheus”; --chapters 1-4 narrates them too."
    ) in capsys.readouterr().err
    assert main(["convert", str(epub), "-o", str(tmp_path / "all.m4b"), "--chapters", "1-4"]) == 0
    assert len(probe(tmp_path / "all.m4b").chapters) == 4


def test_chapter_selection(three_chapter_epub: Path, tmp_path: Path) -> None:
    out = tmp_path / "two.m4b"
    assert main(["convert", str(three_chapter_epub), "-o", str(out), "--chapters", "1,3"]) == 0
    assert [c.title for c in probe(out).chapters] == ["Arrival", "Departure"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--chapters", "2-9"], "outside 1-3"),
        (
            ["--chapters", "2-1"],
            "Chapter selection '2-1' is reversed: write the lower number first (1-2)",
        ),
        (["--chapters", "x"], "Bad chapter selection"),
        (["--speed", "9"], "speed must be between"),
        (["--voice", "nobody"], "Unknown Piper voice"),
        (["--split", "chapters"], "An .m4b is one file with chapters"),
        (["--format", "opus"], "One opus file for the whole book is not supported yet"),
        (["--subtitles", "srt,ass"], "--subtitles takes srt, vtt, not ass"),
    ],
)
def test_bad_options_are_clear_errors(
    three_chapter_epub: Path,
    tmp_path: Path,
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "x.m4b"
    assert main(["convert", str(three_chapter_epub), "-o", str(out), *argv]) == 1
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_convert_makes_what_is_asked_beside_the_book_without_speaking_again(
    three_chapter_epub: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from audiopub.tts.piper.engine import PiperEngine

    spoken: list[str] = []
    real = PiperEngine.prepare
    monkeypatch.setattr(
        PiperEngine,
        "prepare",
        lambda self, texts, *a, **k: (spoken.extend(texts), real(self, texts, *a, **k))[1],
    )
    monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "1")  # speak in this process, where we count
    out = tmp_path / "coastline.m4b"
    assert (
        main(
            [
                "convert",
                str(three_chapter_epub),
                "-o",
                str(out),
                "--format",
                "mp3",
                "--split",
                "chapters",
                "--subtitles",
                "srt,vtt",
                "--read-along",
            ]
        )
        == 0
    )

    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
        assert len(spoken) == len(store.ledger.all_chunks(job.id))  # each chunk spoken once
    printed = capsys.readouterr().out
    chapters = sorted((tmp_path / "coastline chapters").glob("*.mp3"))
    assert [p.name for p in chapters] == [
        "01 - Arrival.mp3",
        "02 - The Harbour; at dusk.mp3",
        "03 - Departure.mp3",
    ]
    for made in [
        *chapters,
        tmp_path / "coastline.srt",
        tmp_path / "coastline.vtt",
        tmp_path / "coastline (read-aloud).epub",
    ]:
        assert made.is_file() and str(made) in printed
    assert len(list((tmp_path / "coastline chapters").glob("*.srt"))) == 3  # per chapter too


def test_not_an_epub_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = tmp_path / "notes.epub"
    fake.write_text("just some text")
    assert main(["convert", str(fake)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("audiopub: error:") and "Traceback" not in err


def test_voices_lists_the_embedded_voice(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["voices"]) == 0
    assert "en_US-joe-medium" in capsys.readouterr().out


def _tiny_supertonic(tmp_path: Path) -> Path:
    """The committed generator's tiny Supertonic-format model (random weights, real I/O)."""
    return build_tiny_model(tmp_path / "supertonic")


def test_convert_with_supertonic_steps_and_voice(
    three_chapter_epub: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDIOPUB_SUPERTONIC_DIR", str(_tiny_supertonic(tmp_path)))
    out = tmp_path / "st.m4b"
    argv = [
        "convert",
        "--engine",
        "supertonic",
        "--steps",
        "8",
        "--voice",
        "F1",
        str(three_chapter_epub),
        "-o",
        str(out),
    ]
    assert main(argv) == 0
    book = probe(out)
    assert [c.title for c in book.chapters] == ["Arrival", "The Harbour; at dusk", "Departure"]
    assert book.sample_rate == 44100
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
    assert (job.settings.engine, job.settings.steps, job.settings.voice) == ("supertonic", 8, "F1")


def test_voices_says_why_supertonic_is_unavailable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUDIOPUB_SUPERTONIC_DIR", str(tmp_path / "nowhere"))
    assert main(["voices"]) == 0
    out = capsys.readouterr().out
    assert "supertonic: unavailable" in out and "models/README.md" in out


def test_voices_lists_supertonic_voices_when_present(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUDIOPUB_SUPERTONIC_DIR", str(_tiny_supertonic(tmp_path)))
    assert main(["voices"]) == 0
    out = capsys.readouterr().out
    assert "supertonic:" in out and "F1" in out and "M1" in out


def _interrupt_after(monkeypatch: pytest.MonkeyPatch, chunks: int) -> None:
    """Ctrl-C once `chunks` chunks of this run are done, as a person would press it."""
    shown: list[JobEvent] = []
    real_show = foreground.ProgressBar.show

    def show(bar: foreground.ProgressBar, event: JobEvent) -> None:
        real_show(bar, event)
        if event.chunks_done and event.state is JobState.RUNNING:
            shown.append(event)
            if len(shown) == chunks:
                raise KeyboardInterrupt

    monkeypatch.setattr(foreground.ProgressBar, "show", show)


def test_resume_with_another_chapter_selection_narrates_the_new_one(
    three_chapter_epub: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "same.m4b"
    with monkeypatch.context() as patch:
        _interrupt_after(patch, 1)
        assert main(["convert", str(three_chapter_epub), "--chapters", "2", "-o", str(out)]) == 130
    assert main(["convert", str(three_chapter_epub), "--chapters", "3", "-o", str(out)]) == 0
    assert [c.title for c in probe(out).chapters] == ["Departure"]
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
        assert [c.title for c in store.ledger.chapters(job.id)] == ["Departure"]
        # The chapter the first run started on left no audio behind; the one made is kept.
        kept = {p.name for p in (store.job_dir(job.id) / "chunks").iterdir()}
        assert kept == {Path(c.audio_path).name for c in store.ledger.all_chunks(job.id)}


def test_the_summary_after_a_resume_counts_only_this_run(
    three_chapter_epub: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "resumed.m4b"
    with monkeypatch.context() as patch:
        _interrupt_after(patch, 3)
        assert main(["convert", str(three_chapter_epub), "-o", str(out)]) == 130
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
        before = store.ledger.progress(job.id)
    assert 0 < before.chars_done < before.chars_total
    capsys.readouterr()

    assert main(["convert", str(three_chapter_epub), "-o", str(out)]) == 0
    summary = capsys.readouterr().out
    made_now = before.chars_total - before.chars_done
    assert f"this run: {made_now:,} chars in " in summary, summary
    assert f"whole job: {before.chars_total:,} chars in " in summary, summary


def test_the_progress_bar_rate_counts_only_this_run() -> None:
    """tqdm's rate is progress since the bar started over time: a resumed job's bar starts at
    what was already made, or the first update would count all of it as made now."""
    with foreground.ProgressBar() as bar:
        bar.show(JobEvent("j", JobState.RUNNING, chars_done=900, chars_total=1000))
        assert bar._bar is not None
        meter = bar._bar.format_dict
        assert (meter["n"], meter["initial"], meter["total"]) == (900, 900, 1000)
        bar.show(JobEvent("j", JobState.RUNNING, chars_done=950, chars_total=1000))
        meter = bar._bar.format_dict
        assert meter["n"] - meter["initial"] == 50


def test_a_16_khz_voice_keeps_its_sample_rate_to_the_book(
    three_chapter_epub: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Piper's x_low and low voices speak at 16 kHz: their audio must last as long in the
    book as the voice made it, not be played at the default voice's 22.05 kHz (which made it
    last 16/22.05 as long, and sound high and fast)."""
    models = tmp_path / "models"
    add_voice_with_rate(models / "piper", "en_US-test-x_low", 16_000)
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(models))
    out = tmp_path / "low.m4b"
    # One chapter (four chunks) tells 16 kHz from 22.05 kHz; the others would only be more to say.
    command = ["convert", str(three_chapter_epub), "--voice", "en_US-test-x_low", "-o", str(out)]
    assert main([*command, "--chapters", "1"]) == 0
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
        chunks = store.ledger.all_chunks(job.id)
        chapters = store.ledger.chapters(job.id)
    assert {c.sample_rate for c in chunks} == {16_000}
    speech_s = sum(c.duration_s for c in chunks)  # frames / 16,000, as the voice made them
    pauses_s = sum(pause_after(c.ends_paragraph) for c in chunks) + (
        settings.CHAPTER_HEAD_S + settings.CHAPTER_PAUSE_S
    ) * len(chapters)
    book_s = probe(out).duration_s
    # The stitcher only trims near-silence at each chunk's edges (a few per cent of speech);
    # played at 22.05 kHz the speech would have lasted 73 % as long.
    assert pauses_s + 0.85 * speech_s < book_s <= pauses_s + speech_s + 0.1


@pytest.mark.parametrize(
    "argv, expected",
    [
        ([], ("127.0.0.1", 8080, True, [])),
        (["--port", "9000", "--no-browser"], ("127.0.0.1", 9000, False, [])),
        (["--host", "0.0.0.0"], ("0.0.0.0", 8080, True, [])),
        (["serve", "--port", "9000"], ("127.0.0.1", 9000, True, [])),
        (["--port", "9000", "serve", "--no-browser"], ("127.0.0.1", 9000, False, [])),
        (
            ["--allow-host", "a.lan", "--allow-host", "b.lan"],
            ("127.0.0.1", 8080, True, ["a.lan", "b.lan"]),
        ),
        (["serve", "--allow-host", "a.lan"], ("127.0.0.1", 8080, True, ["a.lan"])),
    ],
)
def test_serve_options_work_with_and_without_the_serve_command(
    argv: list[str], expected: tuple[str, int, bool, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # By module name: after the web UI tests, the `audiopub` package may lack its `ui` attribute.
    app_module = importlib.import_module("audiopub.ui.app")

    served: list[tuple[str, int, bool, list[str]]] = []
    monkeypatch.setattr(
        app_module,
        "main",
        lambda host, port, show, allowed_hosts: served.append(
            (host, port, show, list(allowed_hosts))
        ),
    )
    assert main(argv) == 0
    assert served == [expected]


def test_ctrl_c_while_following_another_runner_pauses_the_job(
    three_chapter_epub: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    def ctrl_c(seconds: float) -> None:
        raise KeyboardInterrupt

    with JobStore.open_default() as store:
        lock = runner_lock(store)
        lock.acquire()  # as the web app's worker would: the CLI can only follow the job
        try:
            monkeypatch.setattr(foreground.time, "sleep", ctrl_c)  # Ctrl-C while it waits
            assert main(["convert", str(three_chapter_epub), "-o", str(tmp_path / "b.m4b")]) == 130
        finally:
            lock.release()
        (job,) = store.queue.list_jobs()
    assert job.state is JobState.PAUSED  # the worker stops it after the current chunk
    err = capsys.readouterr().err
    assert "following this job there" in err
    assert "Paused. Run the same command again to continue." in err


def test_show_spoken_prints_what_will_be_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from epub_factory import build_epub

    epub = build_epub(
        tmp_path / "n.epub",
        [
            ("CHAPTER IX", ["It was 1850 and Dr. Watson was out.", "Nothing to change here."]),
        ],
    )
    assert main(["convert", str(epub), "--show-spoken", "-o", str(tmp_path / "n.m4b")]) == 0
    out = capsys.readouterr().out
    assert "CHAPTER IX\n  → Chapter nine" in out
    assert (
        "It was 1850 and Dr. Watson was out.\n  → It was eighteen fifty and Doctor Watson was out."
    ) in out
    assert "Nothing to change" not in out


def test_a_book_in_another_language_than_the_voice_is_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from epub_factory import build_epub

    epub = build_epub(tmp_path / "fr.epub", [("Un", ["Il était 1850."])], language="fr")
    assert main(["convert", str(epub), "-o", str(tmp_path / "fr.m4b")]) == 0
    err = capsys.readouterr().err
    assert (
        "The book is in fr, the voice en_US-joe-medium speaks en-US: its words will be "
        "pronounced as English, its numbers and abbreviations read by fr rules." in err
    )
    # A voice in the book's language, from the lists shipped with Audiopub, and how to get it.
    assert (
        "For French, choose piper:fr_FR-siwis-medium (`audiopub voices download "
        "piper:fr_FR-siwis-medium`, then --voice fr_FR-siwis-medium) or Kokoro's ff_siwis "
        "(`audiopub voices download kokoro`, then --engine kokoro --voice ff_siwis)." in err
    )


def test_serve_options_with_another_command_are_an_error(
    three_chapter_epub: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--port", "9000", "convert", str(three_chapter_epub)])
    assert exit_info.value.code == 2
    assert "are for serving the web UI, not for convert" in capsys.readouterr().err


def test_a_gpu_that_is_not_there_is_said_once_in_the_summary(
    three_chapter_epub: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "1")  # its sessions in this process: logged here
    monkeypatch.setattr(onnx_runtime, "available_providers", lambda: [onnx_runtime.CPU])
    assert (
        main(
            [
                "convert",
                str(three_chapter_epub),
                "-o",
                str(tmp_path / "b.m4b"),
                "--gpu",
                "--chapters",
                "1",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    # No logger line (WARNING audiopub.tts.onnx_runtime: …) before the summary says the same.
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.records
    said = (captured.out + captured.err).count("GPU requested")
    assert said == 1 and "ran on: CPU — GPU requested but unavailable" in captured.out


def test_the_progress_bar_starts_before_the_first_chunk_and_says_why_it_waits() -> None:
    with foreground.ProgressBar() as bar:
        # As a job sends it once planned: nothing spoken yet, the engine starting.
        bar.show(
            JobEvent(
                "j",
                JobState.RUNNING,
                chars_done=0,
                chars_total=12_345,
                stage="Starting the speech engine…",
            )
        )
        assert bar._bar is not None
        first = str(bar._bar)
    assert "| 0/12,345 chars" in first and "Starting the speech engine…" in first


def test_the_progress_bar_counts_in_whole_numbers() -> None:
    with foreground.ProgressBar() as bar:
        bar.show(
            JobEvent(
                "j", JobState.RUNNING, chars_done=68, chars_total=12_345, chapter_title="Arrival"
            )
        )
        assert bar._bar is not None
        shown = str(bar._bar)
    assert "| 68/12,345 chars" in shown and "Arrival" in shown
    assert "68.0" not in shown and "12.3k" not in shown


def test_jobs_lists_titles_as_wide_as_the_terminal_one_line_a_job(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    title = "The Remarkable Adventures of a Very Long Title Indeed, Volume Two"
    book = build_epub(tmp_path / "long.epub", [("One", ["A short sentence."])], title=title)
    with JobStore.open_default() as store:
        submit_job(
            store, book, read_epub(book), tmp_path / "long.m4b", JobSettings(), get_engine("piper")
        )
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["jobs"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert f"  {title}  {tmp_path / 'long.m4b'}" in line
    # Too narrow: the title is shortened at a word, never wrapped onto lines of its own.
    columns = JOBS_TITLE_COLUMN + 40 + len(str(tmp_path / "long.m4b"))
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["jobs", "--details"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "  The Remarkable Adventures of a Very…  " in lines[0] and len(lines[0]) <= columns
    assert lines[0].endswith(str(tmp_path / "long.m4b"))
    assert all(line.startswith("          ") for line in lines[1:])  # the details, indented
    assert fit_title(title, 20) == "The Remarkable…"
    assert fit_title("Supercalifragilisticexpialidocious", 20) == "Supercalifragilisti…"


def test_the_same_convert_again_is_the_same_job_and_other_settings_a_new_one(
    three_chapter_epub: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "coastline.m4b"
    # The chapter that says "harbour" (the lexicon's word below) is book enough for the three
    # jobs; the book's other chapters would only be more to say.
    command = ["convert", str(three_chapter_epub), "-o", str(out), "--chapters", "2"]
    assert main(command) == 0
    made = out.stat().st_mtime_ns
    capsys.readouterr()
    assert main([*command, "--subtitles", "srt"]) == 0  # what is asked beside it is still made
    captured = capsys.readouterr()
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
    assert f"Already made with these settings: {out} (job {job.id[:8]})" in captured.err
    assert str(tmp_path / "coastline.srt") in captured.out
    assert out.stat().st_mtime_ns == made  # the book was not made again
    assert main(["jobs"]) == 0 and len(capsys.readouterr().out.splitlines()) == 1

    # Other words (your lexicon edited since): another job, as are other settings.
    user_lexicon_path(settings.data_dir()).write_text("harbour\tport\n", "utf-8")
    assert main(command) == 0
    assert main([*command, "--speed", "1.2"]) == 0
    with JobStore.open_default() as store:
        first, second, third = store.queue.list_jobs()
    assert first.id == job.id and second.settings == job.settings
    assert third.settings.speed == 1.2
    assert all(made.state is JobState.DONE for made in (first, second, third))


def test_the_book_names_its_narrator_description_and_language(tmp_path: Path) -> None:
    book = with_metadata(
        build_epub(
            tmp_path / "livre.epub",
            [("Un", ["Le train arriva."])],
            title="Le Livre",
            language="fr-FR",
        ),
        "<dc:description>A short story by the sea.</dc:description>",
    )
    out = tmp_path / "livre.m4b"
    assert main(["convert", str(book), "-o", str(out)]) == 0
    assert (
        main(
            [
                "convert",
                str(book),
                "-o",
                str(tmp_path / "livre.m4a"),
                "--format",
                "m4a",
                "--split",
                "chapters",
            ]
        )
        == 0
    )
    (chapter,) = (tmp_path / "livre chapters").glob("*.m4a")
    for made in (out, chapter):  # the book and each chapter's own file
        result = probe(made)
        assert result.tags["composer"] == "Audiopub (Piper, en_US-joe-medium)"  # the narrator
        assert result.tags["description"] == "A short story by the sea."
        assert result.audio_language == "fra"  # ISO 639-2/T, as MP4 stores it; not "und"
    assert probe(chapter).tags["title"] == "Un"
