"""Kokoro-82M from the Hub repository `onnx-community/Kokoro-82M-v1.0-ONNX`: one model variant,
its vocabulary and every voice, into the folder the Kokoro engine reads (<models>/kokoro/, in
the repository's own layout).

The variant fits the device unless asked for: int8 on the CPU (the fastest there, 88 MB), fp32
on CUDA, where the int8 graph's ConvInteger/MatMulInteger/DynamicQuantizeLinear have no kernels
and would run on the CPU. Files are fetched and checked (size, the Hub's SHA-256) in a staging
folder as for every download, an interrupted download continues from the files already
complete, and they are moved into place with the model file last: a variant is there for the
engine once its model file is.

The repository's voices are also known without the Hub (`repository.kokoro_index`), so
`voices --all` lists them offline or where a mirror lacks them.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from audiopub.atomic import atomic_write
from audiopub.errors import AudiopubError, DownloadFailed
from audiopub.tts import hub
from audiopub.tts.downloads import (
    STAGING,
    Installed,
    download,
    durable_replace,
    remove_downloaded_folder,
    staging_folder,
)
from audiopub.tts.kokoro.files import (
    CONFIG,
    TOKENIZER,
    VARIANTS,
    VOICES,
    KokoroFiles,
    default_folder,
)
from audiopub.tts.kokoro.repository import KOKORO_ID, KOKORO_REPO, RECORD, kokoro_index

log = logging.getLogger(__name__)

LIST_TIMEOUT_S: Final = 5.0  # a person is waiting for `voices --all`
SHIPPED_SOURCE: Final = "the voice index shipped with Audiopub"


def device_variant() -> str:
    """int8 where only the CPU runs it, fp32 where CUDA can."""
    from audiopub.tts import onnx_runtime  # ONNX Runtime itself: only to pick the variant

    return "fp32" if onnx_runtime.cuda_can_run() else "int8"


def wanted(path: str, variant: str) -> bool:
    """Whether a file of the repository is downloaded for this variant."""
    if path in (VARIANTS[variant], TOKENIZER, CONFIG):
        return True
    folder, _, name = path.partition("/")
    return folder == VOICES and "/" not in name and name.endswith(".bin")


def install_kokoro(
    revision: str | None = None,
    variant: str | None = None,
    on_progress: Callable[[hub.Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> Installed:
    """The variant (default: the device's), the vocabulary and every voice."""
    variant = variant or device_variant()
    if variant not in VARIANTS:
        raise AudiopubError(
            f"Kokoro has no variant {variant!r}; choose one of {', '.join(VARIANTS)}."
        )
    revision = revision or "main"
    target = default_folder()
    model = target / VARIANTS[variant]
    _, listing = hub.repo_files(KOKORO_REPO, revision)
    files = [file for file in listing if wanted(file.path, variant)]
    have = {file.path for file in files}
    missing = [path for path in (VARIANTS[variant], TOKENIZER) if path not in have]
    if missing or not any(path.startswith(f"{VOICES}/") for path in have):
        raise DownloadFailed(
            f"{KOKORO_REPO} at {revision} is not a Kokoro model Audiopub can "
            f"read (missing: {', '.join(missing) or 'voices/*.bin'})."
        )
    fetch = [file for file in files if not _installed(target / file.path, file)]
    if not fetch:
        return Installed(KOKORO_ID, model, sum(file.size for file in files), already=True)
    # Staged beside the folder, on its filesystem, so the files are moved in by renames.
    with staging_folder(target.parent, KOKORO_ID) as staging:
        staged = download(KOKORO_REPO, fetch, staging, f"Kokoro ({variant})", on_progress, cancel)
        _place(target, staged, VARIANTS[variant])
        _note(target, variant, revision, files)
    _check(target, variant)
    return Installed(KOKORO_ID, model, sum(file.size for file in fetch))


def _installed(path: Path, file: hub.HubFile) -> bool:
    """Whether the folder holds this file already, as the Hub lists it."""
    if not path.is_file() or path.stat().st_size != file.size:
        return False
    try:
        hub.verify(path, file)
    except AudiopubError:
        return False
    return True


def _place(target: Path, staged: dict[str, Path], model_path: str) -> None:
    """Move the verified files into the folder, the model file last."""
    for path in sorted(staged, key=lambda p: p == model_path):
        destination = target / path
        destination.parent.mkdir(parents=True, exist_ok=True)
        durable_replace(staged[path], destination)


def _note(target: Path, variant: str, revision: str, files: list[hub.HubFile]) -> None:
    """Add this download to the folder's record: `voices remove kokoro` removes only a
    folder Audiopub downloaded."""
    record_path = target / RECORD
    try:
        record = json.loads(record_path.read_text("utf-8"))
    except (OSError, ValueError):
        record = {}
    record.update(
        id=KOKORO_ID,
        repo=KOKORO_REPO,
        endpoint=hub.endpoint(),
        revision=revision,
        commit=files[0].commit if files else None,
        downloaded=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    )
    record.setdefault("files", {}).update(
        {f.path: {"size": f.size, "sha256": f.sha256} for f in files}
    )
    record["variants"] = sorted({*record.get("variants", []), variant})
    with atomic_write(record_path) as temp:
        temp.write_text(json.dumps(record, indent=1), "utf-8")


def _check(target: Path, variant: str) -> None:
    """The same checks the engine makes before it loads: the vocabulary reads, voices exist."""
    files = KokoroFiles(target)
    files.model(on_gpu=False, variant=variant)
    files.vocabulary()
    if not files.voice_names():
        raise DownloadFailed(f"The downloaded Kokoro in {target} has no voices.")


def remove_kokoro() -> list[Path]:
    """Remove the Kokoro folder Audiopub downloaded (and any unfinished download of it)."""
    removed = []
    target = default_folder()
    staging = target.parent / STAGING / KOKORO_ID
    if staging.exists():
        shutil.rmtree(staging)
        removed.append(staging)
    return remove_downloaded_folder(
        target, RECORD, removed, AudiopubError(f"Kokoro is not installed in {target}.")
    )


@dataclass(frozen=True)
class KokoroListing:
    """Kokoro's voices and where the list came from."""

    voices: tuple[str, ...]
    source: str


def kokoro_voices(ask_hub: bool = True, timeout_s: float = LIST_TIMEOUT_S) -> KokoroListing:
    """The repository's voices: the Hub's list; where the Hub is not asked or can't say (the
    Piper list already says why it did not answer), the shipped index and any other voice
    installed."""
    if ask_hub:
        try:
            _, listing = hub.repo_files(KOKORO_REPO, "main", timeout_s)
        except AudiopubError as exc:
            log.info("Kokoro's voice list not refreshed: %s", hub.reason(exc))
        else:
            names = sorted(
                path.rsplit("/", 1)[-1].removesuffix(".bin")
                for path in (file.path for file in listing)
                if wanted(path, "int8") and path.startswith(f"{VOICES}/")
            )
            return KokoroListing(tuple(names), KOKORO_REPO)
    installed = KokoroFiles(default_folder()).voice_names()
    return KokoroListing(tuple(sorted({*kokoro_index(), *installed})), SHIPPED_SOURCE)
