"""The Supertonic releases (Hub repositories, pinned), which one speaks, and which languages a
Supertonic model folder reads. Here, beside the engine, because the engine asks which folder to
read; the voice library (`voices`) lists, downloads and removes these releases.

The engine reads one folder, decided on every lookup so a download, a removal or a choice made
in another process (the CLI while the web app runs) counts at once:

    1. AUDIOPUB_SUPERTONIC_DIR, if set: a folder of the person's own
    2. the release chosen with `audiopub voices use` (or the Voices page), if it is installed
    3. the newest installed release: supertonic-3, then supertonic-2, then supertonic-1
    4. none installed: models/supertonic-3, so the engine's message says where files go

The choice is one line in the data directory, read by the CLI and the web app alike. No network,
and nothing heavier than the engine's file names is imported: the engine's lookup comes through
here.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from audiopub import settings
from audiopub.atomic import atomic_write
from audiopub.errors import ModelMissing, VoiceNotFound
from audiopub.tts.supertonic.environment import DIR
from audiopub.tts.supertonic.files import CONFIG_FILE, GRAPHS, INDEXER_FILE, ModelFiles
from audiopub.tts.supertonic.text import SUPPORTED_LANGUAGES

log = logging.getLogger(__name__)

CHOICE_FILE: Final = "supertonic-release"  # under <data dir>/voices/: a release id, one line

# What Audiopub needs of a Supertonic release, plus its licence and model card.
SUPERTONIC_FILES: Final = (
    *(f"onnx/{name}.onnx" for name in GRAPHS),
    f"onnx/{CONFIG_FILE}",
    f"onnx/{INDEXER_FILE}",
)
_SUPERTONIC_EXTRAS: Final = ("LICENSE", "LICENSE.md", "LICENSE.txt", "README.md")


@dataclass(frozen=True)
class SupertonicRelease:
    """A Supertonic model repository on the Hub."""

    id: str  # also the folder it is installed into, under the models directory
    repo: str
    revision: str  # the commit downloaded unless another is asked for
    languages: tuple[str, ...]
    description: str

    @property
    def language(self) -> str:
        return "multi" if len(self.languages) > 1 else self.languages[0]

    @staticmethod
    def wants(path: str) -> bool:
        """Whether a file of the repository is downloaded: the graphs, config, indexer, voice
        styles and licence; not samples or other formats."""
        if path in SUPERTONIC_FILES or path in _SUPERTONIC_EXTRAS:
            return True
        folder, _, name = path.partition("/")
        return folder == "voice_styles" and "/" not in name and name.endswith(".json")


# Revisions: the commits `supertonic` 1.3.1 (PyPI) pins in its config.MODEL_CONFIGS, which is
# what Audiopub's Supertonic engine and tests are checked against.
SUPERTONIC_RELEASES: Final = (
    SupertonicRelease(
        "supertonic-3",
        "Supertone/supertonic-3",
        "724fb5abbf5502583fb520898d45929e62f02c0b",
        SUPPORTED_LANGUAGES,
        f"multilingual, {len(SUPPORTED_LANGUAGES)} languages",
    ),
    SupertonicRelease(
        "supertonic-2",
        "Supertone/supertonic-2",
        "75e6727618a02f323c720cba9478152d4bc16ca4",
        ("en", "ko", "es", "pt", "fr"),
        "5 languages (older release)",
    ),
    SupertonicRelease(
        "supertonic-1",
        "Supertone/supertonic",
        "b6856d033f622c63ea29441795be266a1133e227",
        ("en",),
        "English only (first release)",
    ),
)
SUPERTONIC_DEFAULT: Final = SUPERTONIC_RELEASES[0]


def release_dir(release: SupertonicRelease) -> Path:
    """Where a release is installed: models/<release id>/ of the models directory, or of the
    old ./models while it is read and holds the release (and the models directory doesn't)."""
    folders = settings.model_folders(release.id)
    return next((folder for folder in folders if _complete(folder)), folders[0])


def is_installed(release: SupertonicRelease) -> bool:
    """Its folder holds a complete model (the engine's own check, a few stats)."""
    return _complete(release_dir(release))


def _complete(folder: Path) -> bool:
    try:
        ModelFiles.locate(folder)
    except ModelMissing:
        return False
    return True


def installed_releases() -> list[SupertonicRelease]:
    """The installed releases, newest first."""
    return [release for release in SUPERTONIC_RELEASES if is_installed(release)]


def env_dir() -> Path | None:
    """AUDIOPUB_SUPERTONIC_DIR, which wins over any choice."""
    # Asked without arguments by the registry (`EngineInfo.default_model_dir`) and the voice
    # listings for every caller: read from the settings in force, as the models folder is.
    return DIR.read()


def choice_path() -> Path:
    return settings.data_dir() / "voices" / CHOICE_FILE


def chosen_release() -> SupertonicRelease | None:
    """The release last chosen, installed or not; None if none was (or the file is damaged)."""
    try:
        wanted = choice_path().read_text("utf-8").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:  # the newest installed release still speaks
        log.warning("ignoring %s: %s", choice_path(), exc)
        return None
    return next((release for release in SUPERTONIC_RELEASES if release.id == wanted), None)


def choose_release(name: str) -> SupertonicRelease:
    """Make an installed release the one Supertonic speaks with (kept in the data directory).
    VoiceNotFound if there is no such release, or it is not installed (saying how to)."""
    wanted = name.strip().split(":", 1)[-1]
    release = next((r for r in SUPERTONIC_RELEASES if r.id == wanted), None)
    if release is None:
        known = ", ".join(r.id for r in SUPERTONIC_RELEASES)
        raise VoiceNotFound(f"No Supertonic release {name!r}; the releases are {known}.")
    if not is_installed(release):
        raise VoiceNotFound(
            f"{release.id} is not installed in {release_dir(release)}: "
            f"`audiopub voices download {release.id}` (or Download on the "
            "Voices page) installs it, then choose it."
        )
    with atomic_write(choice_path()) as temp:
        temp.write_text(release.id + "\n", "utf-8")
    return release


def active_release() -> SupertonicRelease | None:
    """The release the engine speaks with; None when AUDIOPUB_SUPERTONIC_DIR names a folder
    of the person's own, or nothing is installed."""
    override = env_dir()
    if override is not None:
        return release_of(override)
    chosen = chosen_release()
    if chosen is not None and is_installed(chosen):
        return chosen
    return next(iter(installed_releases()), None)


def active_model_dir() -> Path:
    """The folder the Supertonic engine reads (see the module's docstring for the order)."""
    override = env_dir()
    if override is not None:
        return override
    release = active_release()
    return release_dir(release if release is not None else SUPERTONIC_DEFAULT)


def release_of(model_dir: Path) -> SupertonicRelease | None:
    """The catalogue's release installed in `model_dir`, if it is one of their folders."""
    try:
        resolved = model_dir.resolve()
    except OSError:
        return None
    return next((r for r in SUPERTONIC_RELEASES if release_dir(r).resolve() == resolved), None)


def languages_of(model_dir: Path) -> tuple[str, ...] | None:
    """The languages the release in `model_dir` reads, as its catalogue entry lists them; None
    for a folder not from the catalogue (the engine then judges by the model's own files)."""
    release = release_of(model_dir)
    return release.languages if release is not None else None
