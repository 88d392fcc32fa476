"""Timings kept with a job, and the subtitles made from them (`audiopub.export`)."""

from __future__ import annotations

import re
import shutil
import sqlite3
import struct
import subprocess
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from epub_factory import build_epub, tiny_png, with_metadata
from lxml import etree

from audiopub.audio.ffmetadata import BookTags
from audiopub.audio.ffmpeg import ffmpeg_exe, probe
from audiopub.audio.loudness import Measured, normalise_filter
from audiopub.audio.stitch import head_frames
from audiopub.cli import main
from audiopub.errors import AudiopubError
from audiopub.export import encode
from audiopub.export.chapter_audio import chapter_wavs
from audiopub.export.names import numbered, safe_name
from audiopub.export.subtitles import (
    CUE_CHARS,
    LINE_CHARS,
    Cue,
    chapter_cues,
    to_srt,
    to_webvtt,
)
from audiopub.export.timeline import ChapterTimeline, Passage, book_timeline
from audiopub.jobs.store import JobStore

# --- formats ----------------------------------------------------------------------------------


def test_srt_numbers_from_one_and_counts_hours_past_ten() -> None:
    cues = [
        Cue(0.0, 1.2345, "First."),
        Cue(36_000.5, 36_001.0, "Ten hours in."),
        Cue(450_000.0, 450_002.0, "Past a hundred."),
    ]
    assert to_srt(cues) == (
        "1\n00:00:00,000 --> 00:00:01,234\nFirst.\n\n"
        "2\n10:00:00,500 --> 10:00:01,000\nTen hours in.\n\n"
        "3\n125:00:00,000 --> 125:00:02,000\nPast a hundred.\n"
    )


def test_webvtt_has_its_header_dots_and_escapes() -> None:
    text = to_webvtt([Cue(3723.004, 3724.0, "Fish & chips <cheap> --> here")])
    assert text == (
        "WEBVTT\n\n01:02:03.004 --> 01:02:04.000\nFish &amp; chips &lt;cheap&gt; --&gt; here\n"
    )


def test_cues_never_overlap_or_run_backwards_after_rounding() -> None:
    srt = to_srt([Cue(0.0, 1.0004, "a"), Cue(1.0001, 1.0003, "b"), Cue(0.5, 2.0, "c")])
    times = re.findall(r"(\S+) --> (\S+)", srt)
    assert times == [
        ("00:00:00,000", "00:00:01,000"),
        ("00:00:01,000", "00:00:01,000"),
        ("00:00:01,000", "00:00:02,000"),
    ]


def test_a_chunk_is_cued_by_sentence_with_its_time_shared_by_characters() -> None:
    long = (
        "He ate the starfish and the garfish, and the crab and the dab, and the plaice "
        "and the dace, and the skate and his mate."
    )
    chapter = ChapterTimeline(
        1,
        "One",
        100.0,
        30.0,
        (Passage(f"Short one. {long}", 2.0, 12.0), Passage("Last.", 13.0, 14.0)),
    )

    cues = chapter_cues(chapter)

    assert [c.text.replace("\n", " ") for c in cues][:1] == ["Short one."]
    assert " ".join(c.text.replace("\n", " ") for c in cues[1:-1]) == long
    assert all(len(c.text) <= CUE_CHARS + 1 for c in cues)  # the line break is one more
    assert all(len(line) <= LINE_CHARS for c in cues for line in c.text.split("\n") if " " in line)
    # Exact at the chunk's ends; in between, in proportion to the characters.
    assert (cues[0].start_s, cues[-2].end_s, cues[-1].start_s, cues[-1].end_s) == (
        2.0,
        12.0,
        13.0,
        14.0,
    )
    assert cues[0].end_s == pytest.approx(
        2.0
        + 10.0
        * len("Short one.")
        / (len("Short one.") + sum(len(c.text) - c.text.count("\n") for c in cues[1:-1])),
        abs=0.02,
    )
    assert chapter_cues(chapter, offset_s=100.0)[0].start_s == 102.0


