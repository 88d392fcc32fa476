"""Proof-listening in real jobs, heard by the real Whisper base (`whisper_model`): a chunk the
engine said wrong is flagged, spoken again and fixed, and only it; a voice that says no words
(the tiny Supertonic model's tones) has every chunk flagged and the book still finishes with
the list; a resumed job does not hear again what it heard. Loading the model costs seconds:
one converted book per scenario, shared by the tests that read it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import soundfile as sf
from epub_factory import build_epub
from tiny_supertonic import build_tiny_model

from audiopub.book.epub.reader import read_epub
from audiopub.cli import main
from audiopub.jobs.chunk_cache import chunk_is_valid
from audiopub.jobs.events import JobEvent
from audiopub.jobs.models import Job, JobSettings, JobState
from audiopub.jobs.store import JobStore
from audiopub.jobs.submission import submit_job
from audiopub.jobs.worker import execute_job
from audiopub.listen import Listener
from audiopub.listen.retakes import clause_pieces
from audiopub.listen.stage import WhisperListening
from audiopub.tts.engine import Engine, SynthesisOptions
from audiopub.tts.registry import get_engine

# Said wrong on the first take only: a whole take with a new seed fixes it.
ONCE = (
    "She counted the lighthouses as they passed, one for every mile. "
    "Nobody on the platform seemed to expect anyone at all."
)
# Said wrong whenever it is spoken whole: only the take cut at its clauses says all of it.
WHOLE = (
    "The harbour smelled of tar, salt and fresh bread, and somewhere a radio was "
    "playing an old dance tune."
)
WRONG = {
    ONCE: ("She counted the lighthouses as they passed, one for every mile.", 1),
    WHOLE: ("The harbour smelled of tar, salt and fresh bread.", 99),
}


class Misspeaks:
    """The real engine, saying another text instead of some chunks' (`WRONG`: the text said
    instead and on how many takes), as an engine that skips words would."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self.takes: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)

    def _said(self, texts: Sequence[str]) -> list[str]:
        said = []
        for text in texts:
            self.takes[text] += 1
            instead, times = WRONG.get(text, (text, 0))
            said.append(instead if self.takes[text] <= times else text)
        return said

    def synthesize(self, texts: Sequence[str], voice: str, options: SynthesisOptions) -> Any:
        return self._engine.synthesize(self._said(texts), voice, options)

    def prepare(self, texts: Sequence[str], voice: str, options: SynthesisOptions) -> Any:
        return self._engine.prepare(self._said(texts), voice, options)


@pytest.fixture(scope="module")
def environment(tmp_path_factory: pytest.TempPathFactory, whisper_base: Path) -> Iterator[Path]:
    """One data dir for the module (its tests read the books converted in it), with Whisper
    base installed as the listening model."""
    data = tmp_path_factory.mktemp("proof-listening-data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUDIOPUB_DATA_DIR", str(data))
        patch.setenv("AUDIOPUB_MODELS_DIR", str(whisper_base))
        yield data


