"""`audiopub voices`: list installed and downloadable voices, download and remove them, and
choose the Supertonic release to speak with.

What brings huggingface_hub (the downloaders) is imported by each command when it runs, so the
other commands start without it.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any, Protocol

from tqdm import tqdm

from audiopub import figures
from audiopub.errors import AudiopubError
from audiopub.tts.engine import Voice, speaker_voice_id
from audiopub.tts.engine_info import EngineInfo
from audiopub.tts.registry import downloads, engines, get_engine
from audiopub.tts.supertonic.releases import (
    choose_release,
    env_dir,
)
from audiopub.voices.catalogue import matches_language, refresh_catalogue


def add_arguments(voices: argparse.ArgumentParser) -> None:
    """`voices [list] [--all] [--language X]`, `voices download ID`, `voices remove ID`,
    `voices use RELEASE`.

    No defaults on the parsers (SUPPRESS): `voices --all list` must keep its --all, and a
    subcommand's defaults would overwrite it; `main` reads them with getattr."""

    def listing(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--all",
            action="store_true",
            help="also voices and models to download (asks the Hub for its "
            "current list; the shipped one if it can't be reached)",
        )
        parser.add_argument("--language", help="only this language: de, de_DE, German…")

    listing(voices)
    actions = voices.add_subparsers(dest="voices_command", metavar="{list,download,remove,use}")
    listing(
        actions.add_parser(
            "list", help="the default: list voices", argument_default=argparse.SUPPRESS
        )
    )
    download = actions.add_parser(
        "download",
        help="download and install a voice or model, "
        "e.g. piper:de_DE-thorsten-medium, supertonic, kokoro or "
        "whisper:base",
    )
    download.add_argument(
        "voice_id",
        help="piper:VOICE (see `voices --all`), supertonic "
        "(the newest release), supertonic-2, supertonic-1, kokoro, or a "
        "listening model: whisper:tiny|base|small|medium|large-v3",
    )
    download.add_argument(
        "--revision",
        help="a branch, tag or commit of its Hub repository "
        "(default: Supertonic's tested commit, Piper's and Kokoro's main)",
    )
    download.add_argument(
        "--variant",
        choices=("int8", "fp16", "fp32"),
        help="Kokoro's model: int8 (the CPU's default), fp32 (CUDA's default) or fp16",
    )
    remove = actions.add_parser("remove", help="remove a downloaded voice or model")
    remove.add_argument("voice_id", help="as given to `voices download`")
    use = actions.add_parser(
        "use", help="speak with this installed Supertonic release (default: the newest installed)"
    )
    use.add_argument("release", help="supertonic-3, supertonic-2 or supertonic-1")


class ListeningModels(Protocol):
    """The listening models (`whisper:<size>`, `audiopub.listen.command`), which the voice
    library lists, downloads and removes beside the voices; handed in by the command line,
    since listening is a layer above the voice library."""

    def print_models(self, installed_only: bool) -> None: ...

    def download(self, model_id: str, revision: str | None, variant: str | None) -> int: ...

    def remove(self, model_id: str) -> int: ...


def main(args: argparse.Namespace, listening: ListeningModels) -> int:
    command = getattr(args, "voices_command", None) or "list"
    if command == "download":
        if args.voice_id.strip().startswith("whisper:"):
            return listening.download(
                args.voice_id.strip(),
                getattr(args, "revision", None),
                getattr(args, "variant", None),
            )
        return _voices_download(
            args.voice_id, getattr(args, "revision", None), getattr(args, "variant", None)
        )
    if command == "remove":
        if args.voice_id.strip().startswith("whisper:"):
            return listening.remove(args.voice_id.strip())
        return _voices_remove(args.voice_id)
    if command == "use":
        return _voices_use(args.release)
    if getattr(args, "all", False):
        return _voices_available(getattr(args, "language", None), listening)
    return _voices_installed(getattr(args, "language", None), listening)