def test_a_cue_starts_at_its_first_words_time_where_the_words_are_known() -> None:
    text = "Yes. Antidisestablishmentarianism is long. No."
    exact = Passage(text, 1.0, 4.0, (1.02, 1.4, 2.9, 3.1, 3.6))
    cues = chapter_cues(ChapterTimeline(1, "One", 0.0, 5.0, (exact,)))
    assert [(c.start_s, c.end_s, c.text) for c in cues] == [
        (1.0, 1.4, "Yes."),
        (1.4, 3.6, "Antidisestablishmentarianism is long."),
        (3.6, 4.0, "No."),
    ]
    assert cues[1].word_starts_s == (1.4, 2.9, 3.1)
    # Words that do not fit the passage's text: estimated by characters, as without words.
    odd = Passage(text, 1.0, 4.0, (1.02, 1.4))
    estimated = chapter_cues(ChapterTimeline(1, "One", 0.0, 5.0, (odd,)))
    assert estimated == chapter_cues(
        ChapterTimeline(1, "One", 0.0, 5.0, (Passage(text, 1.0, 4.0),))
    )
    assert estimated[1].start_s == pytest.approx(1.0 + 3.0 * 4 / (len(text) - 2))


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ('What? A "Tale": Part 1/2', "What A Tale Part 1 2"),
        ("CON", "_CON"),
        ("aux.txt", "_aux.txt"),
        ("...", "Untitled"),
        ("  Loomings. ", "Loomings"),
        ("x" * 300, "x" * 100),
        ("../../etc/passwd", "etc passwd"),
        ("", "Untitled"),
        ("Ærø: «Fjord»/Sky?", "Ærø «Fjord» Sky"),
    ],
)
def test_file_names_are_safe_everywhere(title: str, name: str) -> None:
    assert safe_name(title) == name


def test_numbered_names_sort_in_reading_order() -> None:
    names = [numbered(n, 120, f"Chapter {n}") for n in (2, 10, 100)]
    assert names == ["002 - Chapter 2", "010 - Chapter 10", "100 - Chapter 100"]
    assert sorted(names) == names
    assert numbered(1, 3, "Loomings") == "01 - Loomings"


# --- from a real conversion -------------------------------------------------------------------


@pytest.fixture(scope="module")
def converted_book(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, Path]:
    """The book converted once for the module: its data dir, its job and its .m4b."""
    folder = tmp_path_factory.mktemp("converted")
    data = folder / "audiopub-data"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUDIOPUB_DATA_DIR", str(data))
        patch.setenv("AUDIOPUB_CPU_WORKERS", "1")
        epub = build_epub(
            folder / "b.epub",
            [
                (
                    "Arrival",
                    [
                        "Dr. Smith paid £5 in 1850. The train was late.",
                        "A dog slept in the shade of the ticket office.",
                    ],
                ),
                ("Departure", ["Somewhere a radio was playing an old dance tune."]),
            ],
            title="Coastline",
            author="Ann Author",
            cover=tiny_png(),
        )
        out = folder / "Coastline.m4b"
        assert main(["convert", str(epub), "-o", str(out)]) == 0
        with JobStore.open_default() as store:
            (job,) = store.queue.list_jobs()
    return data, job.id, out


@pytest.fixture
def finished_book(
    converted_book: tuple[Path, str, Path], data_dir: Path, tmp_path: Path
) -> tuple[str, Path]:
    """The converted book's job and .m4b, copied into this test's data dir and folder, where
    the test may change them (the job names the copy as its book)."""
    data, job_id, out = converted_book
    shutil.copytree(data, data_dir)
    book = shutil.copy2(out, tmp_path / out.name)
    with closing(sqlite3.connect(data_dir / "jobs.sqlite3")) as conn, conn:
        conn.execute("UPDATE jobs SET output_path = ? WHERE id = ?", (str(book), job_id))
    return job_id, book


