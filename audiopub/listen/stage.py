"""Proof-listening handed to the jobs: Whisper hears each chunk, the judge flags, retakes mend.

Jobs own the interface (`jobs.listening`: `Listening`, `ListeningStage`) and never import
this package; the web app's services and the command line hand a `WhisperListening` to
submission, the worker and the foreground run, and a run's pipeline starts its stage from it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from audiopub.jobs.listening import Repairs
from audiopub.jobs.models import ChunkRow, Job
from audiopub.jobs.store import JobStore
from audiopub.jobs.synthesis_plan import SynthesisPlan
from audiopub.listen.proof_listening import Ears, ProofListening
from audiopub.listen.ready import listening_ready, load_listener, require_listening
from audiopub.listen.retakes import Retakes


class ListeningRun:
    """One run's `ListeningStage`: its listening thread, and the retakes of what it flags."""

    def __init__(
        self,
        listening: ProofListening,
        job: Job,
        job_dir: Path,
        plan: SynthesisPlan,
        notify: Callable[[str], None],
    ) -> None:
        self._listening = listening
        self._job = job
        self._job_dir = Path(job_dir)
        self._plan = plan
        self._notify = notify

    @property
    def working(self) -> bool:
        return self._listening.working

    @property
    def heard_s(self) -> float:
        return self._listening.heard_s

    def chunk_done(self, chunk: ChunkRow, audio_path: Path) -> None:
        self._listening.chunk_done(chunk, audio_path)

    def finish_chapter(self, chapter_idx: int, check: Callable[[], None]) -> None:
        self._listening.finish_chapter(chapter_idx, check)

    def repair_chapter(self, chapter_idx: int, check: Callable[[], None]) -> Repairs:
        return Retakes(
            self._job, self._job_dir, self._plan, self._listening, check, self._notify
        ).repair_chapter(chapter_idx)

    def close(self) -> None:
        self._listening.close()


class WhisperListening:
    """The jobs' `Listening`: ready where the `listen` extra and a listening model are
    installed (`ready`), hearing with the listener `load` makes for a job (Whisper, float16
    on a GPU, int8 on the CPU; the tests hand in stand-ins)."""

    def __init__(self, load: Callable[[bool], Ears] = load_listener) -> None:
        self._load = load

    def require(self) -> None:
        require_listening()

    def ready(self) -> bool:
        return listening_ready()

    def start(
        self,
        store: JobStore,
        job: Job,
        job_dir: Path,
        plan: SynthesisPlan,
        language: str,
        notify: Callable[[str], None],
    ) -> ListeningRun:
        ears = self._load(job.settings.use_gpu)
        listening = ProofListening(store, job.id, job_dir, language, ears, notify)
        listening.start()
        return ListeningRun(listening, job, job_dir, plan, notify)
