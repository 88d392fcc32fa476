"""Proof-listening as jobs see it: the stage a run drives, and who can start one.

Jobs hear nothing themselves. Whoever submits and runs jobs from above (the web app's
services, the command line) hands submission and the pipeline a `Listening`:
`audiopub.listen.stage.WhisperListening`, which hears with Whisper and judges what it heard.
Jobs never import `audiopub.listen`; the listener sits above them.

A caller that hands in none gets `NO_LISTENING`: a job that does not listen runs as ever, and
one that asks to listen fails, at submission or when it runs, with ListeningUnavailable.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from audiopub.errors import ListeningUnavailable
from audiopub.jobs.models import ChunkRow, Job
from audiopub.jobs.store import JobStore
from audiopub.jobs.synthesis_plan import SynthesisPlan


@dataclass(frozen=True)
class Repairs:
    """What repairing a chapter did: chunks spoken again, and how many of them now pass."""

    spoken_again: int = 0
    fixed: int = 0

    def describe(self, chapter_title: str) -> str:
        still = self.spoken_again - self.fixed
        return (
            f"Proof-listening spoke {self.spoken_again} chunk"
            f"{'' if self.spoken_again == 1 else 's'} of “{chapter_title}” again: "
            f"{self.fixed} fixed, {still} still flagged"
        )


class ListeningStage(Protocol):
    """Proof-listening in one run of one job: `chunk_done` for each chunk made, before a
    chapter is stitched `finish_chapter` then `repair_chapter`, `close` at the end of the run.
    `check` raises to stop waiting (a pause, a cancel)."""

    @property
    def working(self) -> bool:
        """False once listening broke (it said why): the rest of the book is made without."""
        ...

    @property
    def heard_s(self) -> float:
        """Seconds spent hearing in this run."""
        ...

    def chunk_done(self, chunk: ChunkRow, audio_path: Path) -> None:
        """Hear a chunk just made (its audio file is written and marked done)."""
        ...

    def finish_chapter(self, chapter_idx: int, check: Callable[[], None]) -> None:
        """Return once every chunk of the chapter is heard."""
        ...

    def repair_chapter(self, chapter_idx: int, check: Callable[[], None]) -> Repairs:
        """Speak again the chapter's flagged chunks, keeping each one's best take."""
        ...

    def close(self) -> None:
        """Stop listening; what is not heard yet is heard by the job's next run."""
        ...


class Listening(Protocol):
    """What submission and the pipeline ask of proof-listening."""

    def require(self) -> None:
        """Return if a job can listen here; else raise ListeningUnavailable saying what to
        install (asked when a person asks for listening, before anything is spoken)."""
        ...

    def ready(self) -> bool:
        """Whether a job can listen here (a job that did not say listens where it can)."""
        ...

    def start(
        self,
        store: JobStore,
        job: Job,
        job_dir: Path,
        plan: SynthesisPlan,
        language: str,
        notify: Callable[[str], None],
    ) -> ListeningStage:
        """The listening stage of a run of `job`, its listener loaded and listening; raises
        ListeningUnavailable where it can't load. Retakes are spoken with `plan`; `language`
        is the book's ("": not known)."""
        ...


NOT_HANDED_IN: Final = (
    "The job asks for proof-listening, which this command does not do: make it with "
    "`audiopub convert` or the web app, or with proof-listening off"
)


class NoListening:
    """The `Listening` of a caller that never listens: nothing can listen."""

    def require(self) -> None:
        raise ListeningUnavailable(NOT_HANDED_IN)

    def ready(self) -> bool:
        return False

    def start(
        self,
        store: JobStore,
        job: Job,
        job_dir: Path,
        plan: SynthesisPlan,
        language: str,
        notify: Callable[[str], None],
    ) -> ListeningStage:
        raise ListeningUnavailable(NOT_HANDED_IN)


NO_LISTENING: Final = NoListening()