@pytest.fixture
def data_dir(environment: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AUDIOPUB_DATA_DIR", str(environment))  # not a folder of its own
    return environment


@pytest.fixture
def store(data_dir: Path) -> Iterator[JobStore]:
    with JobStore.open_default() as opened:
        yield opened


@pytest.fixture(scope="module")
def joe() -> Engine:
    return get_engine("piper")


WHISPER = WhisperListening()  # as the web app and the command line hand it to their jobs


def convert(
    store: JobStore, epub: Path, engine: Engine, settings: JobSettings, publish: Any = None
) -> Job:
    job = submit_job(
        store, epub, read_epub(epub), epub.with_suffix(".m4b"), settings, engine, WHISPER
    )
    store.queue.set_state(job.id, JobState.RUNNING)
    execute_job(store, job.id, publish, engine, listening=WHISPER)
    return store.queue.get_job(job.id)


@pytest.fixture(scope="module")
def misspoken(environment: Path, joe: Engine) -> Iterator[tuple[Job, Misspeaks]]:
    """A book of two chapters made with joe, two of its chunks said wrong."""
    epub = build_epub(
        environment / "coast.epub",
        [
            ("Arrival", ["The rain had stopped by the time the train reached the coast.", ONCE]),
            ("The Harbour", ["A dog slept in the shade of the ticket office.", WHOLE]),
        ],
        title="Coastline",
    )
    engine = Misspeaks(joe)
    with JobStore.open_default() as store:
        # A fixed seed: every take, the repairs' too, is the same on every run of the test.
        settings = JobSettings(seed=11, proof_listen=True)
        yield convert(store, epub, engine, settings), engine  # type: ignore[arg-type]


def test_a_chunk_said_wrong_is_flagged_spoken_again_and_fixed_and_only_it(
    store: JobStore, misspoken: tuple[Job, Misspeaks]
) -> None:
    job, engine = misspoken
    assert job.state is JobState.DONE, job.error
    hearings = store.hearings.by_key(job.id)
    by_text = {chunk.text: hearings[chunk.cache_key] for chunk in store.ledger.all_chunks(job.id)}
    assert len(by_text) == 6  # the chapters' titles are read too
    once, whole = by_text.pop(ONCE), by_text.pop(WHOLE)
    assert (once.first_flagged, once.takes, once.flagged) == (True, 2, False)
    assert "nobody on the platform" in once.heard.lower()
    assert (whole.first_flagged, whole.takes, whole.flagged) == (True, 3, False)
    assert "dance tune" in whole.heard.lower()
    assert all(not h.first_flagged and h.takes == 1 for h in by_text.values()), by_text
    assert engine.takes[ONCE] == engine.takes[WHOLE] == 2  # whole; then WHOLE's pieces
    assert store.hearings.listening_summary(job.id).describe() == (
        "proof-listening: 2 of 6 chunks flagged (2 spoken again, 0 still flagged)"
    )


def test_the_kept_take_is_the_chunks_audio_its_word_starts_and_its_cache(
    store: JobStore, misspoken: tuple[Job, Misspeaks], joe: Engine
) -> None:
    job, _ = misspoken
    voice = job.settings.voice or ""
    for chunk in store.ledger.all_chunks(job.id):
        path = store.job_dir(job.id) / (chunk.audio_path or "")
        assert chunk_is_valid(path, chunk.frames)  # the file is the take the store describes
        assert sf.info(str(path)).frames == chunk.frames
        assert (
            chunk.word_starts is not None
            and list(chunk.word_starts) == sorted(chunk.word_starts)
            and chunk.word_starts[-1] < (chunk.frames or 0)
        )
        assert chunk.clip_frames is not None and chunk.clip_frames <= (chunk.frames or 0)
        if chunk.text == WHOLE:  # the pieces' words, each moved by the pieces before it
            pieces = clause_pieces(chunk.spoken)
            assert len(pieces) == 3
            said = joe.synthesize(pieces, voice, job.settings.synthesis_options())
            assert len(chunk.word_starts) == sum(len(r.word_starts or ()) for r in said)
        else:  # the whole text, as the engine says it
            (said,) = joe.synthesize([chunk.spoken], voice, job.settings.synthesis_options())
            assert len(chunk.word_starts) == len(said.word_starts or ())


def test_jobs_details_says_what_was_flagged(
    store: JobStore, misspoken: tuple[Job, Misspeaks], capsys: pytest.CaptureFixture[str]
) -> None:
    job, _ = misspoken
    assert main(["jobs", "--details"]) == 0
    out = capsys.readouterr().out
    assert "proof-listening: 2 of 6 chunks flagged (2 spoken again, 0 still flagged)" in out
    assert store.hearings.still_flagged(job.id) == []


def test_tones_are_flagged_still_flagged_and_the_book_finishes_with_the_list(
    data_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("AUDIOPUB_SUPERTONIC_DIR", str(build_tiny_model(tmp_path / "st")))
    # A title and one sentence: two chunks, each heard on four takes (a Whisper window each),
    # are enough for a list of what is still flagged, in the book's order.
    epub = build_epub(
        tmp_path / "tones.epub",
        [("Only", ["Nobody in the whole town seemed to mind it at all."])],
        title="Tones",
    )
    out = tmp_path / "tones.m4b"
    assert (
        main(
            [
                "convert",
                "--engine",
                "supertonic",
                "--voice",
                "F1",
                "--steps",
                "2",
                "--seed",
                "7",
                "--proof-listen",
                str(epub),
                "-o",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out.strip().splitlines()
    assert out.is_file()
    assert printed[-1] == (
        "proof-listening: 2 of 2 chunks flagged (2 spoken again, 2 still flagged)"
    )
    with JobStore.open_default() as store:
        (job,) = [j for j in store.queue.list_jobs() if j.output_path == out]
        flagged = store.hearings.still_flagged(job.id)
        assert [f.text for f in flagged] == [
            "Only",
            "Nobody in the whole town seemed to mind it at all.",
        ]
        assert all(f.takes == 4 and f.book_s is not None for f in flagged)
        assert flagged[0].book_s < flagged[1].book_s  # type: ignore[operator]
    assert main(["jobs", "--details"]) == 0
    details = capsys.readouterr().out
    assert "proof-listening: 2 of 2 chunks flagged (2 spoken again, 2 still flagged)" in details
    assert "chapter 1 “Only”, at 0:0" in details
    assert "text:  Nobody in the whole town seemed to mind it at all." in details
    assert "heard: " in details


def test_a_resumed_job_does_not_hear_again_what_it_heard(
    store: JobStore, joe: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    heard: list[int] = []
    real_hear = Listener.hear

    def counting(self: Listener, clips: Sequence[Any]) -> list[str]:
        heard.append(len(clips))
        return real_hear(self, clips)

    monkeypatch.setattr(Listener, "hear", counting)
    # Part one heard and stitched before the pause, part two begun, part three not: a title
    # and a line a part is enough for that (each chunk heard costs a Whisper window).
    epub = build_epub(
        tmp_path / "three.epub",
        [
            (f"Part {c}", [f"This is the line of part {c}, read aloud."])
            for c in ("one", "two", "three")
        ],
    )

    def pause_in_part_two(event: JobEvent) -> None:  # part one: its title and its line
        if event.state is JobState.RUNNING and event.chunks_done >= 3:
            if store.queue.get_job(event.job_id).state is JobState.RUNNING:
                store.queue.set_state(event.job_id, JobState.PAUSED)

    job = convert(store, epub, joe, JobSettings(proof_listen=True), pause_in_part_two)
    assert job.state is JobState.PAUSED
    first = store.hearings.by_key(job.id)
    assert len(first) >= 2  # part one was heard before it was stitched
    heard.clear()
    store.queue.set_state(job.id, JobState.QUEUED)
    store.queue.set_state(job.id, JobState.RUNNING)
    assert execute_job(store, job.id, engine=joe, listening=WHISPER) is JobState.DONE
    after = store.hearings.by_key(job.id)
    assert len(after) == 6
    # A chunk heard before the pause is not heard again, except that one still wrong then (its
    # chapter not yet stitched) is repaired now: its hearing becomes its retakes' verdict.
    to_repair = {key for key, h in first.items() if h.flagged and not h.spoken_again}
    assert all(after[key] == h for key, h in first.items() if key not in to_repair)
    assert all(after[key].spoken_again for key in to_repair)
    retakes_now = sum(h.takes - 1 for h in after.values()) - sum(
        h.takes - 1 for h in first.values()
    )
    assert sum(heard) == 6 - len(first) + retakes_now
