"""The listening models' part of `audiopub voices`: `whisper:<size>` listed, downloaded and
removed beside the voices. The voice library is a layer below listening, so `audiopub voices`
is handed this module by the command line rather than importing it."""

from __future__ import annotations

import sys

from audiopub import figures
from audiopub.errors import AudiopubError
from audiopub.listen.whisper_files import PREFIX, SIZES, installed_sizes, model_folder, repo_of
from audiopub.voices.command import DownloadBar


def print_models(installed_only: bool) -> None:
    """The listening models for proof-listening: those installed, or every size."""
    have = installed_sizes()
    if installed_only:
        for size in have:
            print(f"listening model: {PREFIX}{size} in {model_folder(size)}")
        return
    print("Listening models (proof-listening; `audiopub voices download whisper:base`):")
    for size in SIZES:
        mark = "installed" if size in have else ""
        print(f"  {PREFIX + size:40} {repo_of(size):37} {mark}".rstrip())


def download(model_id: str, revision: str | None, variant: str | None) -> int:
    # The installer brings huggingface_hub: only for this command.
    from audiopub.listen.whisper_install import install_whisper

    if variant is not None:
        raise AudiopubError(
            "--variant chooses Kokoro's model; a listening model has one "
            "file, run int8 on the CPU and float16 on CUDA."
        )
    try:
        with DownloadBar() as bar:
            result = install_whisper(model_id, revision, on_progress=bar.show)
    except KeyboardInterrupt:
        print(
            "\nInterrupted: nothing was installed. The files already complete are kept; "
            "run the same command to continue.",
            file=sys.stderr,
        )
        return 130
    if result.already:
        print(f"{result.id} is already installed ({result.path}).")
    else:
        print(f"Installed {result.id} ({figures.size(result.size)}) in {result.path}.")
    return 0


def remove(model_id: str) -> int:
    from audiopub.listen.whisper_install import remove_whisper  # huggingface_hub, as above

    for path in remove_whisper(model_id):
        print(f"removed {path}")
    return 0
