"""The ears: Whisper (CTranslate2) transcribes chunks of a book's audio, in batches.

CTranslate2 runs the converted Whisper models that `Systran/faster-whisper-*` publish; it is
what faster-whisper wraps, used here directly because faster-whisper requires the CPU
`onnxruntime`, which must not sit beside `onnxruntime-gpu`. Audiopub does the rest itself: the
log-mel input (features.py), the prompt (start of transcript, the book's language, transcribe,
no timestamps) and turning token ids into text with the model's tokenizer.json.

int8 on the CPU, float16 on CUDA. A clip longer than Whisper's 30-second window is heard in
windows cut at the quietest moment of each window's last seconds, so a word is not cut in two
and nothing past 30 s goes unheard. Decoding is a beam search of 5, as faster-whisper's default:
greedy decoding cost hardly less on the CPU (the encoder's fixed 30-second window dominates) and
misheard "In 1886" in a test sentence that the beam heard right.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from audiopub.book.scripts import primary_subtag
from audiopub.errors import AudiopubError, ListeningUnavailable
from audiopub.listen.features import (
    SAMPLE_RATE,
    WINDOW_SAMPLES,
    log_mel,
    to_16k,
)
from audiopub.listen.whisper_files import SIZES, is_complete, model_folder

log = logging.getLogger(__name__)

INSTALL_EXTRA: Final = "pip install 'audiopub[listen]'"
SEARCH_SECONDS: Final = 5.0  # where a long clip is cut: the quietest moment of a window's last 5 s
QUIET_FRAME: Final = 320  # 20 ms at 16 kHz: the unit the quietest moment is chosen in
MAX_TOKENS: Final = 448  # Whisper's decoder context


@dataclass(frozen=True)
class Clip:
    """One chunk's audio and the language it is spoken in."""

    audio: np.ndarray  # float32 mono, any sample rate
    sample_rate: int
    language: str  # the book's language code: "en", "en-US", "fr"


def _import_runtime() -> tuple[Any, Any]:
    """ctranslate2 and tokenizers, or ListeningUnavailable naming the extra."""
    try:  # the `listen` extra: optional, so imported only when a listener loads
        import ctranslate2
        import tokenizers
    except ImportError as exc:
        raise ListeningUnavailable(
            f"Proof-listening needs the `listen` extra ({exc.name} is not installed): "
            f"{INSTALL_EXTRA}"
        ) from exc
    return ctranslate2, tokenizers


def _cuda_devices(ctranslate2: Any) -> int:
    try:
        return int(ctranslate2.get_cuda_device_count())
    except RuntimeError:  # a CUDA-less build, or no driver
        return 0


