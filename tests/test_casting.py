"""A cast of voices (audiopub.voices.casting, book.voicing): voices given to characters, the
book's cast file and its corrections, the chunker keeping speakers apart on real book
paragraphs, and a job's chunks, keys and store rows in their voices.

The attributions here are made by hand on real paragraphs (each "…" quotation given to a
speaker in turn): what is tested is what the cast does with an attribution, whoever made it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest
import soundfile as sf
from epub_factory import build_epub
from kokoro_model import install_folder, voice_vectors
from voices import SPEAKERS, add_multi_speaker_voice

from audiopub.book.cast.attribution import NARRATOR as FIRST_PERSON
from audiopub.book.cast.models import Attribution, Character, Quote
from audiopub.book.chunks.chunking import chunk_paragraphs
from audiopub.book.epub.reader import read_epub
from audiopub.book.models import Book
from audiopub.book.voicing import Voicing, voiced_segments
from audiopub.cli import main
from audiopub.errors import AudiopubError
from audiopub.jobs.book_plan import plan_book
from audiopub.jobs.models import ChunkRow, JobSettings, JobState, chunk_cache_key
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import submit_job
from audiopub.jobs.worker import execute_job
from audiopub.tts.engine import Voice
from audiopub.tts.kokoro.engine import KokoroEngine
from audiopub.tts.kokoro.files import SAMPLE_RATE, describe, gender_of, language_of
from audiopub.tts.kokoro.repository import kokoro_index
from audiopub.tts.registry import get_engine
from audiopub.tts.supertonic.engine import voice_gender as supertonic_gender
from audiopub.voices.casting import (
    BookCast,
    Cast,
    assign_voices,
    book_cast_path,
    cast_voices,
    check_voicing,
    quote_key,
)

EPUBS = Path(__file__).parent / "data" / "epubs"
HOLMES = EPUBS / "pg1661-adventures-of-sherlock-holmes.epub"
QUOTATION = re.compile(r'"([^"]*)"')  # this edition's quotation marks are straight
NARRATOR = "af_heart"


def kokoro_voice(name: str) -> Voice:
    """A Kokoro voice as the engine lists it (its name says its language and gender)."""
    return Voice(name, describe(name), language_of(name)[0], SAMPLE_RATE, gender=gender_of(name))


@cache
def kokoro_voices() -> tuple[Voice, ...]:
    """Every Kokoro voice Audiopub ships the index of."""
    return tuple(kokoro_voice(name) for name in sorted(kokoro_index()))


@cache
def holmes() -> Book:
    return read_epub(HOLMES)


def attribute_in_turn(book: Book, chapter: int, speakers: tuple[str, ...]) -> Attribution:
    """Every "…" quotation of a chapter, given to `speakers` in turn."""
    quotes = []
    for position, paragraph in enumerate(book.chapters[chapter].paragraphs):
        for match in QUOTATION.finditer(paragraph):
            speaker = speakers[len(quotes) % len(speakers)]
            quotes.append(
                Quote(chapter, position, match.start(), match.end(), match[1], speaker, "turn")
            )
    lines = {name: sum(q.speaker == name for q in quotes) for name in speakers}
    return Attribution(
        tuple(Character(name, lines=lines[name]) for name in speakers), tuple(quotes)
    )


# --- giving characters voices -----------------------------------------------------------------


def test_main_characters_get_distinct_voices_of_their_gender_never_the_narrators() -> None:
    pool = cast_voices(kokoro_voices(), kokoro_voice(NARRATOR), "en")
    characters = [
        Character("Holmes", gender="male", lines=40),
        Character("Irene Adler", gender="female", lines=12),
        Character("Watson", gender="male", lines=30),
        Character("The King", gender="male", lines=20),
        Character("Mrs. Turner", gender="female", lines=3),
        Character("A cabman", lines=1),
    ]
    voices = assign_voices(characters, pool, kokoro_voice(NARRATOR))

    assert set(voices) == {c.name for c in characters}
    assert len(set(voices.values())) == len(characters)  # enough voices: all distinct
    assert NARRATOR not in voices.values()
    for character in characters:
        voice = kokoro_voice(voices[character.name])
        assert voice.language.startswith("en")  # the book's language
        if character.gender:
            assert voice.gender == character.gender, character
    # The narrator's accent first (American English), while it has voices of that gender.
    assert all(voices[name].startswith(("af_", "am_")) for name in ("Holmes", "Irene Adler"))


def test_the_first_person_narrator_speaks_in_the_narrators_voice_unless_told(
    kokoro: KokoroEngine,
) -> None:
    pool = cast_voices(kokoro.voices(), kokoro_voice(NARRATOR), "en")
    characters = [Character(FIRST_PERSON, lines=50), Character("Holmes", "male", lines=40)]
    voices = assign_voices(characters, pool, kokoro_voice(NARRATOR))
    assert voices[FIRST_PERSON] == NARRATOR and voices["Holmes"] != NARRATOR
    chosen = assign_voices(characters, pool, kokoro_voice(NARRATOR), {FIRST_PERSON: "am_adam"})
    assert chosen[FIRST_PERSON] == "am_adam" != chosen["Holmes"]
    # Its quotations are the narrator's, so the chunker leaves them in the narrator's chunks.
    quote = Quote(0, 0, 0, 8, "Seven!", FIRST_PERSON)
    cast = Cast("kokoro", NARRATOR, Attribution(tuple(characters), (quote,)), voices)
    assert cast.voicing(kokoro).spans == {}


def test_casting_again_gives_the_same_voices_whatever_the_order_and_a_newcomer_moves_no_one() -> (
    None
):
    pool = cast_voices(kokoro_voices(), kokoro_voice(NARRATOR), "en")
    characters = [
        Character("Holmes", gender="male", lines=40),
        Character("Watson", gender="male", lines=30),
        Character("Irene Adler", gender="female", lines=12),
    ]
    first = assign_voices(characters, pool, kokoro_voice(NARRATOR))
    assert assign_voices(characters[::-1], pool[::-1], kokoro_voice(NARRATOR)) == first
    with_minor = assign_voices(
        [*characters, Character("A groom", gender="male", lines=1)], pool, kokoro_voice(NARRATOR)
    )
    assert {name: with_minor[name] for name in first} == first
    assert with_minor["A groom"] not in first.values()


def test_minor_characters_share_voices_of_their_gender_when_the_engine_runs_out() -> None:
    pool = [kokoro_voice(name) for name in ("am_adam", "am_echo", "af_bella", "af_sky")]
    characters = [Character(f"Man {n}", gender="male", lines=10 - n) for n in range(4)]
    characters.append(Character("Woman", gender="female", lines=2))
    voices = assign_voices(characters, pool, kokoro_voice(NARRATOR))

    assert voices["Man 0"] != voices["Man 1"]  # the two with most lines: distinct
    assert {voices[f"Man {n}"] for n in range(4)} == {"am_adam", "am_echo"}  # shared, male
    assert kokoro_voice(voices["Woman"]).gender == "female"
    assert sorted(voices.values()).count("am_adam") == 2  # shared evenly


def test_a_chosen_voice_is_kept_and_no_other_voice_for_the_characters_is_refused() -> None:
    pool = [kokoro_voice("am_adam")]
    characters = [Character("Holmes", gender="male", lines=4), Character("Watson", lines=2)]
    voices = assign_voices(
        characters, pool, kokoro_voice(NARRATOR), {"Holmes": "bm_george:0.5+am_adam:0.5"}
    )
    assert voices == {"Holmes": "bm_george:0.5+am_adam:0.5", "Watson": "am_adam"}
    with pytest.raises(AudiopubError, match="no other voice than the narrator's"):
        assign_voices(characters, [], kokoro_voice(NARRATOR))


def test_voices_in_another_language_or_at_another_rate_are_not_cast() -> None:
    narrator = Voice("en_US-joe-medium", "joe", "en-US", 22_050)
    voices = [
        narrator,
        Voice("en_GB-vctk-medium#p239", "vctk p239", "en-GB", 22_050, speaker="p239"),
        Voice("en_US-lessac-low", "lessac", "en-US", 16_000),
        Voice("de_DE-thorsten-medium", "thorsten", "de-DE", 22_050),
    ]
    assert [v.id for v in cast_voices(voices, narrator, "en")] == ["en_GB-vctk-medium#p239"]
    # Every Kokoro voice reads English; the English ones are cast while there are any.
    kokoro = [kokoro_voice(name) for name in ("af_heart", "am_adam", "bf_emma")]
    japanese = Voice("jf_alpha", describe("jf_alpha"), "ja", SAMPLE_RATE, ("ja", "en"))
    assert cast_voices([*kokoro, japanese], kokoro[0], "en-GB") == kokoro[1:]
    assert cast_voices([kokoro[0], japanese], kokoro[0], "en") == [japanese]
    multilingual = [
        Voice(f"F{n}", f"Female {n}", "multi", 44_100, ("en", "ko"), gender="female")
        for n in (1, 2)
    ]
    assert cast_voices(multilingual, multilingual[0], "en") == multilingual[1:]
    assert kokoro_voice("bm_george").gender == "male"
    assert supertonic_gender("F2") == "female"  # the official styles' names say it
    assert supertonic_gender("my_voice") is None
    assert voices[1].gender is None


# --- the book's cast file and its corrections --------------------------------------------------


# Kokoro voices with real style vectors (Japanese speakers', `kokoro_model`) saved under the
# names of the English voices a cast is made of: casting asks an engine only its voices' names,
# rates and model identities.
KOKORO_VOICES = {
    "af_heart": "jf_alpha",
    "af_bella": "jf_nezumi",
    "am_adam": "jm_kumo",
    "am_michael": "jm_kumo",
    "bm_george": "jm_kumo",
    "bm_lewis": "jm_kumo",
}


@pytest.fixture(scope="module")
def kokoro(tmp_path_factory: pytest.TempPathFactory, kokoro_model_file: Path) -> KokoroEngine:
    folder = install_folder(tmp_path_factory.mktemp("models") / "kokoro", kokoro_model_file, ())
    (folder / "voices").mkdir()
    vectors = voice_vectors()
    for name, source in KOKORO_VOICES.items():
        (folder / "voices" / f"{name}.bin").write_bytes(vectors[source].astype("<f4").tobytes())
    return KokoroEngine(folder, threads=1)


@pytest.fixture
def book_cast(tmp_path: Path, kokoro: KokoroEngine) -> Iterator[BookCast]:
    epub = tmp_path / "holmes.epub"
    epub.write_bytes(HOLMES.read_bytes())
    made = []

    def attribute(book: Book) -> Attribution:
        made.append(book.title)
        return attribute_in_turn(book, 1, ("Holmes", "Watson", "Holmes", "The King"))

    cast = BookCast.of(tmp_path / "data", epub, holmes(), attribute)
    yield cast
    assert len(made) <= 1  # attributed once, then read from the file
    assert cast.path == book_cast_path(tmp_path / "data", epub)


def test_the_cast_is_kept_per_book_and_corrections_are_kept_with_it(
    book_cast: BookCast, kokoro: KokoroEngine
) -> None:
    engine = kokoro
    cast = book_cast.cast(engine, NARRATOR)
    lines = {c.name: c.lines for c in cast.attribution.characters}
    assert lines["Holmes"] > lines["Watson"] > 0
    assert sum(lines.values()) == len(cast.attribution.quotes)

    book_cast.rename("The King", "King of Bohemia")
    book_cast.merge("Watson", "Holmes")  # (wrongly) one man
    book_cast.set_voice("Holmes", "bm_george", engine)
    again = BookCast(book_cast.path, holmes(), lambda book: pytest.fail("attributed again"))
    corrected = again.cast(engine, NARRATOR)
    names = {c.name: c for c in corrected.attribution.characters}
    assert set(names) == {"Holmes", "King of Bohemia"}
    assert names["Holmes"].lines == lines["Holmes"] + lines["Watson"]
    assert names["Holmes"].aliases == ("Watson",)
    assert names["King of Bohemia"].aliases == ("The King",)
    assert corrected.voices["Holmes"] == "bm_george"

    # Split Watson off again: his quotations, by their place in the book.
    first_watson = next(q for q in cast.attribution.quotes if q.speaker == "Watson")
    again.split("Holmes", "Watson", [first_watson])
    again.reassign([cast.attribution.quotes[0]], None)  # no one: the narrator reads it
    again.set_gender("Watson", "male")
    final = again.cast(engine, NARRATOR)
    names = {c.name: c for c in final.attribution.characters}
    assert (names["Watson"].lines, names["Watson"].gender) == (1, "male")
    assert final.attribution.quotes[0].speaker is None
    assert final.voice_of(final.attribution.quotes[0]) == NARRATOR
    assert final.voices["Watson"] not in (NARRATOR, "bm_george")

    # The file says, for a person reading it, each character's voice as last cast.
    made = json.loads(again.path.read_text("utf-8"))["made"]
    assert (made["engine"], made["narrator"]) == ("kokoro", NARRATOR)
    assert {c["name"]: c["voice"] for c in made["characters"]} == final.voices

    with pytest.raises(AudiopubError, match="No character 'Moriarty'"):
        again.set_voice("Moriarty", "am_adam", engine)
    with pytest.raises(AudiopubError, match="Unknown Kokoro voice"):
        again.set_voice("Watson", "zz_nobody", engine)
    with pytest.raises(AudiopubError, match="a character already"):
        again.rename("Watson", "Holmes")


def test_finding_again_takes_the_new_finding_and_keeps_every_correction(
    book_cast: BookCast, kokoro: KokoroEngine
) -> None:
    first = book_cast.cast(kokoro, NARRATOR).attribution
    book_cast.rename("The King", "King of Bohemia")
    book_cast.set_voice("Holmes", "bm_george", kokoro)
    told = first.quotes[1]  # Watson's, as first found; the user gives it to the narrator
    book_cast.reassign([told], None)
    book_cast.reassign([first.quotes[2]], "Mrs. Turner")  # a split the finder never made
    # The same finder again: every correction still matches.
    same = BookCast(
        book_cast.path,
        holmes(),
        lambda book: attribute_in_turn(book, 1, ("Holmes", "Watson", "Holmes", "The King")),
    )
    assert same.find_again() == 0
    assert same.cast(kokoro, NARRATOR).attribution == book_cast.cast(kokoro, NARRATOR).attribution

    # A newer finder: Watson is "Dr. Watson" now, and a quotation the user corrected is
    # found with another start (it no longer matches: kept in the file, counting for nothing).
    def newer(book: Book) -> Attribution:
        found = attribute_in_turn(book, 1, ("Holmes", "Dr. Watson", "Holmes", "The King"))
        moved = replace(found.quotes[2], start=found.quotes[2].start + 1)
        return replace(found, quotes=(*found.quotes[:2], moved, *found.quotes[3:]))

    upgraded = BookCast(book_cast.path, holmes(), newer)
    assert upgraded.find_again() == 1
    cast = upgraded.cast(kokoro, NARRATOR)
    names = {c.name for c in cast.attribution.characters}
    assert names == {"Holmes", "Dr. Watson", "King of Bohemia"}
    assert cast.voices["Holmes"] == "bm_george"
    assert cast.attribution.quotes[1].speaker is None  # still the narrator's
    assert cast.attribution.quotes[2].speaker == "Holmes"  # the new finding's
    kept = json.loads(upgraded.path.read_text("utf-8"))
    assert kept["speakers"][quote_key(first.quotes[2])] == "Mrs. Turner"
    assert kept["names"] == {"The King": "King of Bohemia"}

    # A book never cast: found once, nothing to keep.
    made: list[str] = []

    def counted(book: Book) -> Attribution:
        made.append(book.title)
        return newer(book)

    fresh = BookCast(upgraded.path.with_name("other.json"), holmes(), counted)
    assert fresh.find_again() == 0
    assert len(made) == 1 and fresh.path.is_file()


# --- the chunker keeps speakers apart, on real paragraphs ---------------------------------------


def holmes_cast() -> Cast:
    attribution = attribute_in_turn(holmes(), 1, ("Holmes", "Watson", "Holmes", "The King"))
    voices = {"Holmes": "bm_george", "Watson": "am_adam", "The King": "bm_lewis"}
    return Cast("kokoro", NARRATOR, attribution, voices)


def test_no_chunk_holds_two_voices_and_every_word_is_kept_in_order(kokoro: KokoroEngine) -> None:
    book, cast = holmes(), holmes_cast()
    voicing = cast.voicing(kokoro)
    chapter = book.chapters[1]
    chunks = chunk_paragraphs(chapter.paragraphs, 300, 1, voiced=voicing.in_chapter(1))

    assert " ".join(c.text for c in chunks).split() == " ".join(chapter.paragraphs).split()
    assert all(1 <= len(c.text) <= 300 for c in chunks)
    assert {c.voice for c in chunks} == {"", "bm_george", "am_adam", "bm_lewis"}
    assert len(cast.attribution.quotes) > 250
    # Where each chunk lies in its paragraph (the paragraphs are single-spaced already).
    spoken = iter(chunks)
    for position, paragraph in enumerate(chapter.paragraphs):
        voice_read = [""] * len(paragraph)  # the voice of the chunk each character is in
        at = 0
        while True:
            chunk = next(spoken)
            at = paragraph.index(chunk.text, at)
            voice_read[at : at + len(chunk.text)] = [chunk.voice] * len(chunk.text)
            at += len(chunk.text)
            if chunk.ends_paragraph:
                break
        # Every character of a quotation is read by its speaker's voice; every word of the
        # narrator's (one not glued to a quotation) by the narrator.
        said_by = [""] * len(paragraph)
        for quote in cast.attribution.in_paragraph(1, position):
            said_by[quote.start : quote.end] = [cast.voice_of(quote)] * (quote.end - quote.start)
        for word in re.finditer(r"\S+", paragraph):
            span = range(word.start(), word.end())
            if all(said_by[i] == "" for i in span):
                assert {voice_read[i] for i in span} == {""}, (word[0], paragraph)
            for i in span:
                if said_by[i]:
                    assert voice_read[i] == said_by[i], (word[0], paragraph)
    assert next(spoken, None) is None


def test_speech_tags_stay_the_narrators_and_a_glued_tag_is_never_cut_inside_a_word() -> None:
    paragraph = "“Come in,” said Holmes, “and sit.” Then silence. “No”—he paused."
    first_end = paragraph.index("”") + 1
    second = paragraph.index("“and")
    second_end = paragraph.index("”", second) + 1
    third = paragraph.index("“No")
    spans = [
        (0, first_end, "bm_george"),
        (second, second_end, "bm_george"),
        (third, third + 4, "am_adam"),
    ]
    assert voiced_segments(paragraph, spans) == [
        ("“Come in,”", "bm_george"),
        (" said Holmes, ", ""),
        ("“and sit.”", "bm_george"),
        (" Then silence. ", ""),
        ("“No”—he", "am_adam"),  # the word “No”—he is read whole, in the quotation's voice
        (" paused.", ""),
    ]
    chunks = chunk_paragraphs([paragraph], 200, voiced={0: spans})
    assert [(c.text, c.voice, c.ends_paragraph) for c in chunks] == [
        ("“Come in,”", "bm_george", False),
        ("said Holmes,", "", False),
        ("“and sit.”", "bm_george", False),
        ("Then silence.", "", False),
        ("“No”—he", "am_adam", False),
        ("paused.", "", True),
    ]
    assert sum(c.char_count for c in chunks) == len(paragraph)  # the book's count, exactly


# --- a job's chunks in their voices -------------------------------------------------------------


def job_settings(cast: Cast, engine: KokoroEngine) -> JobSettings:
    return JobSettings(
        engine="kokoro",
        voice=NARRATOR,
        model_id=engine.model_id(NARRATOR),
        cast=cast.voicing(engine),
        chapters=(2,),
    )


def planned_keys(settings: JobSettings) -> list[tuple[str, str]]:
    return [
        (chunk_cache_key(chunk.spoken, settings, chunk.voice), chunk.voice)
        for _, chunks in plan_book(holmes(), 300, settings.chapters, "en", cast=settings.cast)
        for chunk in chunks
    ]


def test_changing_one_characters_voice_changes_only_that_characters_chunk_keys(
    kokoro: KokoroEngine,
) -> None:
    cast = holmes_cast()
    before = planned_keys(job_settings(cast, kokoro))
    after = planned_keys(
        job_settings(replace(cast, voices={**cast.voices, "Watson": "am_michael"}), kokoro)
    )
    assert len(before) == len(after)
    changed = [old != new for (old, _), (new, _) in zip(before, after)]
    assert changed == [voice == "am_adam" for _, voice in before]
    assert any(changed) and not all(changed)
    # A narrator's chunk has the key a job without a cast gives it: its audio is shared.
    plain = JobSettings(engine="kokoro", voice=NARRATOR, model_id=kokoro.model_id(NARRATOR))
    chunk = next(c for c in plan_book(holmes(), 300, (2,), "en")[0][1])
    assert chunk_cache_key(chunk.spoken, plain) == before[0][0]


def test_the_store_keeps_each_chunks_voice_and_a_resumed_job_its_cast(
    tmp_path: Path, kokoro: KokoroEngine
) -> None:
    settings = job_settings(holmes_cast(), kokoro)
    epub = tmp_path / "holmes.epub"
    epub.write_bytes(HOLMES.read_bytes())
    plan = plan_book(holmes(), 300, settings.chapters, "en", cast=settings.cast)
    with JobStore(tmp_path / "data" / "jobs.sqlite3") as store:
        job = store.queue.create_job(epub, tmp_path / "h.m4b", settings, book=holmes())
        store.ledger.write_plan(job.id, plan)
        done = store.ledger.pending_chunks(job.id)[:5]
        for row in done:
            store.ledger.mark_chunk_done(
                job.id, row.cache_key, audio_path=f"chunks/{row.cache_key}.flac", frames=10,
                sample_rate=SAMPLE_RATE, synth_s=0.1, provider="CPU",
            )  # fmt: skip
    with JobStore(tmp_path / "data" / "jobs.sqlite3") as store:  # opened again: a resume
        kept = store.queue.get_job(job.id).settings
        assert kept == settings and kept.cast == settings.cast
        rows = store.ledger.all_chunks(job.id)
        assert [(r.text, r.voice) for r in rows] == [(c.text, c.voice) for c in plan[0][1]]
        assert {r.voice for r in rows} >= {"", "bm_george", "am_adam"}
        # Planned again from the kept settings, as every run plans: the same chunks, and
        # what was made is kept.
        store.ledger.write_plan(
            job.id, plan_book(store.queue.book(job.id) or holmes(), 300, (2,), "en", cast=kept.cast)
        )
        assert store.ledger.all_chunks(job.id) == rows
        assert store.ledger.progress(job.id).chunks_done >= len(done)


def test_a_cast_of_another_engine_or_sample_rate_is_refused(kokoro: KokoroEngine) -> None:
    voicing = Voicing("piper", "en_US-joe-medium", {"Holmes": "en_US-lessac-low"})
    with pytest.raises(AudiopubError, match="made for piper, not kokoro"):
        check_voicing(voicing, kokoro, kokoro_voice(NARRATOR))
    mixed = Voicing("kokoro", NARRATOR, {"Holmes": "am_adam"})
    check_voicing(mixed, kokoro, kokoro_voice(NARRATOR))
    with pytest.raises(AudiopubError, match="share one sample rate"):
        check_voicing(mixed, kokoro, Voice(NARRATOR, "n", "en-US", 22_050))


# --- a Piper cast spoken: each chunk in its speaker's voice ---------------------------------------

PIPER_MODEL = "en_GB-tiny-medium"
# The tiny graph's speakers say every sample shifted by their own offset (tests/voices.py):
# p239 by 0, p236 up by 0.25, p264 down by 0.25.
P239, P236, P264 = (f"{PIPER_MODEL}#{speaker}" for speaker in SPEAKERS)


def mean_level(store: JobStore, job_id: str, row: ChunkRow) -> float:
    assert row.audio_path is not None
    return float(sf.read(store.job_dir(row.reused_from or job_id) / row.audio_path)[0].mean())


def test_a_piper_cast_speaks_each_chunk_in_its_voice_and_a_new_voice_remakes_only_its_chunks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_multi_speaker_voice(tmp_path / "models" / "piper", PIPER_MODEL)
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    epub = build_epub(
        tmp_path / "scandal.epub",
        [("A Scandal in Bohemia", list(holmes().chapters[1].paragraphs[6:12]))],
    )
    book = read_epub(epub)
    attribution = attribute_in_turn(book, 0, ("Holmes", "Watson"))
    engine = get_engine("piper")

    def convert(voices: dict[str, str], name: str) -> tuple[str, list[ChunkRow]]:
        cast = Cast("piper", P236, attribution, voices)
        settings = JobSettings(engine="piper", voice=P236, cast=cast.voicing(engine))
        job = submit_job(store, epub, book, tmp_path / f"{name}.m4b", settings, engine)
        store.queue.set_state(job.id, JobState.RUNNING)
        assert execute_job(store, job.id, None, engine) is JobState.DONE
        return job.id, store.ledger.all_chunks(job.id)

    with JobStore.open_default() as store:
        first_job, first = convert({"Holmes": P264, "Watson": P239}, "first")
        assert {row.voice for row in first} == {"", P264, P239}
        for row in first:
            level = mean_level(store, first_job, row)
            if row.voice == P264:
                assert level < -0.15, row.text
            elif row.voice == P239:
                assert -0.15 < level < 0.2, row.text
            else:  # the narrator's chunks: the heading, the tags, the narrator's paragraphs
                assert level > 0.2, row.text

        # Holmes in another voice: only his chunks are spoken again, the rest is reused.
        _, second = convert({"Holmes": P239, "Watson": P239}, "again")
        assert [row.text for row in second] == [row.text for row in first]
        for old, new in zip(first, second, strict=True):
            holmes_line = old.voice == P264
            assert (old.cache_key != new.cache_key) == holmes_line, old.text
            assert (new.reused_from is None) == holmes_line, old.text
        assert any(row.voice == P264 for row in first)


def test_the_cast_command_lists_sets_and_keeps_a_voice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    add_multi_speaker_voice(tmp_path / "models" / "piper", PIPER_MODEL)
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    epub = build_epub(
        tmp_path / "thumb.epub",
        [("The Engineer's Thumb", list(read_epub(HOLMES).chapters[9].paragraphs[155:159]))],
    )
    command = ["cast", str(epub), "--engine", "piper", "--voice", P236]
    assert main([*command, "--set", f"Holmes={P264}", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    voices = {c["name"]: c["voice"] for c in listed["characters"]}
    assert voices["Holmes"] == P264 and P236 not in voices.values()
    assert set(listed["characters"][0]) == {"name", "aliases", "gender", "lines", "voice"}
    none_at_all = next(q for q in listed["quotes"] if q["text"].startswith("None"))
    assert none_at_all == {
        "chapter": 0,
        "text": "None at all,",  # its own words, without its marks
        "speaker": "Holmes",
        "voice": P264,
    }
    assert main(command) == 0  # cast again: the voice chosen is kept
    table = capsys.readouterr()
    assert re.search(rf"^Holmes +{re.escape(P264)} ", table.out, re.M)
    assert table.err.startswith(f"cast: {len(voices)} characters in ")
    assert main([*command, "--set", "Moriarty=x"]) == 1
    assert "No character 'Moriarty'" in capsys.readouterr().err
    assert main([*command, "--set", "Holmes"]) == 1
    assert "--set takes NAME=VOICE" in capsys.readouterr().err


def _thumb(tmp_path: Path) -> Path:
    """An EPUB of 25 paragraphs of "The Engineer's Thumb": a few people, tagged and not."""
    return build_epub(
        tmp_path / "thumb.epub",
        [("The Engineer's Thumb", list(read_epub(HOLMES).chapters[9].paragraphs[150:175]))],
    )


def test_the_cast_command_lists_the_characters_and_speakers_with_the_one_embedded_voice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A fresh install: no model downloaded, the embedded one-voice Piper engine only.
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    epub = _thumb(tmp_path)
    assert main(["cast", str(epub), "--json"]) == 0
    captured = capsys.readouterr()
    listed = json.loads(captured.out)
    assert "`audiopub voices download kokoro`" in captured.err
    assert "No voice is left" not in captured.err
    names = {c["name"]: c for c in listed["characters"]}
    assert "Holmes" in {n.split()[-1] for n in names}
    assert all(set(c) == {"name", "aliases", "gender", "lines", "voice"} for c in names.values())
    assert all(c["voice"] is None and c["lines"] > 0 for c in names.values())
    spoken = [q for q in listed["quotes"] if q["speaker"] is not None]
    assert spoken and all(q["speaker"] in names for q in spoken)
    assert main(["cast", str(epub), "--again", "--json"]) == 0  # read afresh: the same finding
    assert json.loads(capsys.readouterr().out) == listed

    assert main(["cast", str(epub)]) == 0  # the table and the quotations, then what is needed
    table = capsys.readouterr()
    assert re.search(r"^\S*Holmes +- ", table.out, re.M)
    assert re.search(r'^1:\d+  Holmes: "', table.out, re.M)
    assert table.err.strip().endswith("`audiopub voices download kokoro`")


def test_a_book_where_no_one_speaks_says_so_and_asks_for_no_voices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    epub = build_epub(
        tmp_path / "quiet.epub",
        [("The Moor", ["The wind came over the moor at dusk.", "Nobody was out on the road."])],
    )
    assert main(["cast", str(epub), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == {"characters": [], "quotes": []}
    assert captured.err.strip() == (
        "cast: no one speaks in this book, as far as Audiopub can tell: the narrator reads it all"
    )


def test_a_listing_whose_reader_has_gone_ends_quietly(tmp_path: Path) -> None:
    # `audiopub cast BOOK | head`: the pipe closes under the listing; no traceback follows.
    epub = _thumb(tmp_path)
    env = {**os.environ, "AUDIOPUB_MODELS_DIR": str(tmp_path / "models")}
    env |= {"AUDIOPUB_DATA_DIR": str(tmp_path / "data"), "HF_HUB_OFFLINE": "1"}
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line
    try:
        listing = subprocess.run(
            [sys.executable, "-c", "import sys; from audiopub.cli import main; sys.exit(main())"]
            + ["cast", str(epub)],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=300,
        )
    finally:
        os.close(write_end)
    assert listing.returncode == 141
    assert "Traceback" not in listing.stderr


def test_a_character_keeps_the_aliases_the_finder_gave_it() -> None:
    from audiopub.voices.casting import CastFile

    found = Attribution(
        (
            Character("Sherlock Holmes", ("Holmes", "Mr. Holmes"), "male", 2),
            Character("Dr. Watson", ("Watson",), "male", 1),
        ),
        (
            Quote(0, 0, 0, 5, "Come.", "Sherlock Holmes", "explicit"),
            Quote(0, 1, 0, 5, "Yes.", "Dr. Watson", "explicit"),
            Quote(0, 2, 0, 5, "Go.", "Sherlock Holmes", "explicit"),
        ),
    )
    kept = CastFile(found).corrected()
    assert {c.name: c.aliases for c in kept.characters} == {
        "Sherlock Holmes": ("Holmes", "Mr. Holmes"),
        "Dr. Watson": ("Watson",),
    }
    renamed = CastFile(found, names={"Dr. Watson": "John Watson"}).corrected()
    assert {c.name: c.aliases for c in renamed.characters}["John Watson"] == (
        "Watson",
        "Dr. Watson",
    )
