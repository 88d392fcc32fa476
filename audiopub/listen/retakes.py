"""Speaking again the chunks proof-listening flagged, keeping the best take.

A flagged chunk gets at most `len(MORE_TAKES)` more takes, each heard and judged like the
first, stopping at the first take that passes:

    1. the whole chunk again, with a new noise seed
    2. the chunk cut at its sentence and clause boundaries
       (`book.chunks.chunking.split_clauses`), each piece spoken on its own with a new seed
       and the pieces joined into one chunk: an engine that skips or garbles words in a long
       input often says a short one right
    3. the same, with another seed

The best take is kept: the fewest missing words in a row, then the lowest word error rate (the
first take wins a tie). A kept new take replaces the chunk's audio file atomically, and the
store's record of the chunk (frames, word starts, engine seconds) and its hearing are updated in
one transaction, so read-along, subtitles and the chunk cache describe the audio as it is.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final

import numpy as np
import soundfile as sf

from audiopub.book.chunks.chunking import split_clauses
from audiopub.book.text import split_sentences
from audiopub.errors import ListeningUnavailable
from audiopub.jobs.chunk_cache import chunk_path, chunk_relpath, take_key, write_chunk
from audiopub.jobs.chunk_work import ChunkResult, ChunkTask
from audiopub.jobs.hearings import Hearing
from audiopub.jobs.listening import Repairs
from audiopub.jobs.models import ChunkRow, Job
from audiopub.jobs.synthesis_plan import SynthesisPlan
from audiopub.listen import Clip, Verdict, judge
from audiopub.listen.proof_listening import ProofListening

log = logging.getLogger(__name__)

WHOLE: Final = "whole"
CLAUSES: Final = "clauses"
MORE_TAKES: Final = (WHOLE, CLAUSES, CLAUSES)  # after the first take; stops at one that passes
MIN_PIECE_WORDS: Final = 3  # a shorter clause is spoken with the one before it
_SEED_STEP: Final = 1_000_003  # a job's fixed seed moves by this for each take (reproducible)


@dataclass(frozen=True)
class Take:
    """One way the chunk was said, as heard."""

    audio: np.ndarray | None  # None: the chunk's own file, the first take
    sample_rate: int
    word_starts: tuple[int, ...] | None
    synth_s: float  # engine seconds this take cost
    heard: str
    verdict: Verdict

    def better_than(self, other: Take) -> bool:
        return (self.verdict.missing_run, self.verdict.wer) < (
            other.verdict.missing_run,
            other.verdict.wer,
        )


def clause_pieces(text: str) -> list[str]:
    """The text cut at sentence and clause boundaries, a clause of fewer than MIN_PIECE_WORDS
    words kept with the one before it; joined with spaces they give the text back."""
    pieces: list[str] = []
    for sentence in split_sentences(text):
        for clause in split_clauses(sentence):
            if pieces and len(clause.split()) < MIN_PIECE_WORDS:
                pieces[-1] = f"{pieces[-1]} {clause}"
            else:
                pieces.append(clause)
    if len(pieces) > 1 and len(pieces[0].split()) < MIN_PIECE_WORDS:
        pieces[:2] = [f"{pieces[0]} {pieces[1]}"]
    return pieces or [text]


def take_seed(job_seed: int | None, take: int) -> int:
    """A new noise seed for take `take` (1, 2, ...): derived from the job's seed where it fixed
    one, so a run with --seed makes the same takes again; fresh otherwise."""
    if job_seed is not None:
        return (job_seed + take * _SEED_STEP) % 2**32
    return secrets.randbits(32)


class Retakes:
    """Repairs the flagged chunks of one run's job with its synthesis plan (its executor, the
    chunk's task) and its listener."""

    def __init__(
        self,
        job: Job,
        job_dir: Path,
        plan: SynthesisPlan,
        listening: ProofListening,
        check: Callable[[], None],
        notify: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.job = job
        self.job_dir = Path(job_dir)
        self.plan = plan
        self.listening = listening
        self.store = listening.store
        self._check = check
        self._notify = notify

    def repair_chapter(self, chapter_idx: int) -> Repairs:
        repairs = Repairs()
        for chunk, hearing in self.store.hearings.chunks_to_repair(self.job.id, chapter_idx):
            if not self.listening.working:
                break
            kept = self._repair(chunk, hearing)
            repairs = Repairs(repairs.spoken_again + 1, repairs.fixed + (not kept.flagged))
        return repairs

    def _repair(self, chunk: ChunkRow, hearing: Hearing) -> Hearing:
        language = self.listening.language
        best = first = Take(
            None,
            chunk.sample_rate or 0,
            chunk.word_starts,
            chunk.synth_s or 0.0,
            hearing.heard,
            Verdict(hearing.flagged, hearing.wer, hearing.missing_run, hearing.reason),
        )
        synth_s, heard_takes = first.synth_s, 1
        for number, how in enumerate(MORE_TAKES, start=1):
            pieces = clause_pieces(chunk.spoken) if how == CLAUSES else [chunk.spoken]
            take = self._speak(chunk, pieces, take_seed(self.job.settings.seed, number), number)
            if take is None:
                continue  # the engine failed on it: the takes so far stand
            assert take.audio is not None  # a take spoken here carries its audio
            try:
                heard = self.listening.hear_now(
                    [Clip(take.audio, take.sample_rate, language)], self._check
                )[0]
            except ListeningUnavailable:
                break  # listening stopped (and said why): keep the best take so far
            take = replace(take, heard=heard, verdict=judge(chunk.spoken, heard, language))
            synth_s += take.synth_s
            heard_takes += 1
            if take.better_than(best):
                best = take
            if not take.verdict.flagged:
                break
        kept = Hearing(
            chunk.cache_key,
            best.heard,
            best.verdict.wer,
            best.verdict.missing_run,
            best.verdict.flagged,
            best.verdict.reason,
            first_flagged=True,
            takes=heard_takes,
            model=self.listening.ears.size,
        )
        if best is first:
            self.store.hearings.record_hearing(self.job.id, kept)
        else:
            self._keep(chunk, best, kept, synth_s)
        return kept

    def _speak(self, chunk: ChunkRow, pieces: Sequence[str], seed: int, number: int) -> Take | None:
        """The pieces spoken with `seed` and joined; None if the engine failed."""
        whole = self.plan.task(chunk, self.job_dir)  # its voice: a character's keeps theirs
        options = replace(whole.options, seed=seed)
        tasks: list[ChunkTask] = []
        for index, piece in enumerate(pieces):
            key = take_key(chunk.cache_key, number, index)
            tasks.append(
                replace(
                    whole,
                    key=key,
                    text=piece,
                    options=options,
                    out_path=chunk_path(self.job_dir, key),
                )
            )
        results: list[ChunkResult] = []
        iterator = self.plan.executor.map(tasks, notify=self._notify)
        try:
            for result in iterator:
                results.append(result)
                self._check()
        finally:
            iterator.close()  # abandons pieces not started when the job stops
            parts = [_read_and_remove(task.out_path) for task in tasks]
        failed = next((r.error for r in results if r.error is not None), None)
        if failed is not None or len(results) != len(tasks) or any(p is None for p in parts):
            log.warning(
                "job %s: take %d of a flagged chunk failed: %s", self.job.id, number, failed
            )
            return None
        audio = np.concatenate([p for p in parts if p is not None])
        return Take(
            audio,
            results[0].sample_rate,
            _joined_word_starts(results),
            sum(r.synth_s for r in results),
            "",
            Verdict(True, 1.0, 0, ""),
        )

    def _keep(self, chunk: ChunkRow, take: Take, hearing: Hearing, synth_s: float) -> None:
        """The take becomes the chunk's audio: the file first (atomically), then the store."""
        assert take.audio is not None
        path = chunk_path(self.job_dir, chunk.cache_key)
        frames = write_chunk(path, take.audio, take.sample_rate)
        self.store.hearings.keep_take(
            self.job.id,
            hearing,
            audio_path=chunk_relpath(chunk.cache_key),
            frames=frames,
            sample_rate=take.sample_rate,
            word_starts=take.word_starts,
            synth_s=synth_s,
        )
        if chunk.audio_path and self.job_dir / chunk.audio_path != path:
            (self.job_dir / chunk.audio_path).unlink(missing_ok=True)  # an older WAV's


def _read_and_remove(path: Path) -> np.ndarray | None:
    try:
        audio, _ = sf.read(str(path), dtype="float32", always_2d=False)
    except (OSError, sf.SoundFileError, RuntimeError):
        return None
    finally:
        path.unlink(missing_ok=True)
    return audio


def _joined_word_starts(results: Sequence[ChunkResult]) -> tuple[int, ...] | None:
    """Each piece's word starts moved by the frames before it; None unless every piece's
    engine said where its words start."""
    starts: list[int] = []
    offset = 0
    for result in results:
        if result.word_starts is None:
            return None
        starts.extend(offset + start for start in result.word_starts)
        offset += result.frames
    return tuple(starts)
