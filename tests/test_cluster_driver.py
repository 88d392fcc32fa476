"""What the cluster's driver process tells the job of an error, without a cluster: a lost
cluster is `lost` (the job pauses), any other Audiopub error `failed` (the job fails), both
where the job's actors are started and where a batch's audio is awaited."""

from __future__ import annotations

import multiprocessing
import queue
from typing import Any

import pytest

from audiopub.cluster import driver
from audiopub.errors import AudiopubError, ClusterLost, SynthesisFailed

ERRORS = [
    (ClusterLost("the cluster went away"), ("lost", "the cluster went away")),
    (SynthesisFailed("the engine failed"), ("failed", "the engine failed")),
]


class _FailingPool:
    def __init__(self, *_: Any, error: AudiopubError) -> None:
        self.error = error

    def wait(self, texts: list[str], *_: Any) -> str:
        if texts == ["bad"]:
            raise self.error
        return f"audio of {texts[0]}"


@pytest.mark.parametrize(("error", "said"), ERRORS)
def test_an_error_starting_the_actors_is_said_and_ends_the_driver(
    monkeypatch: pytest.MonkeyPatch, error: AudiopubError, said: tuple[str, str]
) -> None:
    def failing_pool(*_: Any) -> None:
        raise error

    monkeypatch.setattr(driver, "_Pool", failing_pool)
    monkeypatch.setenv("RAY_BACKEND_LOG_LEVEL", "fatal")  # main sets it where it is not set
    job_end, driver_end = multiprocessing.Pipe()
    driver.main(driver_end, "127.0.0.1:6379", "piper", "model", "voice", None, 8)
    assert job_end.recv() == said
    assert not job_end.poll()


@pytest.mark.parametrize(("error", "said"), ERRORS)
def test_an_error_awaiting_a_batch_is_said_after_the_batches_before_it(
    error: AudiopubError, said: tuple[str, str]
) -> None:
    submitted: queue.SimpleQueue[Any] = queue.SimpleQueue()
    for texts in (["first"], ["bad"], ["after"]):
        submitted.put((texts, "voice", None, None))
    submitted.put(None)
    sent: list[tuple[Any, ...]] = []
    driver._answer(
        _FailingPool(error=error),
        submitted,  # type: ignore[arg-type]
        lambda *message: sent.append(message),
    )
    assert sent == [("spoken", "audio of first"), said]
