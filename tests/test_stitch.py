"""Chunk audio → chapter WAV: exact lengths, atomic writes, silence trimming."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from audiopub.audio.stitch import (
    KEEP_SILENCE_S,
    ChapterWriter,
    fade_edges,
    head_frames,
    pause_after,
    stitch_chapter,
    trim_silence,
)
from audiopub.settings import (
    CHAPTER_HEAD_S,
    CHAPTER_PAUSE_S,
    PARAGRAPH_PAUSE_S,
    SENTENCE_PAUSE_S,
)

SR = 22050


def tone(seconds: float, amplitude: float = 0.5, freq: float = 440.0, sr: int = SR) -> np.ndarray:
    t = np.arange(round(seconds * sr)) / sr
    return (amplitude * np.sin(2 * np.pi * freq * t)).astype(np.float32)


def test_pause_after_chooses_paragraph_or_sentence_pause() -> None:
    assert pause_after(ends_paragraph=True) == PARAGRAPH_PAUSE_S
    assert pause_after(ends_paragraph=False) == SENTENCE_PAUSE_S


def test_frames_and_duration_are_exact(tmp_path: Path) -> None:
    path = tmp_path / "chapter.wav"
    with ChapterWriter(path, SR, trim=False) as writer:
        writer.add(np.full(1000, 0.1, dtype=np.float32), 0.25)
        writer.add(np.full(2345, -0.1, dtype=np.float32), 0.6)
        writer.add_silence(1.5)
        expected = 1000 + round(0.25 * SR) + 2345 + round(0.6 * SR) + round(1.5 * SR)
        assert writer.frames == expected
        assert writer.duration_s == expected / SR

    info = sf.info(str(path))
    assert info.frames == expected
    data, _ = sf.read(str(path), dtype="float32")
    assert np.all(data[1000 : 1000 + round(0.25 * SR)] == 0)  # the pause is digital silence


def test_a_chapter_has_room_tone_before_its_first_words(tmp_path: Path) -> None:
    """0.5-1 s of silence at the head, as distributors ask; every clip lies after it."""
    chunks = []
    for n, seconds in enumerate((0.4, 0.3)):
        chunks.append((tmp_path / f"{n}.wav", n == 1))
        sf.write(chunks[-1][0], tone(seconds), SR, subtype="PCM_16")
    stitched = stitch_chapter(chunks, SR, tmp_path / "chapter.wav")

    head = head_frames(SR)
    assert head == round(CHAPTER_HEAD_S * SR) and 0.5 <= CHAPTER_HEAD_S <= 1.0
    assert stitched.clips[0][0] == head
    data, _ = sf.read(str(tmp_path / "chapter.wav"), dtype="float32")
    assert len(data) == stitched.frames
    assert not np.any(data[:head])  # digital silence: no noise floor to measure
    loud = np.flatnonzero(np.abs(data) > 0.01)
    assert head <= loud[0] <= head + round(KEEP_SILENCE_S * SR) + 2
    tail = len(data) - 1 - loud[-1]
    assert round((CHAPTER_PAUSE_S + PARAGRAPH_PAUSE_S) * SR) <= tail <= 5 * SR
    for start, frames in stitched.clips:
        assert np.any(data[start : start + frames])


def test_a_chapter_is_made_again_with_the_head_it_was_made_with(tmp_path: Path) -> None:
    sf.write(tmp_path / "0.wav", tone(0.4), SR, subtype="PCM_16")
    now = stitch_chapter([(tmp_path / "0.wav", True)], SR, tmp_path / "now.wav")
    before = stitch_chapter([(tmp_path / "0.wav", True)], SR, tmp_path / "before.wav", head=0)
    assert now.frames - before.frames == head_frames(SR)
    assert [(start + head_frames(SR), n) for start, n in before.clips] == list(now.clips)
    a, _ = sf.read(str(tmp_path / "now.wav"), dtype="int16")
    b, _ = sf.read(str(tmp_path / "before.wav"), dtype="int16")
    assert np.array_equal(a[head_frames(SR) :], b)


def test_writes_pcm16_mono_at_the_given_rate_and_renames_the_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "chapter.wav"
    with ChapterWriter(path, 24000) as writer:
        writer.add(tone(0.2, sr=24000))
        assert writer.temp_path.exists() and not path.exists()

    info = sf.info(str(path))
    assert (info.format, info.subtype, info.channels, info.samplerate) == (
        "WAV",
        "PCM_16",
        1,
        24000,
    )
    assert not writer.temp_path.exists()


def test_exception_inside_with_leaves_no_file(tmp_path: Path) -> None:
    path = tmp_path / "chapter.wav"
    with pytest.raises(KeyError):
        with ChapterWriter(path, SR) as writer:
            writer.add(tone(0.5), 0.25)
            raise KeyError("engine blew up")
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []


def test_failed_rewrite_keeps_the_previous_complete_chapter(tmp_path: Path) -> None:
    path = tmp_path / "chapter.wav"
    with ChapterWriter(path, SR, trim=False) as writer:
        writer.add(tone(0.1))
    before = path.read_bytes()
    with pytest.raises(RuntimeError):
        with ChapterWriter(path, SR) as writer:
            writer.add(tone(1.0))
            raise RuntimeError("cancelled")
    assert path.read_bytes() == before


def test_a_crashed_attempts_temp_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "0001.wav"
    crashed = tmp_path / "0001.wav.tmp-999-abcd"  # a process killed while writing it
    other = tmp_path / "0002.wav.tmp-999-abcd"
    crashed.write_bytes(b"half a chapter")
    other.write_bytes(b"another chapter")
    with ChapterWriter(path, SR) as writer:
        writer.add(tone(0.1))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0001.wav", other.name]


def test_samples_are_clipped_and_cleaned(tmp_path: Path) -> None:
    path = tmp_path / "chapter.wav"
    with ChapterWriter(path, SR, trim=False) as writer:
        writer.add(np.array([2.0, -3.0, np.nan, np.inf, 0.5], dtype=np.float32))
    data, _ = sf.read(str(path), dtype="float32")
    np.testing.assert_allclose(data, [1.0, -1.0, 0.0, 1.0, 0.5], atol=1e-4)


def test_accepts_column_vectors_and_rejects_stereo(tmp_path: Path) -> None:
    with ChapterWriter(tmp_path / "chapter.wav", SR, trim=False) as writer:
        writer.add(np.zeros((100, 1), dtype=np.float32))
        assert writer.frames == 100
        with pytest.raises(ValueError, match="mono"):
            writer.add(np.zeros((2, 100), dtype=np.float32))


def test_add_outside_with_block_is_an_error(tmp_path: Path) -> None:
    writer = ChapterWriter(tmp_path / "chapter.wav", SR)
    with pytest.raises(RuntimeError, match="with"):
        writer.add(tone(0.1))


def test_negative_pause_is_rejected(tmp_path: Path) -> None:
    with ChapterWriter(tmp_path / "chapter.wav", SR) as writer:
        with pytest.raises(ValueError):
            writer.add_silence(-0.1)
        with pytest.raises(ValueError):
            writer.add_silence_frames(-1)


def test_writer_trims_engine_silence_so_pauses_are_consistent(tmp_path: Path) -> None:
    keep = round(KEEP_SILENCE_S * SR)
    speech = tone(0.3)
    padded = np.concatenate([np.zeros(SR // 2), speech, np.zeros(SR)]).astype(np.float32)
    with ChapterWriter(tmp_path / "chapter.wav", SR) as writer:
        writer.add(padded, 0.25)
        # the tone starts at a zero crossing, so the first loud sample is index 1
        assert abs(writer.frames - (len(speech) + 2 * keep + round(0.25 * SR))) <= 2


# --- trim_silence -----------------------------------------------------------------------------


def test_trim_silence_keeps_a_short_margin_around_the_sound() -> None:
    keep = round(KEEP_SILENCE_S * SR)
    speech = np.full(1000, 0.5, dtype=np.float32)
    samples = np.concatenate([np.zeros(5000), speech, np.zeros(7000)]).astype(np.float32)
    trimmed = trim_silence(samples, SR)
    assert len(trimmed) == 1000 + 2 * keep
    np.testing.assert_array_equal(trimmed[keep:-keep], speech)


def test_trim_silence_treats_noise_below_threshold_as_silence() -> None:
    rng = np.random.default_rng(0)
    hiss = (rng.uniform(-1, 1, 4000) * 10 ** (-60 / 20)).astype(np.float32)  # -60 dBFS
    samples = np.concatenate([hiss, np.full(500, 0.3, dtype=np.float32), hiss])
    assert len(trim_silence(samples, SR)) == 500 + 2 * round(KEEP_SILENCE_S * SR)


def test_trim_silence_keeps_quiet_speech_above_threshold() -> None:
    quiet = np.full(800, 10 ** (-40 / 20), dtype=np.float32)  # -40 dBFS
    samples = np.concatenate([np.zeros(3000, dtype=np.float32), quiet])
    trimmed = trim_silence(samples, SR)
    assert len(trimmed) == 800 + round(KEEP_SILENCE_S * SR)  # nothing after it to keep


def test_trim_silence_leaves_audio_without_silence_alone() -> None:
    samples = tone(0.2, freq=441.0) + 0.1  # offset: no sample is near zero
    np.testing.assert_array_equal(trim_silence(samples, SR), samples)


def test_trim_silence_of_pure_silence_is_empty() -> None:
    assert len(trim_silence(np.zeros(SR, dtype=np.float32), SR)) == 0
    assert len(trim_silence(np.zeros(0, dtype=np.float32), SR)) == 0


def test_fade_edges_ramps_ends_and_leaves_the_middle() -> None:
    samples = np.ones(1000, dtype=np.float32)
    faded = fade_edges(samples, SR)
    assert faded[0] == 0.0 and faded[-1] < 0.02
    assert np.all(faded[200:800] == 1.0)
    assert np.all(samples == 1.0)  # input untouched
    assert len(fade_edges(np.ones(10, dtype=np.float32), SR)) == 10  # too short: unchanged


def test_stitch_reports_the_silence_it_cut_before_each_clip(tmp_path: Path) -> None:
    """A sample of a chunk's own audio is at clip start + (its index - lead) in the chapter."""
    chunks = []
    for number, silence in enumerate((3000, 0)):
        audio = np.concatenate([np.zeros(silence, np.float32), tone(0.2)])
        audio[silence + 2000] = 0.9  # a mark to find again
        sf.write(tmp_path / f"{number}.wav", audio, SR)
        chunks.append((tmp_path / f"{number}.wav", False))
    stitched = stitch_chapter(chunks, SR, tmp_path / "chapter.wav")
    # The sine's first sample is 0: the sound starts one later.
    assert stitched.leads == (3001 - round(KEEP_SILENCE_S * SR), 0)
    chapter, _ = sf.read(tmp_path / "chapter.wav", dtype="float32")
    for (start, _), lead, silence in zip(stitched.clips, stitched.leads, (3000, 0)):
        assert chapter[start + silence + 2000 - lead] == pytest.approx(0.9, abs=1e-4)