def test_subtitles_follow_the_audio_to_the_sample(
    finished_book: tuple[str, Path], tmp_path: Path
) -> None:
    job_id, book = finished_book
    assert main(["export", job_id[:8], "--per-chapter"]) == 0

    srt = (tmp_path / "Coastline.srt").read_text("utf-8")
    texts = [block.split("\n", 2)[2] for block in srt.strip().split("\n\n")]
    # The book's own text, as written, one sentence a cue.
    assert [t.replace("\n", " ") for t in texts] == [
        "Arrival",
        "Dr. Smith paid £5 in 1850.",
        "The train was late.",
        "A dog slept in the shade of the ticket office.",
        "Departure",
        "Somewhere a radio was playing an old dance tune.",
    ]
    assert (tmp_path / "Coastline.vtt").read_text("utf-8").startswith("WEBVTT\n")
    # Each chapter's first words come after its room tone (0.75 s), on its own clock too.
    chapter_two = (tmp_path / "Coastline chapters" / "02 - Departure.srt").read_text("utf-8")
    assert chapter_two.startswith("1\n00:00:00,750 --> ")

    # Heard in the finished .m4b: speech inside every cue, silence between chunks.
    wav = tmp_path / "decoded.wav"
    subprocess.run([ffmpeg_exe(), "-v", "error", "-i", str(book), "-ac", "1", str(wav)], check=True)
    audio, rate = sf.read(wav, dtype="float32")
    cues = [(_seconds(a), _seconds(b)) for a, b in re.findall(r"(\S+) --> (\S+)", srt)]
    assert cues[-1][1] <= probe(book).duration_s
    for start, end in cues:
        assert _rms(audio, rate, start, end) > 0.01, (start, end)
    chunk_ends = [(end, start) for (_, end), (start, _) in zip(cues, cues[1:]) if start > end]
    assert len(chunk_ends) == 4  # a pause between every two of the five chunks
    assert 0.5 <= cues[0][0] <= 1.0  # the book's first words, after the head's room tone
    chunk_ends.insert(0, (0.0, cues[0][0]))
    for end, start in chunk_ends:
        assert _rms(audio, rate, end + 0.01, start - 0.01) < 1e-3, (end, start)


def test_subtitles_keep_the_books_spelling_whatever_the_lexicon_says(tmp_path: Path) -> None:
    epub = build_epub(tmp_path / "b.epub", [("Arrival", ["Hermione took the train."])])
    names = tmp_path / "names.tsv"
    names.write_text("Hermione\ther-MY-oh-nee\n", "utf-8")
    out = tmp_path / "b.m4b"
    assert main(["convert", str(epub), "--lexicon", str(names), "-o", str(out)]) == 0
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
        spoken = [chunk.spoken for chunk in store.ledger.all_chunks(job.id)]
    assert "her-MY-oh-nee took the train." in spoken  # what the voice said

    assert main(["export", job.id, "--format", "srt"]) == 0
    srt = (tmp_path / "b.srt").read_text("utf-8")
    assert "Hermione took the train." in srt and "her-MY-oh-nee" not in srt


def test_only_finished_books_with_timings_export(
    finished_book: tuple[str, Path], data_dir: Path
) -> None:
    job_id, _ = finished_book
    database = data_dir / "jobs.sqlite3"
    with sqlite3.connect(database) as conn:  # as a job finished before timings were kept
        conn.execute("UPDATE chunks SET clip_start = NULL WHERE job_id = ?", (job_id,))
    with (
        JobStore.open_default() as store,
        pytest.raises(AudiopubError, match="convert the book again"),
    ):
        book_timeline(store, job_id)

    with sqlite3.connect(database) as conn:
        conn.execute("UPDATE jobs SET state = 'paused' WHERE id = ?", (job_id,))
    with JobStore.open_default() as store, pytest.raises(AudiopubError, match="is paused"):
        book_timeline(store, job_id)


