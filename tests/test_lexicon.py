"""Pronunciation lexicons: the file format, matching, scopes, and what reaches the engine."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest
from epub_factory import build_epub

from audiopub.audio.ffmpeg import probe
from audiopub.book.epub.reader import read_epub
from audiopub.book.lexicons.lexicon import (
    Entry,
    Lexicon,
    book_lexicon_path,
    from_book,
    parse,
    user_lexicon_path,
)
from audiopub.book.spoken import spoken_form
from audiopub.cli import main
from audiopub.errors import LexiconError
from audiopub.jobs.book_plan import job_lexicon
from audiopub.jobs.models import JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import submit_job
from audiopub.jobs.worker import execute_job
from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.piper.config import phoneme_ids
from audiopub.tts.piper.engine import PiperEngine
from audiopub.tts.registry import get_engine

pytestmark = pytest.mark.usefixtures("embedded_voice_loaded_once")

VOICE = "en_US-joe-medium"


def english(text: str) -> str:
    return spoken_form(text, "en")


def said(text: str, lines: str, symbols: frozenset[str] | None = None) -> str:
    return Lexicon(parse(lines, "test.tsv"), symbols).speak(text, english)


# --- the file ---------------------------------------------------------------------------


def test_a_file_with_comments_respellings_phonemes_and_options() -> None:
    entries = parse(
        "# names\n\nHermione\ther-MY-oh-nee\nGandalf\t/ˈɡændɑlf/\n"
        "colou?r\tcolor\tregex\nNASA\tnasa\tcase regex\n",
        "my.tsv",
    )
    assert [(e.written, e.phonemes, e.case, e.regex, e.source) for e in entries] == [
        ("Hermione", False, False, False, "my.tsv:3"),
        ("Gandalf", True, False, False, "my.tsv:4"),
        ("colou?r", False, False, True, "my.tsv:5"),
        ("NASA", False, True, True, "my.tsv:6"),
    ]
    assert entries[1].say == "ˈɡændɑlf"


@pytest.mark.parametrize(
    "line, message",
    [
        ("Hermione her-MY-oh-nee", "my.tsv:2: expected 'written form<TAB>how to say it"),
        ("Hermione\t", "my.tsv:2: expected"),
        ("Hermione\ther\tloud", "my.tsv:2: unknown option 'loud'"),
        ("colo(u\tcolor\tregex", "my.tsv:2: 'colo(u' is not a regular expression"),
    ],
)
def test_a_malformed_line_names_the_file_and_line(line: str, message: str) -> None:
    with pytest.raises(LexiconError, match=message.replace("(", r"\(").replace("?", r"\?")):
        parse(f"# ok\n{line}\n", "my.tsv")


# --- matching ---------------------------------------------------------------------------


def test_whole_words_ignoring_case_by_default() -> None:
    lines = "Ron\tRonn\n"
    assert said("Ron and ron met Ronald.", lines) == "Ronn and Ronn met Ronald."


def test_case_and_regular_expressions_when_asked() -> None:
    assert said("NASA and nasa", "NASA\tnah-sah\tcase\n") == "nah-sah and nasa"
    assert said("colour and color", "colou?r\tkuller\tregex\n") == "kuller and kuller"
    assert said("Ronald", "Ron\tRonn\tregex\n") == "Ronnald"  # a regex may match part of a word


def test_entries_match_the_written_text_before_numbers_and_abbreviations() -> None:
    assert english("Charles II met Dr. Watson in 1850.") == (
        "Charles the Second met Doctor Watson in eighteen fifty."
    )
    lines = "Charles II\tCharles the Deuce\nDr.\tDoc\n"
    assert said("Charles II met Dr. Watson in 1850.", lines) == (
        "Charles the Deuce met Doc Watson in eighteen fifty."
    )


def test_the_first_scope_wins() -> None:
    job, book, user = (
        Entry("Hermione", say, source=scope)
        for scope, say in (("job", "one"), ("book", "two"), ("user", "three"))
    )
    assert Lexicon([job, book, user], None).speak("Hermione", english) == "one"
    assert Lexicon([book, user], None).speak("Hermione", english) == "two"
    assert Lexicon([user], None).speak("Hermione", english) == "three"


# --- phonemes ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def piper() -> PiperEngine:
    return PiperEngine(threads=1)


def test_phonemes_go_to_voices_that_take_them_and_respellings_to_the_rest(
    piper: PiperEngine,
) -> None:
    lines = "Hermione\ther-MY-oh-nee\nHermione\t/həmˈaɪəni/\n"
    symbols = piper.phoneme_symbols(VOICE)
    assert said("Hi Hermione.", lines, symbols) == "Hi ⟦həmˈaɪəni⟧."
    assert said("Hi Hermione.", lines, None) == "Hi her-MY-oh-nee."


def test_phonemes_a_voice_cannot_take_are_refused_with_the_entry_named(piper: PiperEngine) -> None:
    with pytest.raises(
        LexiconError,
        match=r"test.tsv:1: 'Gandalf' → '/ˈɡændɑlf/': this voice "
        r"takes no phonemes; add a line with a respelling",
    ):
        Lexicon(parse("Gandalf\t/ˈɡændɑlf/\n", "test.tsv"), None)
    with pytest.raises(LexiconError, match="test.tsv:1: 'Zorg' .*no phoneme '₮'"):
        Lexicon(parse("Zorg\t/zɔːɹ₮/\n", "test.tsv"), piper.phoneme_symbols(VOICE))


def test_an_ipa_entry_reaches_the_voice_as_the_ids_of_exactly_its_symbols(
    piper: PiperEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    loaded = piper._voice(VOICE)
    session = loaded.load()
    given: list[list[int]] = []
    real_run = session.inference.run

    class Recording:
        def run(self, names, inputs, options=None):  # type: ignore[no-untyped-def]
            given.append(inputs["input"][0].tolist())
            return real_run(names, inputs, options)

        def __getattr__(self, name):  # type: ignore[no-untyped-def]
            return getattr(session.inference, name)

    monkeypatch.setattr(loaded, "_session", type(session)(Recording(), session.device))
    (result,) = piper.synthesize(["⟦həmˈaɪəni⟧"], VOICE, SynthesisOptions(seed=1))
    assert given == [phoneme_ids(list("həmˈaɪəni"), loaded.config.phoneme_id_map)]
    assert result.frames > 0


# --- jobs -------------------------------------------------------------------------------


def _book(path: Path) -> Path:
    return build_epub(
        path,
        [
            (
                "The Harbour",
                [
                    "Hermione walked to the harbour.",
                    "The boats were out.",
                    "Nobody saw Hermione leave.",
                    "The rain began at noon.",
                ],
            )
        ],
    )


def test_scopes_come_from_the_job_the_book_and_the_user(tmp_path: Path, data_dir: Path) -> None:
    epub = _book(tmp_path / "b.epub")
    engine = get_engine("piper")
    with JobStore.open_default() as store:
        book_file = book_lexicon_path(data_dir, epub)
        book_file.parent.mkdir(parents=True)
        book_file.write_text("Hermione\tbook-her\nharbour\tbook-harbour\n", "utf-8")
        user_lexicon_path(data_dir).write_text(
            "Hermione\tuser-her\nharbour\tuser-harbour\nboats\tuser-boats\n", "utf-8"
        )
        settings = JobSettings(voice=VOICE, lexicon=tuple(parse("Hermione\tjob-her\n", "j")))
        lexicon = job_lexicon(store, epub, read_epub(epub), settings, engine)
    assert lexicon.speak("Hermione saw boats in the harbour.", english) == (
        "job-her saw user-boats in the book-harbour."
    )


def test_the_engine_gets_the_entry_and_only_chunks_with_the_word_are_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    epub = _book(tmp_path / "b.epub")
    engine = get_engine("piper")
    given: list[str] = []
    real = engine.prepare
    monkeypatch.setattr(
        engine, "prepare", lambda texts, *a, **k: (given.extend(texts), real(texts, *a, **k))[1]
    )

    def lexicon(say: str) -> tuple[Entry, ...]:
        return tuple(parse(f"Hermione\t{say}\n", "job.tsv"))

    with JobStore.open_default() as store:
        first = JobSettings(voice=VOICE, lexicon=lexicon("Her-my-oh-nee"))
        job = submit_job(store, epub, read_epub(epub), tmp_path / "b.m4b", first, engine)

        def pause_when_spoken(event) -> None:  # type: ignore[no-untyped-def]
            if (
                event.chunks_total
                and event.chunks_done == event.chunks_total
                and store.queue.get_job(job.id).state is JobState.RUNNING
            ):
                store.queue.set_state(job.id, JobState.PAUSED)  # before stitching: stays resumable

        store.queue.set_state(job.id, JobState.RUNNING)
        assert execute_job(store, job.id, pause_when_spoken, engine) is JobState.PAUSED
        assert "Her-my-oh-nee walked to the harbour." in given
        chunks = store.ledger.all_chunks(job.id)
        assert [c.text for c in chunks][1] == "Hermione walked to the harbour."
        assert [c.title for c in store.ledger.chapters(job.id)] == ["The Harbour"]

        given.clear()
        store.queue.update_settings(
            job.id,
            JobSettings.from_dict(
                {
                    **store.queue.get_job(job.id).settings.to_dict(),
                    "lexicon": lexicon("Hair-mee-own"),
                }
            ),
        )
        store.queue.set_state(job.id, JobState.QUEUED)
        store.queue.set_state(job.id, JobState.RUNNING)
        assert execute_job(store, job.id, None, engine) is JobState.DONE
    # Exactly the two chunks that say the name, and no others.
    assert given == ["Hair-mee-own walked to the harbour.", "Nobody saw Hair-mee-own leave."]


def test_converting_the_book_again_after_an_edit_speaks_only_the_chunks_with_the_word(
    tmp_path: Path,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The book's lexicon is edited between two conversions of the book: the second job
    shares the first one's audio and speaks just the chunks that say the name."""
    epub = _book(tmp_path / "b.epub")
    given: list[str] = []
    real = PiperEngine.prepare
    monkeypatch.setattr(
        PiperEngine,
        "prepare",
        lambda self, texts, *a, **k: (given.extend(texts), real(self, texts, *a, **k))[1],
    )
    monkeypatch.setenv("AUDIOPUB_CPU_WORKERS", "1")  # speak in this process, where `given` is
    assert main(["convert", str(epub), "-o", str(tmp_path / "first.m4b")]) == 0
    with JobStore.open_default() as store:
        (first,) = store.queue.list_jobs()
        chunks = store.ledger.all_chunks(first.id)
    with_name = [c for c in chunks if "Hermione" in c.text]
    assert len(with_name) == 2 and len(chunks) > 2

    book_file = book_lexicon_path(data_dir, epub)
    book_file.parent.mkdir(parents=True)
    book_file.write_text("Hermione\ther-MY-oh-nee\n", "utf-8")
    given.clear()
    capsys.readouterr()
    assert main(["convert", str(epub), "-o", str(tmp_path / "second.m4b")]) == 0

    assert given == ["her-MY-oh-nee walked to the harbour.", "Nobody saw her-MY-oh-nee leave."]
    reused = len(chunks) - len(with_name)
    assert f"reused: {reused} of {len(chunks)} chunks" in capsys.readouterr().out
    assert main(["jobs", "--details"]) == 0
    details = capsys.readouterr().out
    assert f"2 spoken by this job, {reused} reused from earlier jobs" in details
    assert f"0 spoken by this job, {len(chunks)} reused" not in details  # the first made all
    assert probe(tmp_path / "second.m4b").duration_s > 1.0


