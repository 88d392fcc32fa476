"""What runs on a cluster's worker: an actor that holds one engine and speaks batches.

It returns the audio instead of writing it: the head writes the chunk files, so the job's
folder lives on one machine only. A batch that fails is spoken one chunk at a time, so that a
bad chunk names itself and the good ones are kept (as `chunk_work.synthesize_batch` does).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from audiopub.cluster.models import ModelFiles, remove, unpack
from audiopub.errors import AudiopubError
from audiopub.jobs.chunk_work import RETRIES
from audiopub.tts.engine import Engine, SynthesisOptions, SynthesisResult
from audiopub.tts.registry import get_engine

log = logging.getLogger(__name__)

Spoken = SynthesisResult | str  # the audio of a chunk, or why the engine failed on it


@dataclass(frozen=True)
class SpokenBatch:
    spoken: list[Spoken]
    provider: str  # the execution provider that spoke it
    node: str  # the address of the machine that spoke it


def speak_batch(
    engine: Engine, texts: Sequence[str], voice: str, options: SynthesisOptions
) -> list[Spoken]:
    """One padded batch; if it fails, each text alone (RETRIES more tries each)."""
    if len(texts) > 1:
        try:
            return list(engine.speak(engine.prepare(texts, voice, options), voice, options))
        except AudiopubError:
            raise
        except Exception as exc:  # engine internals: fall back to one chunk at a time
            log.warning("a batch of %d chunks failed (%s); trying them one by one", len(texts), exc)
    return [_speak_one(engine, text, voice, options) for text in texts]


def _speak_one(engine: Engine, text: str, voice: str, options: SynthesisOptions) -> Spoken:
    error = ""
    for _ in range(RETRIES + 1):
        try:
            (result,) = engine.synthesize([text], voice, options)
            return result
        except AudiopubError:
            raise
        except Exception as exc:  # engine internals (ORT, espeak): said with the chunk's text
            error = f"The engine failed on this text: {text!r} ({exc})"
    return error


class SpeechWorker:
    """One engine on one worker (a CPU core or a GPU), loaded from shipped model files."""

    def __init__(self, engine_name: str, files: list[Any], use_gpu: bool) -> None:
        import ray  # on the worker, where the actor runs

        # The reference comes in a list, so Ray leaves it to the actor to fetch: the head
        # keeps the files in the object store, and a restarted actor fetches them again.
        shipped: ModelFiles = ray.get(files[0])
        self.folder = unpack(shipped)
        # One intra-op thread on a CPU actor: the cluster runs one actor per core.
        self.engine = get_engine(
            engine_name, use_gpu=use_gpu, model_dir=self.folder, threads=None if use_gpu else 1
        )
        self.node = ray.util.get_node_ip_address()

    def speak(self, texts: list[str], voice: str, options: SynthesisOptions) -> SpokenBatch:
        spoken = speak_batch(self.engine, texts, voice, options)
        return SpokenBatch(spoken, self.engine.device.provider, self.node)

    def pid(self) -> int:
        return os.getpid()

    def __del__(self) -> None:
        if hasattr(self, "folder"):
            remove(self.folder)