def _mel_bins(folder: Path, model: Any) -> int:
    """The model's mel bins: preprocessor_config.json's feature_size where the repository has
    one (large-v3: 128), else what the model says (80 for the older sizes)."""
    config = folder / "preprocessor_config.json"
    if config.is_file():
        try:
            return int(json.loads(config.read_text("utf-8"))["feature_size"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ListeningUnavailable(
                f"{config} is not a Whisper preprocessor config ({exc}); download the model again."
            ) from exc
    return int(model.n_mels)


def split_windows(audio_16k: np.ndarray) -> list[np.ndarray]:
    """The clip in windows of at most 30 s, each cut at the quietest 20 ms of its last 5 s."""
    windows, start, total = [], 0, audio_16k.size
    search = int(SEARCH_SECONDS * SAMPLE_RATE)
    while total - start > WINDOW_SAMPLES:
        end = start + WINDOW_SAMPLES
        tail = audio_16k[end - search : end]
        frames = tail[: tail.size // QUIET_FRAME * QUIET_FRAME].reshape(-1, QUIET_FRAME)
        quietest = int(np.argmin(np.square(frames, dtype=np.float64).sum(axis=1)))
        cut = end - search + quietest * QUIET_FRAME + QUIET_FRAME // 2
        windows.append(audio_16k[start:cut])
        start = cut
    windows.append(audio_16k[start:])
    return windows


class Listener:
    """A loaded listening model: `hear` turns clips of speech into text."""

    def __init__(
        self,
        model: Any,
        tokenizer: Any,
        size: str,
        device: str,
        n_mels: int,
        batch_size: int = 8,
        beam_size: int = 5,
    ) -> None:
        self._model = model
        self._tokenizer = tokenizer
        self.size = size
        self.device = device
        self.n_mels = n_mels
        self.batch_size = batch_size
        self.beam_size = beam_size
        self._end_of_text = self._token("<|endoftext|>")
        self._prefix = [self._token("<|startoftranscript|>")]
        self._suffix = [self._token("<|transcribe|>"), self._token("<|notimestamps|>")]

    @classmethod
    def load(
        cls,
        size: str = "base",
        *,
        use_gpu: bool = False,
        models_dir: Path | None = None,
        threads: int = 1,
        batch_size: int = 8,
        beam_size: int = 5,
    ) -> Listener:
        """The installed `whisper:<size>`: int8 on the CPU, float16 on CUDA (use_gpu, where
        CTranslate2 sees a CUDA device; the CPU otherwise)."""
        ctranslate2, tokenizers = _import_runtime()
        if size not in SIZES:
            raise AudiopubError(
                f"There is no listening model {size!r}; choose one of {', '.join(SIZES)}."
            )
        folder = model_folder(size, models_dir)
        if not is_complete(folder):
            raise ListeningUnavailable(
                f"The listening model whisper:{size} is not installed in {folder}: "
                f"`audiopub voices download whisper:{size}`."
            )
        on_cuda = use_gpu and _cuda_devices(ctranslate2) > 0
        if use_gpu and not on_cuda:
            log.info("No CUDA device for CTranslate2: listening on the CPU.")
        device = "cuda" if on_cuda else "cpu"
        try:
            model = ctranslate2.models.Whisper(
                str(folder),
                device=device,
                compute_type="float16" if on_cuda else "int8",
                intra_threads=max(1, threads),
            )
            tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
        except (RuntimeError, ValueError, OSError) as exc:
            raise ListeningUnavailable(
                f"whisper:{size} in {folder} could not be loaded ({exc}); download it again."
            ) from exc
        return cls(model, tokenizer, size, device, _mel_bins(folder, model), batch_size, beam_size)

    def _token(self, text: str) -> int:
        token = self._tokenizer.token_to_id(text)
        if token is None:
            raise ListeningUnavailable(
                f"whisper:{self.size}'s tokenizer has no {text}; download the model again."
            )
        return int(token)

    def hear(self, clips: Sequence[Clip]) -> list[str]:
        """What Whisper hears in each clip, in order; batched across clips and windows."""
        windows: list[tuple[int, np.ndarray, str]] = []  # (clip index, 16 kHz audio, language)
        for index, clip in enumerate(clips):
            audio = to_16k(clip.audio, clip.sample_rate)
            if audio.size:
                windows.extend((index, part, clip.language) for part in split_windows(audio))
        heard: list[list[str]] = [[] for _ in clips]
        for start in range(0, len(windows), self.batch_size):
            batch = windows[start : start + self.batch_size]
            mels = np.stack([log_mel(audio, self.n_mels) for _, audio, _ in batch])
            texts = self._transcribe(mels, [language for _, _, language in batch])
            for (index, _, _), text in zip(batch, texts):
                heard[index].append(text)
        return [" ".join(part for part in parts if part) for parts in heard]

    def _transcribe(self, mels: np.ndarray, languages: list[str]) -> list[str]:
        import ctranslate2  # the `listen` extra, present: `_import_runtime` loaded this listener

        batch = ctranslate2.StorageView.from_array(np.ascontiguousarray(mels))
        language_tokens = [self._language_token(language) for language in languages]
        if any(token is None for token in language_tokens):
            detected = self._model.detect_language(batch)
            language_tokens = [
                token if token is not None else self._token(found[0][0])
                for token, found in zip(language_tokens, detected)
            ]
        prompts = [
            [*self._prefix, int(token), *self._suffix]  # type: ignore[arg-type]
            for token in language_tokens
        ]
        results = self._model.generate(
            batch, prompts, beam_size=self.beam_size, max_length=MAX_TOKENS
        )
        return [self._text(result.sequences_ids[0]) for result in results]

    def _language_token(self, language: str) -> int | None:
        """<|en|> for "en-US"; None where Whisper has no such language (it is detected)."""
        token = self._tokenizer.token_to_id(f"<|{primary_subtag(language or '')}|>")
        return None if token is None else int(token)

    def _text(self, ids: Sequence[int]) -> str:
        return str(self._tokenizer.decode([i for i in ids if i < self._end_of_text])).strip()