def test_a_malformed_lexicon_converts_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    epub = _book(tmp_path / "b.epub")
    bad = tmp_path / "names.tsv"
    bad.write_text("# my names\nHermione her-MY-oh-nee\n", "utf-8")
    assert main(["convert", str(epub), "--lexicon", str(bad), "-o", str(tmp_path / "b.m4b")]) == 1
    assert f"{bad}:2: expected" in capsys.readouterr().err
    with JobStore.open_default() as store:
        assert store.queue.list_jobs() == []
    assert not (tmp_path / "b.m4b").exists()


# --- the book's own hints (EPUB 3 text-to-speech features) ------------------------------

PLS = """<?xml version="1.0" encoding="UTF-8"?>
<lexicon version="1.0" xmlns="http://www.w3.org/2005/01/pronunciation-lexicon"
         alphabet="ipa" xml:lang="en">
  <lexeme><grapheme>Quillfeather</grapheme><phoneme>kwˈɪlfɛðɚ</phoneme></lexeme>
  <lexeme><grapheme>Zorb</grapheme><phoneme alphabet="x-sampa">zO:b</phoneme></lexeme>
  <lexeme><grapheme>Tegumai</grapheme><alias>teg-oo-my</alias></lexeme>
</lexicon>
"""


def _book_with_hints(path: Path) -> Path:
    """A generated EPUB 3 with a PLS lexicon in its manifest and an ssml:ph attribute."""
    plain = build_epub(
        path.with_name("plain.epub"),
        [("One", ["Quillfeather met Tegumai and Hermione at the harbour.", "Zorb waved."])],
    )
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(path, "w") as out:
        for info in source.infolist():
            data = source.read(info)
            if info.filename.endswith("content.opf"):
                data = data.replace(
                    b"<manifest>",
                    b'<manifest>\n    <item href="names.pls" '
                    b'id="pls" media-type="application/pls+xml"/>',
                )
            if info.filename.endswith("chapter1.xhtml"):
                data = data.replace(
                    b"xmlns:epub=", b'xmlns:ssml="http://www.w3.org/2001/10/synthesis" xmlns:epub='
                )
                data = data.replace(
                    b"Hermione", '<span ssml:ph="həmˈaɪəni">Hermione</span>'.encode()
                )
            out.writestr(info, data)
        out.writestr("EPUB/names.pls", PLS)
    return path


