"""Chapter WAVs → .m4b: ffmetadata escaping, the ffmpeg command, and real muxes read back."""

from __future__ import annotations

import logging
import os
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiopub.atomic import TEMP_MARK, scratch_dir
from audiopub.audio.ffmetadata import (
    BookTags,
    ChapterMark,
    build_ffmetadata,
    escape_ffmetadata,
    parse_ffmetadata,
)
from audiopub.audio.ffmpeg import ProbeResult, _parse_stream_info, ffmpeg_exe, probe
from audiopub.audio.mux import (
    AAC_CODER,
    build_mux_command,
    chapter_marks,
    concat_list_entry,
    mux_m4b,
)
from audiopub.book.models import Cover, sniff_image_type
from audiopub.book.pictures import image_size
from audiopub.errors import JobCancelled, MuxFailed

SR = 22050
# Every character ffmetadata escapes, plus a newline and a carriage return.
TRICKY_TITLE = "Part 1 = Start; #1 \\ back\nslash\rend"
TITLES = [TRICKY_TITLE, "Chapter Two — «Ünïcödé» 第二章", "It's the end"]
DURATIONS = [1.0, 1.5, 2.0]
TAGS = BookTags(
    title="The Book; #1",
    author="Ann Author",
    album="Collected = Works",
    year="1899",
    comment="Narrated by Audiopub",
)


# --- helpers and fixtures ---------------------------------------------------------------------


def write_tone(path: Path, seconds: float, freq: float) -> Path:
    t = np.arange(round(seconds * SR)) / SR
    sf.write(str(path), (0.3 * np.sin(2 * np.pi * freq * t)).astype(np.float32), SR, "PCM_16")
    return path


def make_image(path: Path, codec_args: list[str]) -> bytes:
    cmd = [ffmpeg_exe(), "-hide_banner", "-loglevel", "error", "-nostdin", "-y"]
    cmd += ["-f", "lavfi", "-i", "color=c=red:s=64x64", "-frames:v", "1", *codec_args, str(path)]
    subprocess.run(cmd, check=True)
    return path.read_bytes()


