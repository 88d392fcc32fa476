"""Supertonic's releases as the voice library asks for them (`EngineInfo.downloads`): each
release is one download, `supertonic` the newest, into models/<release id>/ in the official
layout; what is installed and which of them the engine speaks with.

A release is fetched at its pinned revision into a staging folder beside the models, checked
with the engine's own check, and moved into place with one rename: it appears whole or not at
all. What brings the Hub client is imported when a download or a fresh list runs.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

from audiopub import figures, settings
from audiopub.atomic import atomic_write
from audiopub.errors import AudiopubError, DownloadFailed, ModelMissing, VoiceNotFound
from audiopub.tts.downloads import (
    DOWNLOADED,
    STAGING,
    YOURS,
    Installed,
    discard_staging,
    download,
    download_record,
    folder_size,
    remove_downloaded_folder,
    staging_folder,
)
from audiopub.tts.engine_info import Listing, Offer, Suggested, matches_language
from audiopub.tts.supertonic.files import ModelFiles
from audiopub.tts.supertonic.releases import (
    SUPERTONIC_DEFAULT,
    SUPERTONIC_FILES,
    SUPERTONIC_RELEASES,
    SupertonicRelease,
    active_model_dir,
    env_dir,
    release_dir,
)

if TYPE_CHECKING:
    from audiopub.tts.hub import Progress

log = logging.getLogger(__name__)

ENGINE: Final = "supertonic"
RECORD: Final = "audiopub-download.json"  # inside a downloaded release's folder


@dataclass(frozen=True)
class InstalledModel:
    id: str  # the release's id, or the folder's name for one set up by hand
    path: Path
    origin: str
    active: bool  # the folder the engine reads (AUDIOPUB_SUPERTONIC_DIR or the chosen release)


def installed_models() -> list[InstalledModel]:
    """Complete Supertonic models: each release's folder and the engine's own folder."""
    active = active_model_dir().resolve()
    candidates = {release_dir(release).resolve(): release.id for release in SUPERTONIC_RELEASES}
    candidates.setdefault(active, active.name)
    models = []
    for path, name in candidates.items():
        try:
            ModelFiles.locate(path)
        except ModelMissing:
            continue
        origin = DOWNLOADED if (path / RECORD).is_file() else YOURS
        models.append(InstalledModel(name, path, origin, path == active))
    return models


def release_named(download_id: str) -> SupertonicRelease | None:
    """The release of `supertonic` (the newest), `supertonic-2`, `supertonic:supertonic-2`."""
    name = download_id.strip().removeprefix(f"{ENGINE}:")
    if name == ENGINE:
        return SUPERTONIC_DEFAULT
    return next((release for release in SUPERTONIC_RELEASES if release.id == name), None)


def how_to_use(release_id: str) -> str:
    if env_dir() is not None:
        return (
            f"unset AUDIOPUB_SUPERTONIC_DIR and run `audiopub voices use {release_id}` to "
            "speak with it"
        )
    return f"`audiopub voices use {release_id}` speaks with it"


def install_release(
    release: SupertonicRelease,
    revision: str | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
) -> Installed:
    """A release at its pinned revision (or `revision`) into models/<release id>/."""
    from audiopub.tts import hub  # the Hub client: see the top

    revision = revision or release.revision
    target = release_dir(release)
    if target.exists():
        try:
            ModelFiles.locate(target)
        except ModelMissing as exc:
            raise DownloadFailed(
                f"{target} exists but is not a complete Supertonic model; "
                "move it away (or `audiopub voices remove "
                f"{release.id}` if Audiopub downloaded it) and try again."
            ) from exc
        return Installed(release.id, target, folder_size(target), already=True)
    _, listing = hub.repo_files(release.repo, revision)
    files = [f for f in listing if release.wants(f.path)]
    missing = [name for name in SUPERTONIC_FILES if name not in {f.path for f in files}]
    if missing or not any(f.path.startswith("voice_styles/") for f in files):
        raise DownloadFailed(
            f"{release.repo} at {revision} is not a Supertonic model Audiopub "
            f"can read (missing: {', '.join(missing) or 'voice_styles/*.json'})."
        )
    with staging_folder(settings.models_dir(), release.id) as staging:
        download(release.repo, files, staging, release.id, on_progress, cancel)
        try:
            ModelFiles.locate(staging)  # the same check the engine makes before loading
        except ModelMissing as exc:
            raise DownloadFailed(f"The downloaded {release.id} is incomplete: {exc}") from exc
        shutil.rmtree(staging / ".cache", ignore_errors=True)  # huggingface_hub's bookkeeping
        with atomic_write(staging / RECORD) as temp:
            record = download_record(release.id, release.repo, revision, files, {})
            temp.write_text(json.dumps(record, indent=1), "utf-8")
        os.rename(staging, target)  # one rename: the model appears whole or not at all
    return Installed(release.id, target, sum(f.size for f in files))


class SupertonicDownloads:
    variants: tuple[str, ...] = ()
    qualities: tuple[str, ...] = ()

    def source(self) -> str | None:
        return None  # its catalogue ships in the code

    def refresh(self, timeout_s: float) -> None:
        pass

    def language_names(self) -> Mapping[str, tuple[str, str]]:
        return {}

    def offers(self) -> Sequence[Offer]:
        models = {model.id: model for model in installed_models()}
        stopped = set(self.unfinished())
        override = env_dir()
        offers = []
        for release in SUPERTONIC_RELEASES:
            model = models.get(release.id)
            note, usable = None, False
            if model is not None and model.active:
                note = "In use: Supertonic speaks with this release."
            elif model is not None and override is not None:  # the variable names one folder
                note = (
                    f"Installed, but AUDIOPUB_SUPERTONIC_DIR ({override}) is set: unset it to "
                    "choose this one."
                )
            elif model is not None:
                note, usable = "Installed; Supertonic speaks with another release.", True
            offers.append(
                Offer(
                    release.id,
                    ENGINE,
                    release.id,
                    release.languages,
                    release.description,
                    installed=model.origin if model is not None else None,
                    unfinished=release.id in stopped,
                    licence_path=release.repo,
                    voice="" if model is not None and model.active else None,
                    note=note,
                    usable=usable,
                )
            )
        return offers

    def sizes(self, timeout_s: float) -> Mapping[str, int]:
        from audiopub.tts import hub  # the Hub client: see the top

        sizes = {}
        for release in SUPERTONIC_RELEASES:
            try:
                _, files = hub.repo_files(release.repo, release.revision, timeout_s)
            except AudiopubError as exc:  # a size is a nicety: the list shows without it
                log.info("no size for %s: %s", release.id, exc)
                continue
            sizes[release.id] = sum(file.size for file in files if release.wants(file.path))
        return sizes

    def listing(
        self, language: str | None, ask_hub: bool, sizes: Mapping[str, int]
    ) -> Listing | None:
        installed = {model.id for model in installed_models()}
        releases = [
            release
            for release in SUPERTONIC_RELEASES
            if language is None or matches_language(language, release.languages)
        ]
        if not releases:
            return None
        lines = []
        for release in releases:
            mark = "installed" if release.id in installed else ""
            size = sizes.get(release.id)
            lines.append(
                f"{release.id:40} {release.description:37} "
                f"{figures.size(size) if size else '':>8}  {mark}".rstrip()
            )
        return Listing("Supertonic models:", tuple(lines), releases[0].id)

    def notes(self) -> list[str]:
        return [
            f"also installed: {model.id} in {model.path} ({how_to_use(model.id)})"
            for model in installed_models()
            if not model.active
        ]

    def suggest(self, tag: str) -> Suggested | None:
        return None  # a release reads many languages, but its voices' accent is the model's

    def owns(self, download_id: str) -> bool:
        return release_named(download_id) is not None

    def install(
        self,
        download_id: str,
        revision: str | None,
        variant: str | None,
        on_progress: Callable[[Progress], None] | None,
        cancel: threading.Event | None,
    ) -> Installed:
        release = release_named(download_id)
        if release is None:
            raise VoiceNotFound(f"No Supertonic release {download_id!r}.")
        return install_release(release, revision, on_progress, cancel)

    def how_to_speak(self, installed: Installed) -> str:
        if active_model_dir().resolve() != installed.path.resolve():
            return f"Supertonic speaks with {active_model_dir()}: {how_to_use(installed.id)}."
        return "Speak with it: audiopub convert BOOK.epub --engine supertonic"

    def remove(self, download_id: str) -> list[Path]:
        release = release_named(download_id)
        if release is None:
            raise VoiceNotFound(f"No Supertonic release {download_id!r}.")
        removed = discard_staging(settings.models_dir(), release.id)
        target = release_dir(release)
        return remove_downloaded_folder(
            target,
            RECORD,
            removed,
            VoiceNotFound(f"{release.id} is not installed in {target}."),
        )

    def unfinished(self) -> list[str]:
        staging = settings.models_dir() / STAGING
        return [release.id for release in SUPERTONIC_RELEASES if (staging / release.id).is_dir()]
