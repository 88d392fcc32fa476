"""Supertonic: a flow-matching TTS in four ONNX graphs, run with batching and masks.

    text ─▶ duration_predictor ─▶ seconds per item (÷ speed)
    text ─▶ text_encoder ─▶ text_emb
    noise [B,144,frames] ─▶ vector_estimator, `steps` times ─▶ vocoder ─▶ waveform, trimmed

The model directory and its files are files.py's business, the text front end
text.py's; this module runs the graphs.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final

import numpy as np
import onnxruntime as ort
from onnxruntime.capi import onnxruntime_pybind11_state as ort_errors

from audiopub.errors import EngineUnavailable, ModelMissing, SynthesisFailed
from audiopub.tts.batching import BatchLimits, is_out_of_memory
from audiopub.tts.engine import (
    DeviceReport,
    PreparedText,
    StageClock,
    SynthesisOptions,
    SynthesisResult,
    Voice,
    VoiceGender,
    noise_seeds,
    synthesize_in_batches,
)
from audiopub.tts.onnx_runtime import CPU, Session, create_session
from audiopub.tts.supertonic.files import (
    CONFIG_FILE,
    GRAPHS,
    INDEXER_FILE,
    ModelFiles,
    Style,
    SupertonicConfig,
    fits,
    read_style,
)
from audiopub.tts.supertonic.releases import active_model_dir
from audiopub.tts.supertonic.text import (
    DEFAULT_LANGUAGE,
    SUPPORTED_LANGUAGES,
    TextFrontEnd,
    language_code,
)

log = logging.getLogger(__name__)

_SILENCE: Final = np.zeros(0, dtype=np.float32)

# Supertonic drops and slurs words as a chunk grows: FluidAudio measured Supertonic-3 at 0.0%
# word error rate for a 71-character chunk and 17.6% at 105, and lowered its cap from 110 to
# 70 (https://github.com/FluidInference/FluidAudio/issues/669). Short chunks cost some speed,
# not quality; the stitcher's pauses hide the seams.
MAX_CHUNK_CHARS: Final = 70
# Chunks run together, padded to the longest (see `batching` for how they are grouped).
MAX_BATCH_SIZE: Final = 16

# What ONNX Runtime raises when a run fails (bad shapes, out of memory, a provider error).
_RUN_ERRORS = (
    ort_errors.Fail,
    ort_errors.InvalidArgument,
    ort_errors.RuntimeException,
    ort_errors.EPFail,
    ort_errors.NotImplemented,
    ort_errors.EngineError,
)


def default_model_dir() -> Path:
    """AUDIOPUB_SUPERTONIC_DIR, else the chosen release if installed, else the newest installed
    (models/supertonic-3 when none is): `releases` decides."""
    return active_model_dir()


def combine_reports(reports: Mapping[str, DeviceReport]) -> DeviceReport:
    """One honest report for several sessions: the CPU if any graph ended up there."""
    first = next(iter(reports.values()))
    on_cpu = [name for name, report in reports.items() if not report.on_gpu]
    if not on_cpu or len(on_cpu) == len(reports):
        return first
    fallback = reports[on_cpu[0]]
    reason = f"{', '.join(on_cpu)} fell back to the CPU: {fallback.fallback_reason or 'unknown'}"
    return DeviceReport(requested_gpu=fallback.requested_gpu, provider=CPU, fallback_reason=reason)


def denoise(
    session: Session,
    latent: np.ndarray,
    conditions: Mapping[str, np.ndarray],
    steps: int,
    io_binding_device: str | None = None,
) -> np.ndarray:
    """Run the vector estimator `steps` times, as the official loop does.

    With `io_binding_device` ("cuda" or "cpu"; CUDA: the session's device) the latent stays in
    that device's memory for the whole loop and only the result is copied back; without it each
    step goes through `session.run`, which on CUDA copies the latent to the GPU and back on
    every step. Either way each step runs through `session`, which frees the arena's unused
    memory after a step that ran out of it.
    """
    batch = latent.shape[0]
    feeds = dict(conditions, total_step=np.full(batch, steps, dtype=np.float32))
    step_inputs = [np.full(batch, step, dtype=np.float32) for step in range(steps)]
    if io_binding_device is None:
        for current in step_inputs:
            feeds["noisy_latent"], feeds["current_step"] = latent, current
            latent = session.run(["denoised_latent"], feeds)[0]
        return latent
    return _denoise_on_device(session, latent, feeds, step_inputs, io_binding_device)


def _denoise_on_device(
    session: Session,
    latent: np.ndarray,
    feeds: Mapping[str, np.ndarray],
    step_inputs: list[np.ndarray],
    device: str,
) -> np.ndarray:
    device_id = session.device.device_id or 0

    def on_device(array: np.ndarray) -> ort.OrtValue:
        return ort.OrtValue.ortvalue_from_numpy(array, device, device_id)

    # Kept in variables: on the CPU these values borrow the arrays' memory.
    fixed = {name: on_device(value) for name, value in feeds.items()}
    steps = [on_device(current) for current in step_inputs]
    # The two latent buffers belong to ORT and swap roles each step. (A value made from a
    # NumPy array would be written into that array, and its .numpy() view outlive it.)
    source, target = (
        ort.OrtValue.ortvalue_from_shape_and_type(list(latent.shape), np.float32, device, device_id)
        for _ in range(2)
    )
    source.update_inplace(np.ascontiguousarray(latent))
    binding = session.inference.io_binding()
    for name, value in fixed.items():
        binding.bind_ortvalue_input(name, value)
    for current in steps:
        binding.bind_ortvalue_input("noisy_latent", source)
        binding.bind_ortvalue_input("current_step", current)
        binding.bind_ortvalue_output("denoised_latent", target)
        session.run_with_iobinding(binding)
        source, target = target, source
    return np.array(source.numpy())  # a copy the caller owns, on the host


def _languages(listed: Sequence[str] | None, multilingual: bool) -> tuple[str, ...]:
    """What the model reads. A release says (its catalogue entry); a folder of the person's own
    can only be judged by its text front end: a multilingual one is taken to read what the
    newest release, Supertonic-3, reads (the front end has no list of its own), an
    English-only one English."""
    if listed:
        return tuple(listed)
    return SUPPORTED_LANGUAGES if multilingual else (DEFAULT_LANGUAGE,)


def _voice_name(voice_id: str) -> str:
    match = re.fullmatch(r"([FM])(\d+)", voice_id)
    if not match:
        return voice_id
    return f"{'Female' if match[1] == 'F' else 'Male'} {match[2]}"


def voice_gender(voice_id: str) -> VoiceGender | None:
    """The official styles' names say it: F1 … F5 female, M1 … M5 male."""
    match = re.fullmatch(r"([FM])\d+", voice_id)
    return None if not match else "female" if match[1] == "F" else "male"


class SupertonicEngine:
    """The Engine contract for a Supertonic model directory."""

    name = "supertonic"
    uses_steps = True
    max_chunk_chars = MAX_CHUNK_CHARS
    batch_size = MAX_BATCH_SIZE

    def __init__(
        self,
        model_dir: Path,
        use_gpu: bool,
        threads: int | None = None,
        language: str | None = None,
        device_id: int = 0,
        languages: Sequence[str] | None = None,
        fallback_language: str | None = None,
        multilingual: bool | None = None,
    ) -> None:
        """`languages`: what the model reads, as its release lists them; None for a folder
        not from the catalogue, judged by its own files (see `_languages`).
        `fallback_language`: what it reads when `language` (the book's) is None, else English
        (its `LANGUAGE` setting); `multilingual`: whether the text front end is, where
        detection guesses wrong (its `MULTILINGUAL` setting; None:
        detected)."""
        self.files = ModelFiles.locate(model_dir)
        try:
            self.config = SupertonicConfig.from_dict(self.files.read_json(CONFIG_FILE))
            self.text = TextFrontEnd.from_indexer(self.files.read_json(INDEXER_FILE), multilingual)
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelMissing(
                f"{self.files.onnx_dir} holds a {CONFIG_FILE} or {INDEXER_FILE} "
                f"this engine cannot use ({exc!r}); "
                "see models/README.md for the official files"
            ) from exc
        self.sample_rate = self.config.sample_rate
        self.languages = _languages(languages, self.text.multilingual)
        # The book's language wins over the setting; single-language models take no tag.
        wanted = language or fallback_language or DEFAULT_LANGUAGE
        self.language = self._tag(wanted) if self.text.multilingual else None
        if not self.text.multilingual and language_code(wanted) != DEFAULT_LANGUAGE:
            log.info("This Supertonic model reads English only; language %r is ignored", wanted)
        self.sessions: dict[str, Session] = {
            name: create_session(self.files.graph(name), use_gpu, threads, device_id=device_id)
            for name in GRAPHS
        }
        self.batching = BatchLimits(MAX_BATCH_SIZE)  # what `synthesize` groups by
        # Keep the latent on the device across steps when the loop runs on a GPU.
        self.io_binding = self.sessions["vector_estimator"].device.on_gpu
        self._styles: dict[Path, tuple[tuple[int, int], Style]] = {}

    @property
    def device(self) -> DeviceReport:
        return combine_reports({name: session.device for name, session in self.sessions.items()})

    def voices(self) -> list[Voice]:
        language = "multi" if self.text.multilingual else DEFAULT_LANGUAGE
        languages = self.languages if self.text.multilingual else ()
        return [
            Voice(
                path.stem,
                _voice_name(path.stem),
                language,
                self.sample_rate,
                languages,
                gender=voice_gender(path.stem),
            )
            for path in self.files.voice_paths()
        ]

    def phoneme_symbols(self, voice: str) -> frozenset[str] | None:
        return None  # it reads characters: lexicon entries reach it as respellings

    def model_id(self, voice: str) -> str:
        """Changes when any graph, the config, the indexer or the voice's style file changes
        (size or modification time), or the language tag, which changes the audio too."""
        files = [*self.files.required(), self.files.voice_path(voice)]
        stamps = [f"{path.name}:{path.stat().st_size}:{path.stat().st_mtime_ns}" for path in files]
        digest = hashlib.sha256("|".join([*stamps, str(self.language)]).encode()).hexdigest()
        return f"supertonic:{digest[:16]}"

    def prepare(
        self, texts: Sequence[str], voice: str, options: SynthesisOptions
    ) -> list[PreparedText]:
        self._style(voice)  # a bad voice fails here, before any batch runs
        prepared = []
        # Each text's noise comes from its own seed, so it sounds the same in any batch.
        for text, seed in zip(texts, noise_seeds(options.seed, len(texts)), strict=True):
            began = time.perf_counter()
            cleaned = self.text.normalise(text)
            prepared.append(
                PreparedText(text, len(cleaned), (cleaned, seed), time.perf_counter() - began)
            )
        return prepared

    def speak(
        self, prepared: Sequence[PreparedText], voice: str, options: SynthesisOptions
    ) -> list[SynthesisResult]:
        style = self._style(voice)
        # Text that normalises to nothing is silence: the graphs fail on empty input.
        speakable = [item for item in prepared if item.length]
        clock = StageClock()
        spoken = iter(
            self._synthesize_batch(
                [item.data[0] for item in speakable],
                style,
                self._language(options),
                options,
                [item.data[1] for item in speakable],
                clock,
            )
            if speakable
            else []
        )
        shares = iter(clock.shared([item.length for item in speakable]))
        results = []
        for item in prepared:
            wave, share = (next(spoken), next(shares)) if item.length else (_SILENCE, {})
            stages = {"text": item.seconds + share.pop("text", 0.0), **share}
            results.append(SynthesisResult(wave, self.sample_rate, stages))
        return results

    def synthesize(
        self, texts: Sequence[str], voice: str, options: SynthesisOptions
    ) -> list[SynthesisResult]:
        return synthesize_in_batches(self, texts, voice, options, self.batching)

    def _language(self, options: SynthesisOptions) -> str | None:
        # A per-call language (the book's) wins over the engine's own (constructor or setting).
        requested = options.language
        if requested and self.text.multilingual:
            return self._tag(requested)
        return self.language

    def _tag(self, language: str) -> str:
        """The tag the model reads `language` with. Only Supertonic-3 has a tag for a language
        it does not know ("na"); an older release reads such a text as its first language."""
        code = language_code(language)
        if code in self.languages or set(self.languages) >= set(SUPPORTED_LANGUAGES):
            return code
        log.info(
            "This Supertonic model does not read %r; it reads it as %r", language, self.languages[0]
        )
        return self.languages[0]

    def _synthesize_batch(
        self,
        texts: list[str],
        style: Style,
        language: str | None,
        options: SynthesisOptions,
        seeds: list[int],
        clock: StageClock,
    ) -> list[np.ndarray]:
        began = time.perf_counter()
        text_ids, text_mask = self.text.encode(texts, language)
        styles = style.repeated(len(texts))
        text_inputs = {"text_ids": text_ids, "text_mask": text_mask}
        began = clock.lap("text", began)
        try:
            duration = self._run("duration_predictor", dict(text_inputs, style_dp=styles.dp))
            began = clock.lap("duration", began)
            text_emb = self._run("text_encoder", dict(text_inputs, style_ttl=styles.ttl))
            began = clock.lap("encoder", began)
            wav_lengths = (duration / options.speed * self.sample_rate).astype(np.int64)
            # The starting noise is counted in the step loop: it exists only to be denoised.
            latent, latent_mask = self._noise(wav_lengths, seeds)
            conditions = {
                "text_emb": text_emb,
                "style_ttl": styles.ttl,
                "latent_mask": latent_mask,
                "text_mask": text_mask,
            }
            latent = denoise(
                self.sessions["vector_estimator"],
                latent,
                conditions,
                options.steps,
                self._binding_device(),
            )
            began = clock.lap("step_loop", began)
            wav = self._run("vocoder", {"latent": latent})
            clock.lap("vocoder", began)
        except _RUN_ERRORS as exc:
            if is_out_of_memory(exc):
                # Each graph has an arena of its own, and the failed batch's peak also sits in
                # those of the graphs that ran before: every graph's next run frees its own.
                for session in self.sessions.values():
                    session.shrink_next_run.set()
            raise SynthesisFailed(f"Supertonic failed on {len(texts)} chunk(s): {exc}") from exc
        # Views into the vocoder's output: copying every waveform cost more than a graph.
        return [wav[row, :length] for row, length in enumerate(wav_lengths)]

    def _binding_device(self) -> str | None:
        if not self.io_binding:
            return None
        return "cuda" if self.sessions["vector_estimator"].device.on_gpu else "cpu"

    def _run(self, graph: str, feeds: dict[str, np.ndarray]) -> np.ndarray:
        output: np.ndarray = self.sessions[graph].run(None, feeds)[0]
        return output

    def _noise(self, wav_lengths: np.ndarray, seeds: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """Starting latent and its mask: each item's noise comes from its own seed, so a chunk
        sounds the same alone or in any batch."""
        frame = self.config.samples_per_frame
        # At least one frame: a zero-length latent would make the graphs fail.
        frames = np.maximum(1, (wav_lengths + frame - 1) // frame)
        channels = self.config.latent_channels
        latent = np.zeros((len(seeds), channels, int(frames.max())), dtype=np.float32)
        # RandomState, not default_rng: it draws the same numbers as the official package's
        # np.random.randn after np.random.seed(seed), so results can be compared.
        generator = np.random.RandomState()
        for row, (seed, count) in enumerate(zip(seeds, frames, strict=True)):
            generator.seed(seed)  # reseeding is ~40x cheaper than a new RandomState
            latent[row, :, :count] = generator.standard_normal((channels, count))
        mask = (np.arange(latent.shape[2]) < frames[:, None]).astype(np.float32)[:, None, :]
        return latent, mask

    def _style(self, voice: str) -> Style:
        path = self.files.voice_path(voice)
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = self._styles.get(path)
        if cached is None or cached[0] != stamp:
            cached = (stamp, self._load_style(path))
            self._styles[path] = cached
        return cached[1]

    def _load_style(self, path: Path) -> Style:
        style = read_style(path)
        for graph, name, tensor in (
            ("text_encoder", "style_ttl", style.ttl),
            ("duration_predictor", "style_dp", style.dp),
        ):
            expected = self._input_shape(graph, name)
            if not fits(tensor.shape, expected):
                raise EngineUnavailable(
                    f"{path}: {name} has shape {list(tensor.shape)}, "
                    f"this model expects {expected} with a batch of 1"
                )
        return style

    def _input_shape(self, graph: str, name: str) -> list[int | str]:
        inputs = self.sessions[graph].inference.get_inputs()
        return next(list(item.shape) for item in inputs if item.name == name)
