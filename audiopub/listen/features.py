"""Whisper's input, from the published definition: 16 kHz audio as a log-mel spectrogram.

Whisper hears 30-second windows: 480,000 samples at 16 kHz, a short-time Fourier transform with
a 400-sample periodic Hann window every 160 samples (centred, reflect-padded; the last frame
dropped), its power through a Slaney-style mel filterbank (80 bins; large-v3 reads 128 from its
preprocessor_config.json), then log10 (floor 1e-10), clipped to 8 below the window's maximum and
scaled as (x + 4) / 4. A shorter clip is padded with silence to 30 s: 3,000 frames each.

Engines speak at 22.05, 24 or 44.1 kHz; `to_16k` brings their audio down with an FFT
resampler (band-limited, exact for a chunk held in memory), so no resampling package is needed.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike

SAMPLE_RATE = 16_000
N_FFT = 400
HOP = 160
WINDOW_SECONDS = 30
WINDOW_SAMPLES = SAMPLE_RATE * WINDOW_SECONDS  # 480,000
WINDOW_FRAMES = WINDOW_SAMPLES // HOP  # 3,000


def to_16k(audio: np.ndarray, sample_rate: int) -> np.ndarray:
    """Mono float32 audio at 16 kHz: its spectrum cut (or padded) at the new Nyquist."""
    audio = np.asarray(audio, dtype=np.float32).reshape(-1)
    if sample_rate == SAMPLE_RATE or audio.size == 0:
        return audio
    length = max(1, round(audio.size * SAMPLE_RATE / sample_rate))
    spectrum = np.fft.rfft(audio.astype(np.float64))
    bins = length // 2 + 1
    if bins <= spectrum.size:
        spectrum = spectrum[:bins]
    else:
        spectrum = np.pad(spectrum, (0, bins - spectrum.size))
    resampled = np.fft.irfft(spectrum, n=length) * (length / audio.size)
    return resampled.astype(np.float32)


def _hz_to_mel(hz: ArrayLike) -> np.ndarray:
    """Slaney's mel scale: linear (3 mels per 200 Hz) below 1 kHz, logarithmic above."""
    hz = np.asarray(hz, dtype=np.float64)
    linear = hz * 3.0 / 200.0
    log_step = np.log(6.4) / 27.0
    above = 15.0 + np.log(np.maximum(hz, 1e-10) / 1000.0) / log_step
    return np.where(hz >= 1000.0, above, linear)


def _mel_to_hz(mel: np.ndarray) -> np.ndarray:
    mel = np.asarray(mel, dtype=np.float64)
    linear = mel * 200.0 / 3.0
    log_step = np.log(6.4) / 27.0
    above = 1000.0 * np.exp(log_step * (mel - 15.0))
    return np.where(mel >= 15.0, above, linear)


@lru_cache(maxsize=4)
def mel_filters(n_mels: int) -> np.ndarray:
    """[n_mels, 201] triangular filters from 0 Hz to 8 kHz, each of unit area (Slaney norm)."""
    fft_hz = np.linspace(0.0, SAMPLE_RATE / 2, N_FFT // 2 + 1)
    edges = _mel_to_hz(np.linspace(_hz_to_mel(0.0), _hz_to_mel(SAMPLE_RATE / 2), n_mels + 2))
    widths = np.diff(edges)
    ramps = edges[:, None] - fft_hz[None, :]
    rising = -ramps[:-2] / widths[:-1, None]
    falling = ramps[2:] / widths[1:, None]
    weights = np.maximum(0.0, np.minimum(rising, falling))
    weights *= (2.0 / (edges[2:] - edges[:-2]))[:, None]
    return weights.astype(np.float32)


@lru_cache(maxsize=1)
def _hann() -> np.ndarray:
    """The periodic Hann window (as torch.hann_window): the DFT-even one."""
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)).astype(np.float64)


def log_mel(audio_16k: np.ndarray, n_mels: int = 80) -> np.ndarray:
    """[n_mels, 3000] float32: one 30-second window (a shorter clip padded with silence)."""
    audio = np.asarray(audio_16k, dtype=np.float64).reshape(-1)[:WINDOW_SAMPLES]
    audio = np.pad(audio, (0, WINDOW_SAMPLES - audio.size))
    padded = np.pad(audio, N_FFT // 2, mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP][:WINDOW_FRAMES]
    power = np.abs(np.fft.rfft(frames * _hann(), axis=1)) ** 2
    mel = mel_filters(n_mels).astype(np.float64) @ power.T
    log_spec = np.log10(np.maximum(mel, 1e-10))
    log_spec = np.maximum(log_spec, log_spec.max() - 8.0)
    return ((log_spec + 4.0) / 4.0).astype(np.float32)
