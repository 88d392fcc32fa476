"""An engine that exists only in the tests, to show what adding one takes: this package and one
call of `registry.register`. Nothing else of Audiopub names it.

Its model is Piper's, the voice embedded in Audiopub's dependencies (a real model, no network):
its catalogue offers two voices, each a copy of that voice under its own name and gender (Bert
as if made from a reference recording, his gender a setting of its own: AUDIOPUB_TINY_BERT),
which `voices download` copies into <models>/tiny/ and `voices remove` removes again.
"""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Final

from audiopub import settings
from audiopub.errors import VoiceNotFound
from audiopub.settings import EngineSetting
from audiopub.tts.downloads import DOWNLOADED, Installed
from audiopub.tts.engine import Engine, Voice, VoiceGender
from audiopub.tts.engine_info import (
    EngineInfo,
    Listing,
    LoadRequest,
    Offer,
    Suggested,
    matches_language,
)
from audiopub.tts.piper.engine import PiperEngine
from audiopub.tts.piper.files import embedded_voice

if TYPE_CHECKING:
    from audiopub.tts.hub import Progress

NAME: Final = "tiny"
RECORD: Final = ".tiny-download.json"
# Its catalogue: what `voices download` takes → (voice id once installed, gender).
CATALOGUE: Final[dict[str, tuple[str, VoiceGender]]] = {
    f"{NAME}:anna": ("en_US-anna-medium", "female"),
    f"{NAME}:bert": ("en_US-bert-medium", "male"),
}


GENDERS: Final[tuple[VoiceGender, ...]] = ("female", "male")


def _gender(text: str) -> VoiceGender:
    for gender in GENDERS:
        if text.strip().lower() == gender:
            return gender
    raise ValueError(f"expected female or male, not {text!r}")


BERT: Final[EngineSetting[VoiceGender]] = EngineSetting(
    "AUDIOPUB_TINY_BERT", _gender, "male", "the gender Bert's voice is cast as"
)


def model_dir() -> Path:
    return settings.models_dir() / NAME


class TinyEngine(PiperEngine):
    """Piper speaking the voices downloaded into its own folder, each with its gender."""

    name = NAME

    def voices(self) -> list[Voice]:
        genders = dict(CATALOGUE.values())
        genders[CATALOGUE[f"{NAME}:bert"][0]] = BERT.read()
        return [
            replace(
                voice,
                gender=genders[voice.model],
                from_recording=voice.model == CATALOGUE[f"{NAME}:bert"][0],
            )
            for voice in super().voices()
            if voice.model in genders
            and (self._voices_dir or model_dir()).joinpath(f"{voice.model}.onnx").is_file()
        ]


def _load(request: LoadRequest) -> Engine:
    return TinyEngine(
        use_gpu=request.use_gpu,
        threads=request.threads,
        voices_dir=request.model_dir,
        device_id=request.device_id,
    )


class TinyDownloads:
    variants: tuple[str, ...] = ()
    qualities: tuple[str, ...] = ("low", "medium")  # its voices are all medium

    def source(self) -> str | None:
        return None  # its catalogue ships in the code

    def refresh(self, timeout_s: float) -> None:
        pass

    def language_names(self) -> Mapping[str, tuple[str, str]]:
        return {}

    def _installed(self, download_id: str) -> bool:
        return (model_dir() / f"{CATALOGUE[download_id][0]}.onnx").is_file()

    def offers(self) -> Sequence[Offer]:
        size = embedded_voice().model.stat().st_size
        return [
            Offer(
                download_id,
                NAME,
                voice,
                ("en",),
                "English (United States)",
                installed=DOWNLOADED if self._installed(download_id) else None,
                size=size,
                voice=voice if self._installed(download_id) else None,
                quality="medium",
            )
            for download_id, (voice, _) in CATALOGUE.items()
        ]

    def sizes(self, timeout_s: float) -> Mapping[str, int]:
        return {}  # its offers know theirs

    def notes(self) -> list[str]:
        return []

    def listing(
        self, language: str | None, ask_hub: bool, sizes: Mapping[str, int]
    ) -> Listing | None:
        if language is not None and not matches_language(language, ["en-US"], ["English"]):
            return None
        lines = tuple(
            f"{download_id:40} en-US    {gender:7} "
            f"{'installed' if self._installed(download_id) else ''}".rstrip()
            for download_id, (_, gender) in CATALOGUE.items()
        )
        return Listing(f"Tiny voices ({len(lines)}, shipped with the tests):", lines, "tiny:anna")

    def suggest(self, tag: str) -> Suggested | None:
        if not matches_language(tag, ["en-US"]):
            return None
        installed = [key for key in CATALOGUE if self._installed(key)]
        download_id = (installed or list(CATALOGUE))[0]
        return Suggested(CATALOGUE[download_id][0], download_id, bool(installed))

    def owns(self, download_id: str) -> bool:
        return download_id.strip().startswith(f"{NAME}:")

    def install(
        self,
        download_id: str,
        revision: str | None,
        variant: str | None,
        on_progress: Callable[[Progress], None] | None,
        cancel: threading.Event | None,
    ) -> Installed:
        if download_id not in CATALOGUE:
            raise VoiceNotFound(f"No voice {download_id!r} in the tiny catalogue.")
        voice = CATALOGUE[download_id][0]
        folder = model_dir()
        model = folder / f"{voice}.onnx"
        if model.is_file():
            return Installed(download_id, model, model.stat().st_size, already=True)
        folder.mkdir(parents=True, exist_ok=True)
        source = embedded_voice()
        shutil.copyfile(source.config, folder / f"{voice}.onnx.json")
        (folder / f"{voice}{RECORD}").write_text(json.dumps({"id": download_id}), "utf-8")
        shutil.copyfile(source.model, model)  # last: the voice exists once its model does
        return Installed(download_id, model, model.stat().st_size)

    def how_to_speak(self, installed: Installed) -> str:
        return f"Speak with it: audiopub convert BOOK.epub --engine {NAME} --voice " + (
            installed.path.stem
        )

    def remove(self, download_id: str) -> list[Path]:
        if download_id not in CATALOGUE or not self._installed(download_id):
            raise VoiceNotFound(f"{download_id} is not installed.")
        voice = CATALOGUE[download_id][0]
        removed = []
        for suffix in (".onnx", ".onnx.json", RECORD):
            path = model_dir() / f"{voice}{suffix}"
            path.unlink()
            removed.append(path)
        return removed

    def unfinished(self) -> list[str]:
        return []  # a copy is never left half-made: the model is copied last


TINY = EngineInfo(
    name=NAME,
    label="Tiny",
    languages=(),
    sample_rate=None,
    default_model_dir=model_dir,
    load=_load,
    voices_from_recordings=True,
    downloads=TinyDownloads(),
    settings=(BERT,),
)