def test_the_books_pls_lexicon_and_ssml_ph_reach_the_engine_as_phonemes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    epub = _book_with_hints(tmp_path / "hints.epub")
    book = read_epub(epub)
    assert [(h.written, h.phonemes) for h in book.pronunciations] == [
        ("Hermione", True),
        ("Quillfeather", True),
        ("Tegumai", False),
    ]
    assert any("alphabet other than IPA" in note for note in book.warnings)  # Zorb's x-sampa
    engine = get_engine("piper")
    given: list[str] = []
    real = engine.prepare
    monkeypatch.setattr(
        engine, "prepare", lambda texts, *a, **k: (given.extend(texts), real(texts, *a, **k))[1]
    )
    with JobStore.open_default() as store:
        job = submit_job(store, epub, book, tmp_path / "b.m4b", JobSettings(voice=VOICE), engine)
        store.queue.set_state(job.id, JobState.RUNNING)
        assert execute_job(store, job.id, None, engine) is JobState.DONE
        texts = [c.text for c in store.ledger.all_chunks(job.id)]
    assert "⟦kwˈɪlfɛðɚ⟧ met teg-oo-my and ⟦həmˈaɪəni⟧ at the harbour." in given
    assert "Quillfeather met Tegumai and Hermione at the harbour." in texts  # as written


def test_the_users_entries_come_before_the_books_hints_and_voices_without_phonemes_skip_them(
    tmp_path: Path, data_dir: Path
) -> None:
    epub = _book_with_hints(tmp_path / "hints.epub")
    book = read_epub(epub)
    engine = get_engine("piper")
    with JobStore.open_default() as store:
        book_file = book_lexicon_path(data_dir, epub)
        book_file.parent.mkdir(parents=True)
        book_file.write_text("Quillfeather\tquill-feather\n", "utf-8")
        lexicon = job_lexicon(store, epub, book, JobSettings(voice=VOICE), engine)
    assert lexicon.speak("Quillfeather and Hermione", english) == "quill-feather and ⟦həmˈaɪəni⟧"
    # A voice that takes no phonemes reads the book's IPA hints its own way (no error).
    no_phonemes = Lexicon(from_book(book.pronunciations), None)
    assert no_phonemes.speak("Quillfeather and Tegumai", english) == "Quillfeather and teg-oo-my"