@pytest.mark.parametrize(
    ("format_name", "suffix", "codec"),
    [
        ("mp3", ".mp3", "mp3"),
        ("mp3-cbr", ".mp3", "mp3"),
        ("opus", ".opus", "opus"),
        ("m4a", ".m4a", "aac"),
    ],
)
def test_a_file_per_chapter_tagged_with_its_cover(
    finished_book: tuple[str, Path], tmp_path: Path, format_name: str, suffix: str, codec: str
) -> None:
    job_id, book = finished_book
    assert main(["export", job_id, "--format", format_name, "-o", str(tmp_path / "out")]) == 0

    folder = tmp_path / "out" / "Coastline chapters"
    assert sorted(p.name for p in folder.iterdir()) == [
        f"01 - Arrival{suffix}",
        f"02 - Departure{suffix}",
    ]
    with JobStore.open_default() as store:
        chapters = store.ledger.chapters(job_id)
    for number, (path, chapter) in enumerate(zip(sorted(folder.iterdir()), chapters), start=1):
        written = probe(path)
        assert written.audio_codec == codec and written.has_cover
        # As long as the chapter, decoded (containers' durations count encoder padding).
        assert _decoded_seconds(path) == pytest.approx(
            chapter.frames / chapter.sample_rate, abs=0.03
        )
        # And as long as the chapter in the .m4b: the split adds nothing (the room tone at
        # the head and tail is part of the chapter, in both).
        mark = probe(book).chapters[number - 1]
        assert _decoded_seconds(path) == pytest.approx(mark.end_s - mark.start_s, abs=0.1)
        if format_name == "mp3-cbr":
            assert written.sample_rate == 44_100
        if format_name != "opus":  # Ogg keeps its comments with the stream, not the file
            assert {k: written.tags.get(k) for k in ("title", "album", "artist", "track")} == {
                "title": chapter.title,
                "album": "Coastline",
                "artist": "Ann Author",
                "track": f"{number}/2",
            }


def test_exported_files_meet_the_audiobook_loudness_standard(
    finished_book: tuple[str, Path], tmp_path: Path
) -> None:
    """What distributors check: RMS between -23 and -18 dB, peaks no higher than -3 dB (true
    peaks too, with a margin, as a player decodes the file)."""
    job_id, _ = finished_book
    assert main(["export", job_id, "--format", "mp3-cbr", "-o", str(tmp_path / "on")]) == 0
    assert main(["export", job_id, "--format", "mp3", "-o", str(tmp_path / "on-vbr")]) == 0
    assert (
        main(
            [
                "export",
                job_id,
                "--format",
                "mp3-cbr",
                "--loudness",
                "off",
                "-o",
                str(tmp_path / "off"),
            ]
        )
        == 0
    )

    for path in [*(tmp_path / "on").rglob("*.mp3"), *(tmp_path / "on-vbr").rglob("*.mp3")]:
        rms, peak = _levels(path)
        assert -23.0 <= rms <= -18.0 and peak <= -3.0, (path.name, rms, peak)
        assert _true_peak(path) <= encode.ENCODED_PEAK_CEILING_DB, path
    quiet = [_levels(path)[0] for path in (tmp_path / "off").rglob("*.mp3")]
    assert all(rms < -23.0 for rms in quiet), quiet  # as the voice made it: too quiet