def minimal_png(width: int = 4, height: int = 4) -> bytes:
    """A valid RGB PNG built by hand (zlib + struct)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\x00\x80\xff" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def chapter_wavs(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("wavs")
    # A quote in a file name exercises the concat list's quoting for real.
    names = ["chapter 1.wav", "it's chapter 2.wav", "chapter 3.wav"]
    return [
        write_tone(folder / name, seconds, 300.0 * (i + 1))
        for i, (name, seconds) in enumerate(zip(names, DURATIONS))
    ]


@pytest.fixture(scope="module")
def jpeg_cover(tmp_path_factory: pytest.TempPathFactory) -> Cover:
    path = tmp_path_factory.mktemp("cover") / "cover.jpg"
    return Cover(make_image(path, []), "image/jpeg")


@pytest.fixture(scope="module")
def book(
    tmp_path_factory: pytest.TempPathFactory, chapter_wavs: list[Path], jpeg_cover: Cover
) -> tuple[Path, ProbeResult]:
    out = tmp_path_factory.mktemp("out") / "The Book.m4b"
    marks = chapter_marks(TITLES, chapter_wavs)
    mux_m4b(chapter_wavs, marks, TAGS, jpeg_cover, out)
    return out, probe(out)


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


# --- ffmetadata -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("a=b", "a\\=b"),
        ("a;b", "a\\;b"),
        ("a#b", "a\\#b"),
        ("a\\b", "a\\\\b"),
        ("a\nb", "a\\\nb"),
        ("a\rb", "a\\\rb"),
        ("plain: 'quotes', [brackets]", "plain: 'quotes', [brackets]"),
    ],
)
def test_escape_ffmetadata_each_special_character(raw: str, escaped: str) -> None:
    assert escape_ffmetadata(raw) == escaped


def test_escape_ffmetadata_all_at_once() -> None:
    assert escape_ffmetadata(TRICKY_TITLE) == "Part 1 \\= Start\\; \\#1 \\\\ back\\\nslash\\\rend"


def test_build_ffmetadata_three_chapters() -> None:
    tags = BookTags(title="My Book", author="Jane Doe")
    chapters = [
        ChapterMark("Opening", 0.0, 61.5),
        ChapterMark("Middle; part #2", 61.5, 125.0004),
        ChapterMark("End", 125.0004, 200.0),
    ]
    assert build_ffmetadata(tags, chapters) == (
        ";FFMETADATA1\n"
        "title=My Book\n"
        "artist=Jane Doe\n"
        "album_artist=Jane Doe\n"
        "album=My Book\n"
        "genre=Audiobook\n"
        "media_type=2\n"
        "[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=61500\ntitle=Opening\n"
        "[CHAPTER]\nTIMEBASE=1/1000\nSTART=61500\nEND=125000\ntitle=Middle\\; part \\#2\n"
        "[CHAPTER]\nTIMEBASE=1/1000\nSTART=125000\nEND=200000\ntitle=End\n"
    )


def test_build_ffmetadata_makes_chapters_contiguous() -> None:
    chapters = [ChapterMark("a", 0.0, 1.0), ChapterMark("b", 1.2, 2.0)]  # a gap after "a"
    text = build_ffmetadata(BookTags("T", "A"), chapters)
    assert "START=0\nEND=1200\n" in text and "START=1200\nEND=2000\n" in text


def test_build_ffmetadata_rejects_empty_or_backwards_chapters() -> None:
    empty_second = [ChapterMark("a", 0.0, 1.0), ChapterMark("b", 1.0, 1.0)]
    backwards = [ChapterMark("a", 2.0, 3.0), ChapterMark("b", 1.0, 4.0)]
    for chapters in (empty_second, backwards):
        with pytest.raises(ValueError, match="no length"):
            build_ffmetadata(BookTags("T", "A"), chapters)


def test_build_ffmetadata_drops_a_trailing_backslash() -> None:
    # ffmpeg's reader would take "\\" + newline for an escaped newline and eat the next line.
    text = build_ffmetadata(BookTags("Ends in \\", "A"), [])
    assert "title=Ends in \nartist=A\n" in text


def test_parse_ffmetadata_round_trips_build_ffmetadata() -> None:
    chapters = [ChapterMark(TITLES[0], 0.0, 1.0), ChapterMark("[CHAPTER]", 1.0, 2.5)]
    tags, parsed = parse_ffmetadata(build_ffmetadata(TAGS, chapters))
    assert tags["title"] == TAGS.title and tags["album"] == TAGS.album
    assert parsed == chapters


def test_parse_ffmetadata_handles_comments_streams_and_timebases() -> None:
    text = (
        ";FFMETADATA1\n#comment\ntitle=a\\;b\n\n"
        "[STREAM]\ntitle=stream title\n"
        "[CHAPTER]\nTIMEBASE=1/22050\nSTART=22050\nEND=44100\ntitle=x\\\\\n"
    )
    tags, chapters = parse_ffmetadata(text)
    assert tags == {"title": "a;b"}
    assert chapters == [ChapterMark("x\\", 1.0, 2.0)]


# --- the ffmpeg command -----------------------------------------------------------------------


def test_concat_list_entry_quotes_paths(tmp_path: Path) -> None:
    entry = concat_list_entry(tmp_path / "it's here.wav")
    assert entry == f"file '{tmp_path}{os.sep}it'\\''s here.wav'"
    with pytest.raises(ValueError):
        concat_list_entry(tmp_path / "line\nbreak.wav")


def test_build_mux_command_with_cover(tmp_path: Path) -> None:
    cmd = build_mux_command(
        ffmpeg="ffmpeg",
        concat_list=tmp_path / "list.txt",
        metadata=tmp_path / "meta.txt",
        cover=tmp_path / "cover.jpg",
        out_path=tmp_path / "book.m4b.part",
        bitrate="64k",
    )
    text = " ".join(cmd)
    assert cmd[0] == "ffmpeg" and cmd[-1] == str(tmp_path / "book.m4b.part")
    for flag in ["-y", "-nostdin", "-hide_banner", "-xerror"]:
        assert flag in cmd
    assert "-loglevel error" in text
    assert f"-f concat -safe 0 -i {tmp_path / 'list.txt'}" in text
    assert f"-f ffmetadata -i {tmp_path / 'meta.txt'} -i {tmp_path / 'cover.jpg'}" in text
    assert "-map 0:a -map 2:v -map_metadata 1 -map_chapters 1" in text
    assert f"-c:a aac -aac_coder {AAC_CODER} -b:a 64k" in text
    assert "-c:v copy -disposition:v:0 attached_pic" in text
    assert "-movflags +faststart" in text
    assert cmd[cmd.index("-brand") + 1] == "M4B "
    assert cmd[cmd.index("-f", cmd.index("-movflags")) + 1] == "ipod"


def test_build_mux_command_without_cover(tmp_path: Path) -> None:
    cmd = build_mux_command(
        "ffmpeg", tmp_path / "list.txt", tmp_path / "meta.txt", None, tmp_path / "b.part", "96k"
    )
    assert "2:v" not in cmd and "-c:v" not in cmd and "attached_pic" not in cmd
    assert cmd.count("-i") == 2
    assert cmd[cmd.index("-b:a") + 1] == "96k"


def test_parse_stream_info_from_ffmpeg_stderr() -> None:
    stderr = (
        "Input #0, mov,mp4,m4a,3gp,3g2,mj2, from 'x.m4b':\n"
        "  Duration: 01:02:03.45, start: 0.000000, bitrate: 65 kb/s\n"
        "  Stream #0:0[0x1](und): Audio: aac (LC) (mp4a / 0x6134706D), 44100 Hz, mono, fltp\n"
        "  Stream #0:1[0x3](eng): Data: bin_data (text / 0x74786574), 0 kb/s\n"
        "  Stream #0:2[0x0]: Video: mjpeg (Baseline), yuvj420p(pc), 64x64, 90k tbn (attached pic)\n"
        "Stream mapping:\n"
        "  Stream #0:0: Audio: mp3, 8000 Hz\n"
    )
    assert _parse_stream_info(stderr) == (3723.45, "aac", 44100, True, "und")
    assert _parse_stream_info(stderr.replace("(und)", "(fra)"))[4] == "fra"
    assert _parse_stream_info("  Duration: N/A, bitrate: N/A\n") == (0.0, "", 0, False, "")


# --- real muxes -------------------------------------------------------------------------------


def test_mux_writes_chapters_tags_and_cover(book: tuple[Path, ProbeResult]) -> None:
    out, result = book
    assert result.audio_codec == "aac"
    assert result.sample_rate == SR
    assert result.has_cover
    assert result.duration_s == pytest.approx(sum(DURATIONS), abs=0.05)

    assert [c.title for c in result.chapters] == TITLES  # the tricky title comes back exactly
    starts = np.cumsum([0.0] + DURATIONS[:-1])
    for chapter, start, length in zip(result.chapters, starts, DURATIONS):
        assert chapter.start_s == pytest.approx(start, abs=0.05)
        assert chapter.end_s == pytest.approx(start + length, abs=0.05)

    tags = result.tags
    assert tags["title"] == TAGS.title
    assert tags["artist"] == tags["album_artist"] == TAGS.author
    assert tags["album"] == TAGS.album
    assert tags["genre"] == "Audiobook"
    assert tags["date"] == "1899"
    assert tags["comment"] == TAGS.comment
    assert tags["media_type"] == "2"
    assert tags["major_brand"] == "M4B "
    assert leftovers(out.parent) == ["The Book.m4b"]  # no temp file left behind


def test_mux_reports_progress(tmp_path: Path, chapter_wavs: list[Path]) -> None:
    seen: list[float] = []
    marks = chapter_marks(TITLES, chapter_wavs)
    mux_m4b(chapter_wavs, marks, TAGS, None, tmp_path / "b.m4b", progress=seen.append)
    assert seen and seen[-1] == 1.0
    assert seen == sorted(seen) and all(0.0 <= f <= 1.0 for f in seen)
    assert not probe(tmp_path / "b.m4b").has_cover


def test_cancelling_from_progress_stops_and_cleans_up(
    tmp_path: Path, chapter_wavs: list[Path]
) -> None:
    def cancel(_fraction: float) -> None:
        raise JobCancelled("cancelled")

    marks = chapter_marks(TITLES, chapter_wavs)
    out = tmp_path / "out"
    out.mkdir()
    with pytest.raises(JobCancelled):
        mux_m4b(chapter_wavs, marks, TAGS, None, out / "b.m4b", progress=cancel)
    assert leftovers(out) == []
    assert leftovers(scratch_dir()) == []  # ffmpeg's working files too


def test_a_crashed_attempts_temp_file_is_replaced(tmp_path: Path, chapter_wavs: list[Path]) -> None:
    out = tmp_path / "out" / "b.m4b"
    out.parent.mkdir()
    (out.parent / f"b.m4b{TEMP_MARK}999-abcd").write_bytes(b"half a book")  # a killed run's
    mux_m4b(chapter_wavs, chapter_marks(TITLES, chapter_wavs), TAGS, None, out)
    assert leftovers(out.parent) == ["b.m4b"]


@pytest.mark.parametrize("kind", ["png", "gif"])
def test_png_is_attached_and_gif_is_converted(
    tmp_path: Path, chapter_wavs: list[Path], kind: str
) -> None:
    if kind == "png":
        cover = Cover(minimal_png(), "image/png")
    else:
        cover = Cover(make_image(tmp_path / "c.gif", []), "image/gif")
    out = tmp_path / "out" / "b.m4b"
    mux_m4b(chapter_wavs, chapter_marks(TITLES, chapter_wavs), TAGS, cover, out)
    assert probe(out).has_cover


def test_damaged_cover_is_left_out_with_a_warning(
    tmp_path: Path, chapter_wavs: list[Path], caplog: pytest.LogCaptureFixture
) -> None:
    cover = Cover(b"\xff\xd8\xff" + b"not really a jpeg" * 10, "image/jpeg")
    out = tmp_path / "b.m4b"
    with caplog.at_level(logging.WARNING, logger="audiopub.audio.mux"):
        mux_m4b(chapter_wavs, chapter_marks(TITLES, chapter_wavs), TAGS, cover, out)
    assert "no cover" in caplog.text
    assert not probe(out).has_cover


def embedded_cover(m4b: Path, folder: Path) -> bytes:
    """The picture attached to an .m4b, as ffmpeg copies it out."""
    out = folder / "embedded.img"
    subprocess.run(
        [
            ffmpeg_exe(),
            "-hide_banner",
            "-loglevel",
            "error",
            "-nostdin",
            "-y",
            "-i",
            str(m4b),
            "-map",
            "0:v",
            "-c",
            "copy",
            "-f",
            "image2",
            str(out),
        ],
        check=True,
    )
    return out.read_bytes()


@pytest.mark.parametrize(
    ("size", "codec", "embedded"),
    [
        ("3000x200", [], (2400, 160)),
        ("1000x5000", ["-c:v", "png"], (480, 2400)),
        ("800x600", [], (800, 600)),
    ],
)
def test_a_large_cover_is_scaled_down_to_fit(
    tmp_path: Path, chapter_wavs: list[Path], size: str, codec: list[str], embedded: tuple[int, int]
) -> None:
    """A picture wider or taller than EMBEDDED_SIDE goes into the book scaled down, in the
    same format; a smaller one goes in byte for byte."""
    path = tmp_path / ("c.png" if codec else "c.jpg")
    subprocess.run(
        [
            ffmpeg_exe(),
            "-hide_banner",
            "-loglevel",
            "error",
            "-nostdin",
            "-y",
            "-f",
            "lavfi",
            "-i",
            f"testsrc=s={size}",
            "-frames:v",
            "1",
            *codec,
            str(path),
        ],
        check=True,
    )
    cover = Cover(path.read_bytes(), "image/png" if codec else "image/jpeg")
    out = tmp_path / "b.m4b"
    mux_m4b(chapter_wavs, chapter_marks(TITLES, chapter_wavs), TAGS, cover, out)
    picture = embedded_cover(out, tmp_path)
    assert image_size(picture) == embedded
    assert sniff_image_type(picture) == cover.media_type
    if embedded == image_size(cover.data):
        assert picture == cover.data


def test_a_cover_of_too_many_pixels_is_left_out_as_too_large(
    tmp_path: Path, chapter_wavs: list[Path], caplog: pytest.LogCaptureFixture
) -> None:
    ihdr = b"IHDR" + struct.pack(">IIBBBBB", 20_000, 20_000, 8, 2, 0, 0, 0)
    data = (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", 13)
        + ihdr
        + struct.pack(">I", zlib.crc32(ihdr))
        + b"\x00" * 64
    )
    out = tmp_path / "b.m4b"
    with caplog.at_level(logging.WARNING):
        mux_m4b(
            chapter_wavs, chapter_marks(TITLES, chapter_wavs), TAGS, Cover(data, "image/png"), out
        )
    assert (
        "The cover is 20,000×20,000 pixels, too large to use; the audiobook will have no cover."
    ) in caplog.messages
    assert not probe(out).has_cover


def test_truncated_wav_makes_ffmpeg_fail_cleanly(tmp_path: Path, chapter_wavs: list[Path]) -> None:
    # A valid header promising more audio than the file holds: only ffmpeg notices.
    truncated = tmp_path / "truncated.wav"
    truncated.write_bytes(chapter_wavs[1].read_bytes()[:20000])
    wavs = [chapter_wavs[0], truncated, chapter_wavs[2]]
    out = tmp_path / "out" / "b.m4b"
    with pytest.raises(MuxFailed, match="ffmpeg exited with code") as caught:
        mux_m4b(wavs, chapter_marks(TITLES, chapter_wavs), TAGS, None, out)
    assert "ffmpeg said:" in str(caught.value)
    assert leftovers(out.parent) == []


def test_unreadable_wav_fails_before_encoding(tmp_path: Path, chapter_wavs: list[Path]) -> None:
    garbage = tmp_path / "garbage.wav"
    garbage.write_bytes(b"RIFF\x00\x00\x00\x00WAVE" + b"junk" * 100)
    out = tmp_path / "out" / "b.m4b"
    marks = chapter_marks(TITLES, chapter_wavs)
    with pytest.raises(MuxFailed, match="garbage.wav"):
        mux_m4b([chapter_wavs[0], garbage, chapter_wavs[2]], marks, TAGS, None, out)
    with pytest.raises(MuxFailed, match="missing.wav"):
        mux_m4b([tmp_path / "missing.wav"], marks[:1], TAGS, None, out)
    with pytest.raises(MuxFailed):
        mux_m4b([], [], TAGS, None, out)
    assert not out.exists() and not list(out.parent.glob(f"*{TEMP_MARK}*"))


def test_probe_of_a_non_media_file_raises_mux_failed(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.m4b"
    bogus.write_text("not audio")
    with pytest.raises(MuxFailed, match="bogus.m4b"):
        probe(bogus)
