"""The one `Services` object of the UI process, shared by every page and tab.

    Services
     ├── store        JobStore in the data dir (jobs survive restarts)
     ├── bus          EventBus: the worker publishes progress on it
     ├── worker       ONE background thread running queued jobs, whatever the number of tabs
     ├── activity     the bus drained into a per-job log and the latest figures
     ├── jobs         JobControl: queue, pause, resume, cancel, delete
     ├── library      Library: the finished books, their covers, timings and exports
     ├── catalog      EngineCatalog: the engines and voices offered, the GPU switch's support
     ├── previews     Previews: speech heard in the page, lexicon entries checked
     ├── casts        BookCasts: the casts of the books uploaded (who speaks, in which voice)
     ├── gpu          GpuMonitor: NVML sampled on its own thread
     ├── downloads    VoiceDownloads: one voice download at a time, on its own thread
     ├── reader       BookReader: uploads read in worker processes, a few at a time
     ├── preferences  the UI's remembered settings
     └── mixes        Kokoro voice mixes saved under a name

`app.main` makes it (tests make one on a temporary data dir, with a fake NVML) and hands it to
the routes and pages it registers. Methods that touch disks, engines or drivers block: call
them through `run.io_bound`.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from audiopub import settings as defaults
from audiopub.atomic import scratch_dir
from audiopub.cluster.executor import job_executors
from audiopub.gpu.monitor import DEFAULT_INTERVAL_S, GpuMonitor
from audiopub.jobs.events import EventBus
from audiopub.jobs.store import JobStore, default_store_path
from audiopub.jobs.worker import Worker
from audiopub.listen.stage import WhisperListening
from audiopub.ui.activity import JobActivity
from audiopub.ui.book_casts import BookCasts
from audiopub.ui.book_reading import BookReader, remove_stale_thumbnails
from audiopub.ui.engine_catalog import EngineCatalog, GpuSupport
from audiopub.ui.job_control import JobControl
from audiopub.ui.library import Library
from audiopub.ui.preferences import Preferences
from audiopub.ui.previews import Previews
from audiopub.ui.uploads import max_upload_bytes, remove_stale_uploads
from audiopub.ui.voice_downloads import VoiceDownloads
from audiopub.ui.voice_mixes import FILE_NAME as MIXES_FILE
from audiopub.ui.voice_mixes import VoiceMixes, mixing_engine

log = logging.getLogger(__name__)

# Whether the server (`from_environment`) loads the remembered voice for previews as it starts,
# so the first Preview is quick. A program that starts servers only to send them books may turn
# it off: the voice costs seconds of CPU per start, and a stop waits for it.
WARM_PREVIEWS = True


class Services:
    def __init__(
        self,
        data_dir: Path,
        *,
        nvml: Any = None,
        gpu_support: GpuSupport | None = None,
        gpu_interval_s: float = DEFAULT_INTERVAL_S,
        upload_limit_bytes: int | None = None,
        warm_previews: bool = True,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.store = JobStore(self.data_dir / default_store_path().name)
        self.bus = EventBus()
        self.activity = JobActivity(self.bus)
        # On the cluster `--ray` names, else on this machine: decided once, as the app starts.
        # What the jobs the page submits and the worker runs hear with, where they listen.
        listening = WhisperListening()
        self.worker = Worker(self.store, self.bus, executors=job_executors(), listening=listening)
        self.library = Library(self.store)
        self.jobs = JobControl(self.store, self.worker, self.activity, self.library, listening)
        self.gpu = GpuMonitor(nvml, interval_s=gpu_interval_s)
        self.downloads = VoiceDownloads()
        self.reader = BookReader(self.data_dir)
        self.preferences = Preferences(self.data_dir / "ui-settings.json")
        self.mixes = VoiceMixes(self.data_dir / MIXES_FILE, mixing_engine())
        self.catalog = EngineCatalog(self.mixes, gpu_support)
        self.previews = Previews(self.preferences)
        self.warm_previews = warm_previews  # load the remembered voice for previews at start
        self.casts = BookCasts(self.data_dir)
        # This process's: a killed server's uploads go at the next start (`atomic.scratch_dir`).
        self.uploads_dir = scratch_dir(self.data_dir) / "uploads"
        self.upload_limit_bytes = upload_limit_bytes or max_upload_bytes()
        self._worker_started = False
        self._stopped = False
        # start() runs off the event loop and can still be starting when shutdown calls stop():
        # one lock orders them, so a worker is never started on a closed store.
        self._lifecycle = threading.Lock()
        self.gpu_started = False  # True once the monitor has tried NVML (found a GPU or not)

    @classmethod
    def from_environment(cls) -> Services:
        return cls(defaults.data_dir(), warm_previews=WARM_PREVIEWS)

    # --- lifecycle (blocking) -------------------------------------------------------------

    def start(self) -> None:
        """Start the worker and the GPU monitor (NVML initialisation can take a second)."""
        with self._lifecycle:
            if self._worker_started or self._stopped:
                return
            # Where uploads were kept before they went in the scratch folder.
            removed = remove_stale_uploads(self.data_dir / "uploads")
            removed += remove_stale_thumbnails(self.data_dir)
            if removed:
                log.info("removed %d old upload(s) and cover thumbnail(s)", removed)
            self.gpu.start()
            self.gpu_started = True
            self.worker.start()
            self._worker_started = True
            if self.warm_previews:
                self.previews.start_warmup()

    def stop(self) -> None:
        """Stop after the current chunk; a running job goes back to the queue for next time."""
        with self._lifecycle:
            self._stopped = True
            self.downloads.stop()  # what it fetched stays staged; nothing half-installed
            self.reader.close()
            if self._worker_started:
                self.worker.stop()
                self._worker_started = False
            self.gpu.stop()
            self.previews.join_warmup()
            self.activity.close()
            self.store.close()