def _voices_installed(language: str | None, listening: ListeningModels) -> int:
    from audiopub.voices.install import unfinished_downloads  # huggingface_hub: see the top

    for info in engines():
        try:
            voices = get_engine(info.name).voices()
        except AudiopubError as exc:
            print(f"{info.name}: unavailable — {exc}")
            continue
        print(info.heading(voices) if info.heading is not None else f"{info.name}:")
        origins = _origins(info)
        wanted = [
            voice
            for voice in voices
            if language is None or matches_language(language, voice.languages or [voice.language])
        ]
        for model, speakers in _by_model(wanted):
            first = speakers[0]
            origin = origins.get(model, "")
            if first.from_recording:  # a person's voice, cloned: say so beside it
                origin = ", ".join(filter(None, [origin, "from a recording"]))
            if first.speaker is None:
                print(f"  {first.id:28} {first.language:8} {origin}".rstrip())
                continue
            # Hundreds of speakers (LibriTTS has 904): their names, not a line each.
            label = speaker_voice_id(model, "SPEAKER")
            print(
                f"  {label:28} {first.language:8} "
                f"{', '.join(filter(None, [origin, f'{len(speakers)} speakers:']))}"
            )
            print(
                textwrap.fill(
                    " ".join(str(v.speaker) for v in speakers),
                    width=88,
                    initial_indent=" " * 6,
                    subsequent_indent=" " * 6,
                )
            )
    for found in downloads():
        for note in found.notes():
            print(note)
    listening.print_models(installed_only=True)
    for name in unfinished_downloads():
        print(
            f"unfinished download: {name} (`audiopub voices download` continues it, "
            "`audiopub voices remove` discards it)"
        )
    print("More voices: `audiopub voices --all` lists those you can download.")
    return 0


def _origins(info: EngineInfo) -> dict[str, str]:
    """Where each of the engine's installed voices came from (built in, downloaded, added by
    you), by model: an installed download that is one voice names it (`Offer.voice`)."""
    if info.downloads is None:
        return {}
    return {
        offer.voice: offer.installed
        for offer in info.downloads.offers()
        if offer.installed and offer.voice
    }


def _by_model(voices: list[Voice]) -> list[tuple[str, list[Voice]]]:
    """Voices grouped by their model, in the engine's order: a multi-speaker model's speakers
    together."""
    groups: dict[str, list[Voice]] = {}
    for voice in voices:
        groups.setdefault(voice.model, []).append(voice)
    return list(groups.items())


def _voices_available(language: str | None, listening: ListeningModels) -> int:
    catalogue = refresh_catalogue()
    if catalogue.note:
        print(catalogue.note, file=sys.stderr)
    # Each engine's own catalogue: the Hub's list, or the copy on this computer (its heading
    # says which); a Hub that did not answer is not waited for a second time.
    listings = [
        listing
        for found in downloads()
        if (listing := found.listing(language, not catalogue.offline, catalogue.sizes)) is not None
    ]
    if not listings:
        raise AudiopubError(f"No voice for language {language!r} in {catalogue.source}.")
    for listing in listings:
        print(listing.heading)
        for line in listing.lines:
            print(f"  {line}")
    listening.print_models(installed_only=False)
    print(f"Download one with `audiopub voices download ID`, e.g. {listings[0].example}.")
    return 0


def _voices_download(voice_id: str, revision: str | None, variant: str | None = None) -> int:
    from audiopub.voices.install import how_to_speak, install  # huggingface_hub: see the top

    try:
        with DownloadBar() as bar:
            result = install(voice_id, revision, on_progress=bar.show, variant=variant)
    except KeyboardInterrupt:
        print(
            "\nInterrupted: nothing was installed. The files already complete are kept; "
            "run the same command to continue.",
            file=sys.stderr,
        )
        return 130
    if result.already:
        print(f"{result.id} is already installed ({result.path}).")
        return 0
    print(f"Installed {result.id} ({figures.size(result.size)}) in {result.path}.")
    print(how_to_speak(voice_id, result))
    return 0


def _voices_remove(voice_id: str) -> int:
    from audiopub.voices.install import remove  # huggingface_hub: see the top

    for path in remove(voice_id):
        print(f"removed {path}")
    return 0


def _voices_use(name: str) -> int:
    release = choose_release(name)
    override = env_dir()
    if override is not None:
        print(
            f"{release.id} is chosen, but AUDIOPUB_SUPERTONIC_DIR={override} wins while it "
            "is set: unset it to speak with the chosen release."
        )
        return 0
    print(
        f"Supertonic speaks with {release.id} from now on "
        "(audiopub convert BOOK.epub --engine supertonic)."
    )
    return 0


class DownloadBar:
    """Bytes, rate and ETA of a download on stderr (tqdm's own rate and ETA)."""

    def __enter__(self) -> DownloadBar:
        self._bar: tqdm | None = None
        return self

    def show(self, progress: Any) -> None:  # a tts.hub.Progress
        if self._bar is None:
            self._bar = tqdm(
                total=progress.total_bytes,
                initial=progress.done_bytes,
                unit="B",
                unit_scale=True,
                dynamic_ncols=True,
                file=sys.stderr,
            )
        self._bar.total = progress.total_bytes
        self._bar.update(progress.done_bytes - self._bar.n)
        self._bar.set_postfix_str(progress.file.rsplit("/", 1)[-1][:40], refresh=False)

    def __exit__(self, *exc_info: object) -> None:
        if self._bar is not None:
            self._bar.close()
