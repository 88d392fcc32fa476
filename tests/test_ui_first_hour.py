"""The first minutes with the web UI: what a job says it is doing from the first second, and a
toast that agrees with the job's badge (NiceGUI's simulated browser, as in test_ui)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from nicegui.testing import User
from test_ui import (  # noqa: F401 — fixtures this module's tests use
    eventually,
    gpu_support,
    job_state,
    models_dir,
    nvml,
    open_with_book,
    press,
    see,
    services,
    small_book,
    text,
)

from audiopub.jobs import pipeline, synthesis_plan
from audiopub.tts.engine import Engine
from audiopub.ui.services import Services

pytestmark = pytest.mark.nicegui_main_file("tests/ui_main.py")


@pytest.fixture
def slow_voice(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """Jobs load their voice only once the test sets the event: the first stage lasts."""
    loaded = threading.Event()
    real = synthesis_plan.get_engine

    def get_engine(*args: object, **kwargs: object) -> Engine:
        loaded.wait(60)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(synthesis_plan, "get_engine", get_engine)
    yield loaded
    loaded.set()  # never leave the worker waiting


@pytest.fixture
def speaking_held(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """After its first chunk a job waits until the test sets the event: a small book would
    otherwise be spoken and joined between two looks at the page."""
    seen = threading.Event()
    real = pipeline.JobRun._record

    def record(run: pipeline.JobRun, *args: object, **kwargs: object) -> None:
        real(run, *args, **kwargs)  # type: ignore[arg-type]
        seen.wait(60)

    monkeypatch.setattr(pipeline.JobRun, "_record", record)
    yield seen
    seen.set()  # never leave the worker waiting


async def test_a_new_job_says_what_it_is_doing_from_the_first_second(
    user: User,
    small_book: Path,
    services: Services,
    slow_voice: threading.Event,
    speaking_held: threading.Event,
) -> None:
    await open_with_book(user, small_book)
    await press(user, "generate")
    # Said at once, and true at once: nothing else runs, so the worker starts it now.
    await eventually(lambda: user.notify.contains("Starting “A Small Book”…"))
    await see(user, marker="job")
    await job_state(user, "Running")
    await eventually(lambda: text(user, "job-stage") == "Loading the voice…", 10)

    slow_voice.set()
    await eventually(lambda: text(user, "job-stage").startswith("Speaking “"), 60)
    speaking_held.set()
    await job_state(user, "Done")
    await user.should_not_see(marker="job-stage")
    with user.scope(marker="job-log"):  # the title and where to find it, not a file name
        await see(user, content="Finished: A Small Book — in the Library")


async def test_a_job_behind_another_is_said_to_wait(
    user: User, small_book: Path, services: Services, slow_voice: threading.Event
) -> None:
    await open_with_book(user, small_book)
    await press(user, "generate")
    await eventually(lambda: user.notify.contains("Starting “A Small Book”…"))
    await eventually(lambda: len(services.store.queue.list_jobs()) == 1)
    await press(user, "generate")
    await eventually(
        lambda: user.notify.contains(
            "“A Small Book” is in the queue: it starts after the job before it"
        )
    )
    slow_voice.set()
