"""Kokoro-82M on ONNX Runtime: espeak-ng phonemes, a style vector per voice (or a mix of them),
exact lengths and word starts from the model's own durations.

The text is phonemised by espeak-ng (as for Piper) in the book's language when Kokoro speaks
it, else in the voice's, and mapped to tokens through the vocabulary of the repository's
tokenizer. Kokoro reads at most 510 tokens at once: a longer text is split at clause
boundaries (at word boundaries only for a clause longer than that), each piece spoken with
the style row of its own length, and the pieces joined, so nothing is cut off. The exports fix
the batch size at 1 (the int8 export declares it in its inputs), so on ONNX Runtime every piece
is one run; on the torch runtime the pieces of the texts a `speak` is given run together,
grouped by length (`plan_batches`), padded and masked (`TorchKokoro.run_batch`), so the
executor's batch limits, VRAM budget and halving on running out of memory apply as for the
engines whose graphs take batches.
The graph is loaded through `graph`'s rewrite: each token's frames make the audio's
length (600 samples a frame) and where each word starts.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import numpy as np

from audiopub.errors import ModelMissing
from audiopub.tts import onnx_runtime
from audiopub.tts.batching import BatchLimits, plan_batches
from audiopub.tts.engine import (
    DeviceReport,
    PreparedText,
    SynthesisOptions,
    SynthesisResult,
    Voice,
    synthesize_in_batches,
)
from audiopub.tts.kokoro.files import (
    LANGUAGES,
    SAMPLE_RATE,
    STYLE_ROWS,
    KokoroFiles,
    VoiceMix,
    describe,
    gender_of,
    language_of,
    parse_mix,
    vocabulary_symbols,
)
from audiopub.tts.kokoro.graph import TOKEN_FRAMES, TOKEN_FRAMES_STEP, audio_length, frame_starts
from audiopub.tts.kokoro.torch_runtime import (
    ONNX,
    TORCH,
    TorchKokoro,
    choose_runtime,
    require_torch,
)
from audiopub.tts.piper.engine import _phonemes

log = logging.getLogger(__name__)

MAX_CHUNK_CHARS: Final = 300  # about 300 phonemes: well inside the 510-token window
PAD: Final = 0  # the token before and after every text ("$")
WORD_BOUNDARY: Final = " "
CLAUSE_ENDS: Final = frozenset(",;:.!?—…")
# Chunks per padded batch on the torch runtime's CPU (a GPU's batches are the executor's).
# Only the encoders run batched; the decoder, most of the time, runs chunk by chunk: four
# short sentences gave 0.88 chars/s batched against 0.81 one by one (three interleaved rounds
# on a shared two-core CPU, round to round from -13 % to +70 %).
TORCH_CPU_BATCH: Final = 4
_ID_INPUTS: Final = ("input_ids", "tokens")  # onnx-community's export, kokoro-onnx's


# A piece's audio and its words' start samples (None: the graph gives no durations).
_Spoken = tuple[np.ndarray, tuple[int, ...] | None]
_SILENT: Final[_Spoken] = (np.zeros(0, dtype=np.float32), ())


@dataclass(frozen=True)
class Piece:
    """Tokens the model reads in one run (pads not included), and where its words start."""

    tokens: tuple[int, ...]
    word_positions: tuple[int, ...]  # indexes into `tokens`


def tokenize(
    phonemes: Sequence[str], vocab: dict[str, int]
) -> tuple[list[int], list[int], list[bool]]:
    """Token ids of espeak's phonemes (composed where the vocabulary has the composed symbol,
    "ç", else decomposed, "ɑ̃" as ɑ + ◌̃; symbols it lacks are skipped), the positions where
    words start, and which tokens end a clause."""
    tokens: list[int] = []
    starts: list[int] = []
    clause_end: list[bool] = []
    in_word = False
    for symbol in unicodedata.normalize("NFC", "".join(phonemes)):
        if symbol == WORD_BOUNDARY:
            in_word = False
        for part in (symbol,) if symbol in vocab else unicodedata.normalize("NFD", symbol):
            if part not in vocab or vocab[part] == PAD:
                continue
            sounding = part != WORD_BOUNDARY and part not in CLAUSE_ENDS
            if sounding and not in_word:
                starts.append(len(tokens))
                in_word = True
            tokens.append(vocab[part])
            clause_end.append(part in CLAUSE_ENDS)
    return tokens, starts, clause_end


def split_window(
    tokens: Sequence[int],
    starts: Sequence[int],
    clause_end: Sequence[bool],
    boundary: int,
    window: int = STYLE_ROWS,
) -> list[Piece]:
    """Tokens in pieces of at most `window`, cut after a clause's end where one lies in the
    window, else before a word (token `boundary` is the space), else at the window."""
    pieces = []
    begin = 0
    while begin < len(tokens):
        end = min(begin + window, len(tokens))
        if end < len(tokens):
            clause = [i + 1 for i in range(begin, end) if clause_end[i]]
            words = [i for i in range(begin + 1, end + 1) if tokens[i] == boundary]
            end = (clause or words or [end])[-1]
        pieces.append(
            Piece(tuple(tokens[begin:end]), tuple(s - begin for s in starts if begin <= s < end))
        )
        begin = end
    return pieces


class KokoroEngine:
    """Kokoro-82M voices and voice mixes: one text piece per run on ONNX Runtime, padded
    batches of them on PyTorch."""

    name = "kokoro"
    uses_steps = False
    batch_size = 1  # the exports fix the batch at 1 (the torch runtime's engines take more)
    max_chunk_chars = MAX_CHUNK_CHARS

    def __init__(
        self,
        model_dir: Path,
        use_gpu: bool = False,
        threads: int | None = None,
        device_id: int = 0,
        variant: str | None = None,
        runtime: str = ONNX,
    ) -> None:
        self.files = KokoroFiles(model_dir)
        ort_cuda = use_gpu and runtime != TORCH and onnx_runtime.cuda_can_run()
        self.runtime = choose_runtime(runtime, use_gpu, ort_cuda)
        if self.runtime == TORCH:
            require_torch()
            self.batch_size = TORCH_CPU_BATCH
        # The variant for where it will run: asked for the GPU on a machine without CUDA, the
        # session falls back to the CPU, where int8 is the fast one. PyTorch takes its weights
        # from the fp32 export where there is one (exact), else dequantizes the int8 one.
        on_gpu = self.runtime == TORCH or ort_cuda
        self.variant, self.model_path = self.files.model(on_gpu, variant)
        self.vocab = self.files.vocabulary()
        self._boundary = self.vocab.get(WORD_BOUNDARY, -1)
        self._use_gpu, self._threads, self._device_id = use_gpu, threads, device_id
        self._session: onnx_runtime.Session | None = None
        self._torch: TorchKokoro | None = None
        self._lock = threading.Lock()
        self._inputs: dict[str, str] = {}

    # --- what it offers -------------------------------------------------------------------

    def voices(self) -> list[Voice]:
        return [
            Voice(
                name,
                describe(name),
                language_of(name)[0],
                SAMPLE_RATE,
                _reads(name),
                gender=gender_of(name),
            )
            for name in self.files.voice_names()
        ]

    def voice(self, voice_id: str) -> Voice:
        """A voice or a mix of voices (whose own language is its heaviest voice's)."""
        mix = self._mix(voice_id)
        name = describe(voice_id) if len(mix.parts) == 1 else f"mix of {voice_id}"
        # A mix has no one gender: the cast treats it as unknown.
        gender = gender_of(voice_id) if len(mix.parts) == 1 else None
        return Voice(
            voice_id, name, language_of(mix.first)[0], SAMPLE_RATE, _reads(mix.first), gender=gender
        )

    @property
    def device(self) -> DeviceReport:
        if self.runtime == TORCH:
            network = self._load_torch()
            on_gpu = network.device.type == "cuda"
            return DeviceReport(
                requested_gpu=self._use_gpu,
                provider=network.provider if on_gpu else onnx_runtime.CPU,
                fallback_reason="CUDA does not work through PyTorch here"
                if self._use_gpu and not on_gpu
                else None,
                device_id=network.device.index if on_gpu else None,
            )
        if self._session is None and not self._use_gpu:
            return DeviceReport(requested_gpu=False, provider=onnx_runtime.CPU)
        return self._load().device

    def model_id(self, voice: str) -> str:
        """Changes with the model file, the vocabulary, the voices' files and their mix."""
        mix = self._mix(voice)
        paths = [
            self.model_path,
            *(self.files.folder / name for name in ("tokenizer.json", "config.json")),
            *(self.files.voice_path(name) for name, _ in mix.parts),
        ]
        stamps = [
            f"{path.name}:{path.stat().st_size}:{path.stat().st_mtime_ns}"
            for path in paths
            if path.is_file()
        ]
        parts = [f"{name}:{weight:g}" for name, weight in mix.parts]
        digest = hashlib.sha256("|".join([*stamps, *parts]).encode()).hexdigest()
        runtime = "" if self.runtime == ONNX else f"{self.runtime}:"
        return f"kokoro:{runtime}{self.variant}:{digest[:16]}"

    def phoneme_symbols(self, voice: str) -> frozenset[str]:
        return vocabulary_symbols(self.vocab)

    def load_voice(self, voice: str) -> None:
        """Make the model's session now, instead of in the first chunk (one for every voice)."""
        self._mix(voice)  # an unknown voice is an error here, before any chunk
        self._load_model()

    # --- speaking -------------------------------------------------------------------------

    def prepare(
        self, texts: Sequence[str], voice: str, options: SynthesisOptions
    ) -> list[PreparedText]:
        mix = self._mix(voice)
        espeak = espeak_language(options.language, mix.first)
        prepared = []
        for text in texts:
            began = time.perf_counter()
            tokens, starts, clause_end = tokenize(_phonemes(text, espeak), self.vocab)
            pieces = split_window(tokens, starts, clause_end, self._boundary)
            prepared.append(PreparedText(text, len(tokens), pieces, time.perf_counter() - began))
        return prepared

    def speak(
        self, prepared: Sequence[PreparedText], voice: str, options: SynthesisOptions
    ) -> list[SynthesisResult]:
        """Each text's pieces spoken (one run each, or padded batches on the torch runtime)
        and joined: its audio and word starts."""
        style = self._mix(voice).style(self.files)
        load_s = 0.0
        if self._session is None and self._torch is None:  # made on first use, once
            began = time.perf_counter()
            self._load_model()
            load_s = time.perf_counter() - began
        if self.runtime == TORCH:
            spoken, seconds = self._speak_batched(prepared, style, options.speed)
        else:
            spoken, seconds = self._speak_one_by_one(prepared, style, options.speed)
        results = []
        for number, (item, pieces, model_s) in enumerate(zip(prepared, spoken, seconds)):
            waves: list[np.ndarray] = []
            words: list[int] | None = []
            offset = 0
            for wave, starts in pieces:
                if words is not None and starts is not None:
                    words.extend(offset + start for start in starts)
                else:
                    words = None
                waves.append(wave)
                offset += len(wave)
            audio = np.concatenate(waves) if waves else np.zeros(0, dtype=np.float32)
            stages = {"load": load_s} if number == 0 and load_s else {}
            stages.update(phonemes=item.seconds, model=model_s)
            results.append(
                SynthesisResult(
                    audio, SAMPLE_RATE, stages, tuple(words) if words is not None else None
                )
            )
        return results

    def _speak_one_by_one(
        self, prepared: Sequence[PreparedText], style: np.ndarray, speed: float
    ) -> tuple[list[list[_Spoken]], list[float]]:
        """Each text's pieces, one run each, and each text's seconds."""
        spoken, seconds = [], []
        for item in prepared:
            began = time.perf_counter()
            spoken.append([self._run(piece, style, speed) for piece in item.data])
            seconds.append(time.perf_counter() - began)
        return spoken, seconds

    def _speak_batched(
        self, prepared: Sequence[PreparedText], style: np.ndarray, speed: float
    ) -> tuple[list[list[_Spoken]], list[float]]:
        """Every text's pieces in padded runs of similar length, at most as many pieces a run
        as there are texts (the batch the caller sized); each text's share of the seconds."""
        began = time.perf_counter()
        pieces = [(text, piece) for text, item in enumerate(prepared) for piece in item.data]
        done: dict[int, _Spoken] = {}
        lengths = [len(piece.tokens) for _, piece in pieces]
        for batch in plan_batches(lengths, BatchLimits(max(1, len(prepared)))):
            sounding = [index for index in batch if lengths[index]]
            done.update({index: _SILENT for index in batch if not lengths[index]})
            if not sounding:
                continue
            ids = [np.array([PAD, *pieces[i][1].tokens, PAD], dtype=np.int64) for i in sounding]
            rows = np.stack([style[lengths[i] - 1] for i in sounding])
            outputs = self._load_torch().run_batch(ids, rows, speed)
            for index, (audio, frames) in zip(sounding, outputs, strict=True):
                done[index] = self._finish(pieces[index][1], audio, frames)
        spoken: list[list[_Spoken]] = [[] for _ in prepared]
        for index, (text, _) in enumerate(pieces):
            spoken[text].append(done[index])
        total = time.perf_counter() - began
        weights = [item.length for item in prepared]
        return spoken, [total * weight / (sum(weights) or 1) for weight in weights]

    def synthesize(
        self, texts: Sequence[str], voice: str, options: SynthesisOptions
    ) -> list[SynthesisResult]:
        return synthesize_in_batches(self, texts, voice, options, BatchLimits(self.batch_size))

    def _run(self, piece: Piece, style: np.ndarray, speed: float) -> _Spoken:
        """One piece: its audio, cut at its exact length, and its words' start samples."""
        if not piece.tokens:
            return _SILENT
        ids = np.array([[PAD, *piece.tokens, PAD]], dtype=np.int64)
        row = style[len(piece.tokens) - 1].reshape(1, -1)
        audio, frames = self._infer(ids, row, speed)
        return self._finish(piece, audio, frames)

    def _finish(self, piece: Piece, audio: np.ndarray, frames: np.ndarray | None) -> _Spoken:
        """A piece's audio cut at the length its frames make, and its words' start samples."""
        if frames is None:  # a graph the rewrite did not recognise: no word times
            return np.clip(audio, -1.0, 1.0).astype(np.float32), None
        length = audio_length(frames)
        if length > len(audio):
            raise ValueError(f"Kokoro's durations make {length} samples but it spoke {len(audio)}")
        # +1: the leading pad's frames come before the first token.
        starts = frame_starts(frames, [position + 1 for position in piece.word_positions])
        return np.clip(audio[:length], -1.0, 1.0).astype(np.float32), starts

    def _infer(
        self, ids: np.ndarray, style: np.ndarray, speed: float
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The model's one run, on either runtime: the audio and each token's frames."""
        if self.runtime == TORCH:
            return self._load_torch().run(ids, style, speed)
        session = self._load().inference
        feeds = {
            self._inputs["ids"]: ids,
            self._inputs["style"]: style,
            self._inputs["speed"]: np.array([speed], dtype=np.float32),
        }
        wanted = [self._inputs["audio"], *([TOKEN_FRAMES] if "frames" in self._inputs else [])]
        outputs = session.run(wanted, feeds)
        frames = outputs[1].reshape(-1) if len(outputs) > 1 else None
        return outputs[0].reshape(-1), frames

    def _load_model(self) -> None:
        if self.runtime == TORCH:
            self._load_torch()
        else:
            self._load()

    def _load_torch(self) -> TorchKokoro:
        with self._lock:
            if self._torch is None:
                self._torch = TorchKokoro(
                    self.model_path, self._use_gpu, self._device_id, self._threads
                )
            return self._torch

    def _load(self) -> onnx_runtime.Session:
        with self._lock:
            if self._session is None:
                session = onnx_runtime.create_session(
                    self.model_path,
                    self._use_gpu,
                    self._threads,
                    rewrite=(TOKEN_FRAMES_STEP,),
                    device_id=self._device_id,
                )
                self._inputs = _input_names(session)
                self._session = session
            return self._session

    def _mix(self, voice: str) -> VoiceMix:
        """The voice or mix, each of its voices checked to exist."""
        mix = parse_mix(voice)
        for name, _ in mix.parts:
            self.files.style(name)  # EngineUnavailable names the voices there are
        return mix


def _reads(name: str) -> tuple[str, ...]:
    """What a voice reads: every language Kokoro phonemises, its own first (a text is
    phonemised in the book's language, and the voice lends it its sound)."""
    own = language_of(name)[0].split("-", 1)[0].lower()
    others = [tag.split("-", 1)[0].lower() for tag, _ in LANGUAGES.values()]
    return tuple(dict.fromkeys([own, *others]))


def _input_names(session: onnx_runtime.Session) -> dict[str, str]:
    """The graph's inputs and outputs by role, read by name (the exports name the ids
    differently)."""
    inputs = [i.name for i in session.inference.get_inputs()]
    outputs = [o.name for o in session.inference.get_outputs()]
    ids = next((name for name in _ID_INPUTS if name in inputs), None)
    if ids is None or "style" not in inputs or "speed" not in inputs:
        raise ModelMissing(
            f"This is not a Kokoro graph: its inputs are {', '.join(inputs)} "
            f"(expected {' or '.join(_ID_INPUTS)}, style and speed)"
        )
    names = {
        "ids": ids,
        "style": "style",
        "speed": "speed",
        "audio": next(name for name in outputs if name != TOKEN_FRAMES),
    }
    if TOKEN_FRAMES in outputs:
        names["frames"] = TOKEN_FRAMES
    return names


def espeak_language(book_language: str | None, voice: str) -> str:
    """espeak-ng's language for a text: the book's where Kokoro speaks it (in the voice's
    variety when they share a language: en with bf_emma is en-gb), else the voice's."""
    voice_tag, voice_espeak = language_of(voice)
    if not book_language:
        return voice_espeak
    tag = book_language.replace("_", "-").lower()
    primary = tag.split("-", 1)[0]
    if primary == voice_tag.split("-", 1)[0].lower():
        return voice_espeak
    varieties = {code.lower(): espeak for code, espeak in LANGUAGES.values()}
    if tag in varieties:
        return varieties[tag]
    same = [
        espeak for code, espeak in LANGUAGES.values() if code.split("-", 1)[0].lower() == primary
    ]
    if same:
        return same[0]
    log.info("Kokoro does not speak %r; phonemising as the voice's language", book_language)
    return voice_espeak