def test_clicks_still_peak_under_the_limit_once_encoded(tmp_path: Path) -> None:
    """Ten clicks a second, as sharp as a sample can be, over a faint hum: loudnorm's limiter
    lets single-sample spikes through, and the encoder adds to them (the MP3 peaked at
    -0.7 dB). Measured as a player decodes each file, the true peak stays under -3 dB with a
    margin."""
    rate = 22_050
    audio = 0.02 * np.sin(2 * np.pi * 220 * np.arange(6 * rate) / rate)
    audio[:: rate // 10] = 0.5
    clicks = tmp_path / "clicks.wav"
    sf.write(clicks, audio.astype(np.float32), rate, subtype="PCM_16")
    for format_name in ("mp3", "mp3-cbr", "opus", "m4a"):
        out = tmp_path / f"clicks{encode.AUDIO_FORMATS[format_name].suffix}"
        encode.encode_audio([clicks], out, format_name, BookTags("Clicks", "Ann Author"), None)
        peak = _levels(out)[1]
        true_peak = _true_peak(out)
        assert peak <= true_peak + 0.1 and true_peak <= encode.ENCODED_PEAK_CEILING_DB, (
            format_name,
            peak,
            true_peak,
        )


def test_a_file_the_encoder_lifts_over_the_ceiling_is_encoded_again_quieter(
    finished_book: tuple[str, Path], data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the encoder adds, the file made is measured and encoded again, quieter by
    what it overshot: with the ceiling at -6 dB, a chapter levelled to -3.5 dB true peak."""
    job_id, _ = finished_book
    with JobStore.open_default() as store:
        wav = chapter_wavs(store, job_id, data_dir)[0]
    plain = tmp_path / "plain.mp3"
    encode.encode_audio([wav], plain, "mp3", BookTags("Arrival", "Ann Author"), None)
    monkeypatch.setattr(encode, "ENCODED_PEAK_CEILING_DB", -6.0)
    quieter = tmp_path / "quieter.mp3"
    encode.encode_audio([wav], quieter, "mp3", BookTags("Arrival", "Ann Author"), None)
    assert _true_peak(plain) > -6.0 >= _true_peak(quieter)
    assert _levels(quieter)[0] < _levels(plain)[0] - 1.5  # the whole file, not its peaks


def test_silence_is_left_as_it_is() -> None:
    silent = Measured(float("-inf"), float("-inf"), 0.0, -70.0, 0.0)
    assert normalise_filter(silent, 22_050) == "aresample=22050"


def test_a_chapter_mostly_pause_is_aimed_louder_for_its_rms() -> None:
    """Loudness gates the room tone out, RMS does not: -20 LUFS would leave this one's RMS at
    -23.5 dB, under the window, so it is aimed 2.5 dB louder; speech alone is aimed as usual."""
    mostly_pause = Measured(-26.0, -8.0, 3.0, -36.0, 0.0, rms_db=-29.5)
    assert "loudnorm=I=-17.5:" in normalise_filter(mostly_pause, 22_050)
    speech = Measured(-26.0, -8.0, 3.0, -36.0, 0.0, rms_db=-26.5)
    assert "loudnorm=I=-20.0:" in normalise_filter(speech, 22_050)


def test_the_whole_book_in_one_mp3_with_its_chapters(
    finished_book: tuple[str, Path], tmp_path: Path
) -> None:
    job_id, book = finished_book
    assert main(["export", job_id, "--format", "mp3-book", "-o", str(tmp_path / "out")]) == 0

    mp3, m4b = probe(tmp_path / "out" / "Coastline.mp3"), probe(book)
    assert mp3.audio_codec == "mp3" and mp3.has_cover and mp3.tags["album"] == "Coastline"
    assert mp3.duration_s == pytest.approx(m4b.duration_s, abs=0.1)
    assert (
        [c.title for c in mp3.chapters]
        == [c.title for c in m4b.chapters]
        == ["Arrival", "Departure"]
    )
    # The ID3v2 CHAP frames (what players read) hold the chapters' own times; ffmpeg reading
    # them back shifts them by the MP3 encoder's delay, so read the frames themselves.
    frames = _chap_frames((tmp_path / "out" / "Coastline.mp3").read_bytes())
    assert frames == [(round(c.start_s * 1000), round(c.end_s * 1000)) for c in m4b.chapters]


def test_chapters_are_made_again_from_the_kept_chunks(
    finished_book: tuple[str, Path],
    tmp_path: Path,
    data_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    job_id, _ = finished_book
    with JobStore.open_default() as store:  # the finished job kept no chapter WAVs
        assert not (store.job_dir(job_id) / "chapters").exists()
        first_chunk = store.job_dir(job_id) / store.ledger.all_chunks(job_id)[0].audio_path
    first_chunk.unlink()  # as AUDIOPUB_KEEP_CHUNK_AUDIO=0 would have
    assert main(["export", job_id, "--format", "mp3", "-o", str(tmp_path / "out")]) == 1
    assert "chapter 1 (“Arrival”) was not kept" in capsys.readouterr().err
    assert not list((tmp_path / "out").rglob("*.mp3"))
    assert main(["export", job_id, "--format", "mp3", "--format", "mp3-cbr"]) == 1
    assert "choose one" in capsys.readouterr().err


def test_every_chapter_has_room_tone_at_its_head_and_tail(
    finished_book: tuple[str, Path], tmp_path: Path
) -> None:
    """What distributors (ACX) ask of each file: 0.5-1 s of room tone before the first words,
    1-5 s after the last; heard in the .m4b, where its chapter marks say each chapter is."""
    _, book = finished_book
    wav = tmp_path / "decoded.wav"
    subprocess.run([ffmpeg_exe(), "-v", "error", "-i", str(book), "-ac", "1", str(wav)], check=True)
    audio, rate = sf.read(wav, dtype="float32")
    for mark in probe(book).chapters:
        chapter = audio[round(mark.start_s * rate) : round(mark.end_s * rate)]
        loud = np.flatnonzero(np.abs(chapter) > 10 ** (-50 / 20))  # the stitcher's threshold
        head, tail = loud[0] / rate, (len(chapter) - loud[-1]) / rate
        assert 0.5 <= head <= 1.0 and 1.0 <= tail <= 5.0, (mark.title, head, tail)


def test_a_book_made_before_chapters_had_a_head_exports_as_it_was(
    finished_book: tuple[str, Path], data_dir: Path
) -> None:
    """A chapter is made again as its stored timings say: without room tone at the head for
    a book made before there was any, so exported audio and exported timings agree."""
    job_id, _ = finished_book
    with JobStore.open_default() as store:
        chapter = store.ledger.chapters(job_id)[0]
        head = store.ledger.chapter_chunks(job_id, 0)[0].clip_start
    assert head == head_frames(chapter.sample_rate)
    with sqlite3.connect(data_dir / "jobs.sqlite3") as conn:  # as such a book was stored
        conn.execute(
            "UPDATE chunks SET clip_start = clip_start - ? WHERE job_id = ?", (head, job_id)
        )
        conn.execute(
            "UPDATE chapters SET frames = frames - ?, duration_s = duration_s - ? WHERE job_id = ?",
            (head, head / chapter.sample_rate, job_id),
        )
    with JobStore.open_default() as store:
        wavs = chapter_wavs(store, job_id, data_dir)
        chapters, timeline = store.ledger.chapters(job_id), book_timeline(store, job_id)
    for wav, row, passages in zip(wavs, chapters, (c.passages for c in timeline)):
        audio, rate = sf.read(wav, dtype="float32")
        assert len(audio) == row.frames
        assert passages[0].start_s == 0.0
        loud = np.flatnonzero(np.abs(audio) > 0.01)
        assert loud[0] / rate < 0.1  # the first words at once, as the book was made


def _decoded_seconds(path: Path) -> float:
    result = subprocess.run(
        [
            ffmpeg_exe(),
            "-v",
            "error",
            "-i",
            str(path),
            "-f",
            "s16le",
            "-ac",
            "1",
            "-ar",
            "48000",
            "-",
        ],
        capture_output=True,
        check=True,
    )
    return len(result.stdout) / 2 / 48_000


def _levels(path: Path) -> tuple[float, float]:
    """(RMS level, peak level) in dB of a file, as ffmpeg's astats measures them."""
    result = subprocess.run(
        [
            ffmpeg_exe(),
            "-hide_banner",
            "-nostdin",
            "-i",
            str(path),
            "-af",
            "astats=measure_overall=RMS_level+Peak_level:measure_perchannel=none",
            "-f",
            "null",
            "-",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    rms = re.search(r"RMS level dB: (\S+)", result.stderr)
    peak = re.search(r"Peak level dB: (\S+)", result.stderr)
    assert rms and peak, result.stderr[-500:]
    return float(rms.group(1)), float(peak.group(1))


def _true_peak(path: Path) -> float:
    """The true peak in dBFS of a file as a player decodes it (ffmpeg's ebur128, 4x
    oversampled)."""
    result = subprocess.run(
        [
            ffmpeg_exe(),
            "-hide_banner",
            "-nostdin",
            "-i",
            str(path),
            "-vn",
            "-af",
            "ebur128=peak=true:framelog=quiet",
            "-f",
            "null",
            "-",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.findall(r"True peak:\s*Peak:\s*(\S+) dBFS", result.stderr, re.S)
    assert found, result.stderr[-500:]
    return float(found[-1])


def _chap_frames(data: bytes) -> list[tuple[int, int]]:
    """(start ms, end ms) of each ID3v2 CHAP frame, in order."""
    found, position = [], data.find(b"CHAP")
    while position >= 0:
        size = struct.unpack(">I", data[position + 4 : position + 8])[0]
        body = data[position + 10 : position + 10 + size]
        element_id_end = body.index(b"\0")
        found.append(struct.unpack(">II", body[element_id_end + 1 : element_id_end + 9]))
        position = data.find(b"CHAP", position + 10 + size)
    return found


def _seconds(stamp: str) -> float:
    hours, minutes, rest = stamp.split(":")
    return int(hours) * 3600 + int(minutes) * 60 + float(rest.replace(",", "."))


def _rms(audio: np.ndarray, rate: int, start: float, end: float) -> float:
    part = audio[int(start * rate) : int(end * rate)]
    return float(np.sqrt(np.mean(part**2))) if len(part) else 0.0


# --- Audiobookshelf ---------------------------------------------------------------------------

SERIES = """
    <dc:description>&lt;p&gt;A &lt;em&gt;short&lt;/em&gt; voyage.&lt;/p&gt;</dc:description>
    <dc:date>1907-05-01</dc:date>
    <meta property="belongs-to-collection" id="set">Great Voyages</meta>
    <meta refines="#set" property="collection-type">set</meta>
    <meta property="belongs-to-collection" id="c1">Coast Tales</meta>
    <meta refines="#c1" property="collection-type">series</meta>
    <meta refines="#c1" property="group-position">2</meta>"""


def test_a_book_folder_audiobookshelf_files_rightly(tmp_path: Path) -> None:
    epub = with_metadata(
        build_epub(
            tmp_path / "b.epub",
            [("Arrival", ["The train was late."])],
            title="Coastline",
            author="Ann Author",
            cover=tiny_png(),
        ),
        SERIES,
    )
    assert main(["convert", str(epub), "-o", str(tmp_path / "Coastline.m4b")]) == 0
    with JobStore.open_default() as store:
        (job,) = store.queue.list_jobs()
    library = tmp_path / "library"

    assert main(["export", job.id, "--audiobookshelf", str(library)]) == 0

    folder = library / "Ann Author" / "Coast Tales" / "Vol 2 - Coastline"
    assert sorted(p.name for p in folder.iterdir()) == [
        "Coastline.m4b",
        "cover.jpg",
        "desc.txt",
        "metadata.opf",
        "reader.txt",
    ]
    assert (folder / "Coastline.m4b").samefile(tmp_path / "Coastline.m4b")  # no second copy
    assert (folder / "cover.jpg").read_bytes().startswith(b"\xff\xd8\xff")
    assert (folder / "desc.txt").read_text("utf-8") == "A short voyage.\n"
    assert (folder / "reader.txt").read_text("utf-8") == "Audiopub (Piper, en_US-joe-medium)\n"
    opf = etree.parse(str(folder / "metadata.opf"))
    ns = {"dc": "http://purl.org/dc/elements/1.1/", "opf": "http://www.idpf.org/2007/opf"}
    assert opf.xpath("//dc:title/text()", namespaces=ns) == ["Coastline"]
    assert opf.xpath("//dc:creator[@opf:role='aut']/text()", namespaces=ns) == ["Ann Author"]
    assert opf.xpath("//dc:creator[@opf:role='nrt']/text()", namespaces=ns) == [
        "Audiopub (Piper, en_US-joe-medium)"
    ]
    assert opf.xpath("//dc:date/text()", namespaces=ns) == ["1907"]
    assert opf.xpath("//opf:meta[@name='calibre:series']/@content", namespaces=ns) == [
        "Coast Tales"
    ]
    assert opf.xpath("//opf:meta[@name='calibre:series_index']/@content", namespaces=ns) == ["2"]
    assert probe(folder / "Coastline.m4b").tags["date"] == "1907"

    assert main(["export", job.id, "--audiobookshelf", str(library)]) == 0  # again: replaced
    assert [p.name for p in (library / "Ann Author" / "Coast Tales").iterdir()] == [
        "Vol 2 - Coastline"
    ]
