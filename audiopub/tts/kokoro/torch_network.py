"""Kokoro-82M's network in PyTorch: StyleTTS 2's text and prosody encoders with an iSTFTNet
decoder, in the shape of the published model so that its parameters load by name.

    token ids ─ ALBERT (PL-BERT) ─ bert_encoder ─ DurationEncoder ─ LSTM ─ durations
                                                        │ (each token's features × its frames)
                                                        ├─ shared LSTM ─ F0, N ─ pitch, energy
    token ids ─ TextEncoder (CNN + LSTM) ─ × frames ────┴─ Decoder ─ Generator ─ iSTFT ─ audio

The style vector (256 numbers) is two halves: the first drives the decoder's timbre, the second
the prosody.

Several texts run as one batch (`KokoroNetwork.speak_batch`), padded to the longest: the padded
tokens are masked out of ALBERT's attention, zeroed before every convolution of the text
encoder (where a text run alone sees the convolution's zero padding) and packed out of every
LSTM (so the backward direction starts at each text's own last token). From the durations on,
each text runs alone: the alignment is data-dependent, and the decoder's instance norms
average over time, so padding would change every frame. Each text's durations and audio are
its own, as when it runs alone, to float rounding.

Everything here is inference only (no dropout, no noise): the audio is a function of the
tokens, the style and the speed, as in the ONNX export Audiopub also runs.
Weight-normalised convolutions are plain convolutions whose weights were folded when loaded
(see torch_weights). Parameter names follow the published checkpoint.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

SAMPLE_RATE: Final = 24_000
STYLE_HALF: Final = 128  # decoder's half first, prosody's second


@dataclass(frozen=True)
class KokoroConfig:
    """The published Kokoro-82M v1.0 configuration."""

    vocab_size: int = 178
    hidden: int = 512
    style: int = STYLE_HALF
    layers: int = 3
    max_duration: int = 50
    text_kernel: int = 5
    # ALBERT (PL-BERT): one shared layer applied 12 times.
    albert_embedding: int = 128
    albert_hidden: int = 768
    albert_heads: int = 12
    albert_intermediate: int = 2048
    albert_repeats: int = 12
    albert_positions: int = 512
    # iSTFTNet
    upsample_rates: tuple[int, ...] = (10, 6)
    upsample_kernels: tuple[int, ...] = (20, 12)
    upsample_channels: int = 512
    resblock_kernels: tuple[int, ...] = (3, 7, 11)
    resblock_dilations: tuple[int, ...] = (1, 3, 5)
    n_fft: int = 20
    hop: int = 5
    harmonics: int = 8


# --- ALBERT ---------------------------------------------------------------------------------


class AlbertEmbeddings(nn.Module):
    def __init__(self, config: KokoroConfig) -> None:
        super().__init__()
        width = config.albert_embedding
        self.word_embeddings = nn.Embedding(config.vocab_size, width)
        self.position_embeddings = nn.Embedding(config.albert_positions, width)
        self.token_type_embeddings = nn.Embedding(2, width)
        self.LayerNorm = nn.LayerNorm(width, eps=1e-12)

    def forward(self, ids: Tensor) -> Tensor:
        positions = torch.arange(ids.shape[1], device=ids.device)
        summed = (
            self.word_embeddings(ids)
            + self.position_embeddings(positions)[None]
            + self.token_type_embeddings.weight[0]
        )
        return self.LayerNorm(summed)


class AlbertAttention(nn.Module):
    def __init__(self, config: KokoroConfig) -> None:
        super().__init__()
        width = config.albert_hidden
        self.heads = config.albert_heads
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)
        self.value = nn.Linear(width, width)
        self.dense = nn.Linear(width, width)
        self.LayerNorm = nn.LayerNorm(width, eps=1e-12)
        self.use_sdpa = True  # a switch: scaled_dot_product_attention or the explicit softmax

    def _split(self, x: Tensor) -> Tensor:
        batch, length, width = x.shape
        return x.view(batch, length, self.heads, width // self.heads).transpose(1, 2)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        """mask: [B, T], True at tokens (None: no padding); padded keys get no attention."""
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        keys = None if mask is None else mask[:, None, None, :]
        if self.use_sdpa:
            context = F.scaled_dot_product_attention(q, k, v, attn_mask=keys)
        else:
            scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
            if keys is not None:
                scores = scores.masked_fill(~keys, float("-inf"))
            context = scores.softmax(dim=-1) @ v
        context = context.transpose(1, 2).reshape(x.shape)
        return self.LayerNorm(x + self.dense(context))


class AlbertLayer(nn.Module):
    def __init__(self, config: KokoroConfig) -> None:
        super().__init__()
        self.attention = AlbertAttention(config)
        self.ffn = nn.Linear(config.albert_hidden, config.albert_intermediate)
        self.ffn_output = nn.Linear(config.albert_intermediate, config.albert_hidden)
        self.full_layer_layer_norm = nn.LayerNorm(config.albert_hidden, eps=1e-12)

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        attended = self.attention(x, mask)
        hidden = self.ffn_output(F.gelu(self.ffn(attended), approximate="tanh"))
        return self.full_layer_layer_norm(hidden + attended)


class AlbertGroup(nn.Module):
    def __init__(self, config: KokoroConfig) -> None:
        super().__init__()
        self.albert_layers = nn.ModuleList([AlbertLayer(config)])


class AlbertEncoder(nn.Module):
    def __init__(self, config: KokoroConfig) -> None:
        super().__init__()
        self.embedding_hidden_mapping_in = nn.Linear(config.albert_embedding, config.albert_hidden)
        self.albert_layer_groups = nn.ModuleList([AlbertGroup(config)])
        self.repeats = config.albert_repeats

    def forward(self, x: Tensor, mask: Tensor | None = None) -> Tensor:
        x = self.embedding_hidden_mapping_in(x)
        layer = cast(AlbertGroup, self.albert_layer_groups[0]).albert_layers[0]
        for _ in range(self.repeats):  # ALBERT shares one layer's weights across its depth
            x = layer(x, mask)
        return x


class Albert(nn.Module):
    """The PL-BERT phoneme encoder: ALBERT without its pooler."""

    def __init__(self, config: KokoroConfig) -> None:
        super().__init__()
        self.embeddings = AlbertEmbeddings(config)
        self.encoder = AlbertEncoder(config)

    def forward(self, ids: Tensor, mask: Tensor | None = None) -> Tensor:
        """mask: [B, T], True at tokens; None where no text is padded."""
        return self.encoder(self.embeddings(ids), mask)


# --- style-conditioned normalisation and residual blocks --------------------------------------


class AdaLayerNorm(nn.Module):
    """Layer norm over channels whose scale and shift come from the style. x: [B, T, C]."""

    def __init__(self, style: int, channels: int) -> None:
        super().__init__()
        self.fc = nn.Linear(style, channels * 2)

    def forward(self, x: Tensor, style: Tensor) -> Tensor:
        gamma, beta = self.fc(style).unsqueeze(1).chunk(2, dim=-1)
        return (1 + gamma) * F.layer_norm(x, x.shape[-1:], eps=1e-5) + beta


class AdaIN1d(nn.Module):
    """Instance norm whose scale and shift come from the style. x: [B, C, L]."""

    def __init__(self, style: int, channels: int) -> None:
        super().__init__()
        self.fc = nn.Linear(style, channels * 2)

    def forward(self, x: Tensor, style: Tensor) -> Tensor:
        gamma, beta = self.fc(style).unsqueeze(-1).chunk(2, dim=1)
        return (1 + gamma) * F.instance_norm(x, eps=1e-5) + beta


class AdainResBlk1d(nn.Module):
    """StyleTTS 2's residual block: two style-normalised convolutions, optionally doubling
    the length (a depthwise transposed convolution on the residual, nearest on the skip)."""

    def __init__(self, dim_in: int, dim_out: int, style: int, upsample: bool = False) -> None:
        super().__init__()
        self.upsample = upsample
        self.conv1 = nn.Conv1d(dim_in, dim_out, 3, padding=1)
        self.conv2 = nn.Conv1d(dim_out, dim_out, 3, padding=1)
        self.norm1 = AdaIN1d(style, dim_in)
        self.norm2 = AdaIN1d(style, dim_out)
        self.conv1x1 = nn.Conv1d(dim_in, dim_out, 1, bias=False) if dim_in != dim_out else None
        self.pool = (
            nn.ConvTranspose1d(
                dim_in, dim_in, 3, stride=2, groups=dim_in, padding=1, output_padding=1
            )
            if upsample
            else None
        )

    def forward(self, x: Tensor, style: Tensor) -> Tensor:
        residual = F.leaky_relu(self.norm1(x, style), 0.2)
        if self.pool is not None:
            residual = self.pool(residual)
        residual = self.conv1(residual)
        residual = self.conv2(F.leaky_relu(self.norm2(residual, style), 0.2))
        skip = F.interpolate(x, scale_factor=2.0, mode="nearest") if self.upsample else x
        if self.conv1x1 is not None:
            skip = self.conv1x1(skip)
        return (residual + skip) * (1 / math.sqrt(2))


class SnakeResBlock(nn.Module):
    """iSTFTNet's generator block: dilated convolutions with Snake activations (x + sin²(αx)/α)
    and style-normalised inputs."""

    def __init__(self, channels: int, kernel: int, dilations: tuple[int, ...], style: int):
        super().__init__()

        def conv(dilation: int) -> nn.Conv1d:
            return nn.Conv1d(
                channels, channels, kernel, dilation=dilation, padding=dilation * (kernel - 1) // 2
            )

        self.convs1 = nn.ModuleList([conv(d) for d in dilations])
        self.convs2 = nn.ModuleList([conv(1) for _ in dilations])
        self.adain1 = nn.ModuleList([AdaIN1d(style, channels) for _ in dilations])
        self.adain2 = nn.ModuleList([AdaIN1d(style, channels) for _ in dilations])
        self.alpha1 = nn.ParameterList([torch.ones(1, channels, 1) for _ in dilations])
        self.alpha2 = nn.ParameterList([torch.ones(1, channels, 1) for _ in dilations])

    def forward(self, x: Tensor, style: Tensor) -> Tensor:
        for c1, c2, n1, n2, a1, a2 in zip(
            self.convs1, self.convs2, self.adain1, self.adain2, self.alpha1, self.alpha2
        ):
            t = n1(x, style)
            t = c1(t + torch.sin(a1 * t) ** 2 / a1)
            t = n2(t, style)
            t = c2(t + torch.sin(a2 * t) ** 2 / a2)
            x = x + t
        return x


# --- encoders and the prosody predictor --------------------------------------------------------


def token_mask(lengths: Tensor, width: int) -> Tensor:
    """[B, width], True at each text's tokens, False at the padding after them."""
    return torch.arange(width, device=lengths.device)[None] < lengths[:, None]


def run_lstm(lstm: nn.Module, x: Tensor, lengths: Tensor | None = None) -> Tensor:
    """A bidirectional LSTM's outputs, computed in float32 whatever the rest runs in: its
    state carries through every step (and not every backend has reduced-precision LSTMs).
    `lengths` (on the CPU, as packing wants them): each text's steps; the padding after them
    is packed out, so the backward direction starts at a text's own last step, and comes
    back as zeros. None: no text is padded."""
    with torch.autocast(device_type=x.device.type, enabled=False):
        if lengths is None:
            output, _ = lstm(x.float())
            return output
        packed = nn.utils.rnn.pack_padded_sequence(
            x.float(), lengths, batch_first=True, enforce_sorted=False
        )
        output, _ = lstm(packed)
        padded, _ = nn.utils.rnn.pad_packed_sequence(
            output, batch_first=True, total_length=x.shape[1]
        )
        return padded


class ChannelLayerNorm(nn.Module):
    """Layer norm over the channels of [B, C, T]."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.gamma = nn.Parameter(torch.ones(channels))
        self.beta = nn.Parameter(torch.zeros(channels))

    def forward(self, x: Tensor) -> Tensor:
        normed = F.layer_norm(x.transpose(1, -1), self.gamma.shape, self.gamma, self.beta, 1e-5)
        return normed.transpose(1, -1)


class TextEncoder(nn.Module):
    """Token embeddings through convolutions and a bidirectional LSTM: [B, hidden, T]."""

    def __init__(self, config: KokoroConfig) -> None:
        super().__init__()
        width = config.hidden
        self.embedding = nn.Embedding(config.vocab_size, width)
        self.cnn = nn.ModuleList(
            nn.Sequential(
                nn.Conv1d(width, width, config.text_kernel, padding=config.text_kernel // 2),
                ChannelLayerNorm(width),
                nn.LeakyReLU(0.2),
            )
            for _ in range(config.layers)
        )
        self.lstm = nn.LSTM(width, width // 2, batch_first=True, bidirectional=True)

    def forward(self, ids: Tensor, lengths: Tensor | None = None) -> Tensor:
        """`lengths` (CPU): each text's tokens, None where no text is padded."""
        x = self.embedding(ids).transpose(1, 2)
        # Zeros at the padding before every convolution: what a text alone has beyond its ends.
        keep = None if lengths is None else token_mask(lengths.to(ids.device), ids.shape[1])
        for block in self.cnn:
            x = x if keep is None else x.masked_fill(~keep[:, None], 0.0)
            x = block(x)
        x = run_lstm(self.lstm, x.transpose(1, 2), lengths)
        return x.transpose(1, 2)


class DurationEncoder(nn.Module):
    """LSTMs alternating with style layer norms, the style appended to every step:
    [B, T, hidden + style]. `lstms` holds LSTM, AdaLayerNorm, LSTM, … as published."""

    def __init__(self, config: KokoroConfig) -> None:
        super().__init__()
        width, style = config.hidden, config.style
        blocks: list[nn.Module] = []
        for _ in range(config.layers):
            blocks.append(nn.LSTM(width + style, width // 2, batch_first=True, bidirectional=True))
            blocks.append(AdaLayerNorm(style, width))
        self.lstms = nn.ModuleList(blocks)

    def forward(self, x: Tensor, style: Tensor, lengths: Tensor | None = None) -> Tensor:
        """`lengths` (CPU): each text's tokens, None where no text is padded. The layer norms
        are per step: only the LSTMs need to know where a text ends."""
        steps = style.unsqueeze(1).expand(-1, x.shape[1], -1)
        x = torch.cat([x, steps], dim=-1)
        for block in self.lstms:
            if isinstance(block, AdaLayerNorm):
                x = torch.cat([block(x, style), steps], dim=-1)
            else:
                x = run_lstm(block, x, lengths)
        return x


class LinearLayer(nn.Module):
    """A linear layer under the published name `linear_layer`."""

    def __init__(self, width_in: int, width_out: int) -> None:
        super().__init__()
        self.linear_layer = nn.Linear(width_in, width_out)

    def forward(self, x: Tensor) -> Tensor:
        return self.linear_layer(x)


class ProsodyPredictor(nn.Module):
    def __init__(self, config: KokoroConfig) -> None:
        super().__init__()
        width, style = config.hidden, config.style
        self.text_encoder = DurationEncoder(config)
        self.lstm = nn.LSTM(width + style, width // 2, batch_first=True, bidirectional=True)
        self.duration_proj = LinearLayer(width, config.max_duration)
        self.shared = nn.LSTM(width + style, width // 2, batch_first=True, bidirectional=True)
        half = width // 2
        self.F0 = nn.ModuleList(
            [
                AdainResBlk1d(width, width, style),
                AdainResBlk1d(width, half, style, upsample=True),
                AdainResBlk1d(half, half, style),
            ]
        )
        self.N = nn.ModuleList(
            [
                AdainResBlk1d(width, width, style),
                AdainResBlk1d(width, half, style, upsample=True),
                AdainResBlk1d(half, half, style),
            ]
        )
        self.F0_proj = nn.Conv1d(half, 1, 1)
        self.N_proj = nn.Conv1d(half, 1, 1)

    def duration_logits(self, features: Tensor, lengths: Tensor | None = None) -> Tensor:
        """[B, T, max_duration]: each token's duration as a sum of sigmoids."""
        x = run_lstm(self.lstm, features, lengths)
        return self.duration_proj(x)

    def pitch_and_energy(self, aligned: Tensor, style: Tensor) -> tuple[Tensor, Tensor]:
        """aligned: [B, frames, hidden + style] → F0 and N curves at twice the frame rate."""
        x = run_lstm(self.shared, aligned)
        x = x.transpose(1, 2)
        f0, energy = x, x
        for block in self.F0:
            f0 = block(f0, style)
        for block in self.N:
            energy = block(energy, style)
        return self.F0_proj(f0).squeeze(1), self.N_proj(energy).squeeze(1)


# --- iSTFTNet decoder -------------------------------------------------------------------------


class HarmonicSource(nn.Module):
    """The neural source-filter excitation: sines at F0 and its harmonics where voiced, merged
    into one signal. Deterministic (no initial phase or noise), as the exported graph is."""

    def __init__(self, config: KokoroConfig) -> None:
        super().__init__()
        self.upsample = math.prod(config.upsample_rates) * config.hop
        self.harmonics = config.harmonics + 1
        self.l_linear = nn.Linear(self.harmonics, 1)

    def forward(self, f0: Tensor) -> Tensor:
        """f0: [B, samples] (already upsampled) → [B, samples]. In float32 whatever the rest
        runs in: the phase is a running sum over every sample, which half precision loses."""
        with torch.autocast(device_type=f0.device.type, enabled=False):
            return self._excitation(f0.float())

    def _excitation(self, f0: Tensor) -> Tensor:
        orders = torch.arange(1, self.harmonics + 1, device=f0.device, dtype=f0.dtype)
        cycles = f0.unsqueeze(-1) * orders / SAMPLE_RATE  # [B, samples, harmonics]
        cycles = cycles - torch.floor(cycles)
        # The phase is integrated at the frame rate and interpolated back: the published
        # model's way, which keeps the cumulative sum short.
        coarse = F.interpolate(
            cycles.transpose(1, 2), scale_factor=1 / self.upsample, mode="linear"
        )
        phase = torch.cumsum(coarse, dim=-1) * (2 * math.pi)
        phase = F.interpolate(phase * self.upsample, scale_factor=self.upsample, mode="linear")
        voiced = (f0 > 10).to(f0.dtype).unsqueeze(-1)
        sines = torch.sin(phase.transpose(1, 2)) * 0.1 * voiced
        return torch.tanh(self.l_linear(sines)).squeeze(-1)


class Generator(nn.Module):
    def __init__(self, config: KokoroConfig) -> None:
        super().__init__()
        style = config.style
        self.n_fft, self.hop = config.n_fft, config.hop
        self.m_source = HarmonicSource(config)
        self.kernels = len(config.resblock_kernels)
        self.ups = nn.ModuleList()
        self.resblocks = nn.ModuleList()
        self.noise_convs = nn.ModuleList()
        self.noise_res = nn.ModuleList()
        channels = config.upsample_channels
        bins = config.n_fft + 2
        for i, (rate, kernel) in enumerate(zip(config.upsample_rates, config.upsample_kernels)):
            out = channels // 2 ** (i + 1)
            self.ups.append(
                nn.ConvTranspose1d(out * 2, out, kernel, rate, padding=(kernel - rate) // 2)
            )
            for k in config.resblock_kernels:
                self.resblocks.append(SnakeResBlock(out, k, config.resblock_dilations, style))
            if i + 1 < len(config.upsample_rates):
                stride = math.prod(config.upsample_rates[i + 1 :])
                self.noise_convs.append(
                    nn.Conv1d(bins, out, stride * 2, stride=stride, padding=(stride + 1) // 2)
                )
                self.noise_res.append(SnakeResBlock(out, 7, config.resblock_dilations, style))
            else:
                self.noise_convs.append(nn.Conv1d(bins, out, 1))
                self.noise_res.append(SnakeResBlock(out, 11, config.resblock_dilations, style))
        self.conv_post = nn.Conv1d(out, bins, 7, padding=3)
        self.window: Tensor
        self.register_buffer("window", torch.hann_window(config.n_fft), persistent=False)

    def forward(self, x: Tensor, style: Tensor, f0: Tensor) -> Tensor:
        f0_samples = f0.repeat_interleave(self.m_source.upsample, dim=-1)
        source = self.m_source(f0_samples)
        # The spectra stay in float32 whatever the rest runs in: STFT phase is fragile.
        with torch.autocast(device_type=source.device.type, enabled=False):
            spectrum = torch.stft(
                source.float(), self.n_fft, self.hop, window=self.window, return_complex=True
            )
        harmonics = torch.cat([spectrum.abs(), spectrum.angle()], dim=1).to(x.dtype)
        for i, up in enumerate(self.ups):
            x = F.leaky_relu(x, 0.1)
            excitation = self.noise_res[i](self.noise_convs[i](harmonics), style)
            x = up(x)
            if i == len(self.ups) - 1:
                x = F.pad(x, (1, 0), mode="reflect")
            x = x + excitation
            blocks = self.resblocks[i * self.kernels : (i + 1) * self.kernels]
            x = sum((block(x, style) for block in blocks), torch.zeros_like(x)) / self.kernels
        x = self.conv_post(F.leaky_relu(x))
        half = self.n_fft // 2 + 1
        with torch.autocast(device_type=x.device.type, enabled=False):
            x = x.float()
            spectrum = torch.polar(torch.exp(x[:, :half]), torch.sin(x[:, half:]))
            return torch.istft(spectrum, self.n_fft, self.hop, window=self.window)


class Decoder(nn.Module):
    def __init__(self, config: KokoroConfig) -> None:
        super().__init__()
        style, width = config.style, config.hidden
        joined = 1024 + 2 + 64
        self.encode = AdainResBlk1d(width + 2, 1024, style)
        self.decode = nn.ModuleList(
            [
                AdainResBlk1d(joined, 1024, style),
                AdainResBlk1d(joined, 1024, style),
                AdainResBlk1d(joined, 1024, style),
                AdainResBlk1d(joined, 512, style, upsample=True),
            ]
        )
        self.F0_conv = nn.Conv1d(1, 1, 3, stride=2, padding=1)
        self.N_conv = nn.Conv1d(1, 1, 3, stride=2, padding=1)
        self.asr_res = nn.Sequential(nn.Conv1d(width, 64, 1))
        self.generator = Generator(config)

    def forward(self, aligned: Tensor, f0: Tensor, energy: Tensor, style: Tensor) -> Tensor:
        f0_frames = self.F0_conv(f0.unsqueeze(1))
        energy_frames = self.N_conv(energy.unsqueeze(1))
        x = self.encode(torch.cat([aligned, f0_frames, energy_frames], dim=1), style)
        residual = self.asr_res(aligned)
        for block in self.decode:
            x = block(torch.cat([x, residual, f0_frames, energy_frames], dim=1), style)
        return self.generator(x, style, f0)


class KokoroNetwork(nn.Module):
    """Token ids, a style row and a speed → audio and each token's frames (600 samples each)."""

    def __init__(self, config: KokoroConfig | None = None) -> None:
        super().__init__()
        config = config or KokoroConfig()
        self.config = config
        self.bert = Albert(config)
        self.bert_encoder = nn.Linear(config.albert_hidden, config.hidden)
        self.predictor = ProsodyPredictor(config)
        self.text_encoder = TextEncoder(config)
        self.decoder = Decoder(config)

    def durations(
        self, ids: Tensor, style: Tensor, speed: float, lengths: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """Each token's frames [B, T] (int64; 0 at the padding) and the prosody features
        [B, T, hidden + style]. `lengths` (CPU): each row's tokens, None where no row is
        padded."""
        prosody_style = style[:, STYLE_HALF:]
        mask = None if lengths is None else token_mask(lengths.to(ids.device), ids.shape[1])
        encoded = self.bert_encoder(self.bert(ids, mask))
        features = self.predictor.text_encoder(encoded, prosody_style, lengths)
        logits = self.predictor.duration_logits(features, lengths)
        # Rounded in float32 whatever the rest runs in: a frame more or less moves every word.
        seconds = torch.sigmoid(logits.float()).sum(dim=-1) / speed
        frames = torch.round(seconds).clamp(min=1).long()
        if mask is not None:
            frames = frames * mask
        return frames, features

    def forward(
        self, ids: Tensor, style: Tensor, speed: float, frames: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """ids: [1, T] with the pads; style: [1, 256] → audio [samples], frames [T]. Given
        `frames`, those durations are spoken instead of the predicted ones (to compare the
        decoder alone with another runtime's)."""
        predicted, features = self.durations(ids, style, speed)
        frames = predicted.reshape(-1) if frames is None else frames
        audio = self.decode(features, self.text_encoder(ids), frames, style)
        return audio, frames

    def speak_batch(
        self, ids: Tensor, lengths: list[int], style: Tensor, speed: float
    ) -> list[tuple[Tensor, Tensor]]:
        """ids: [B, T], each row a text with its pads, then zeros up to the longest; style:
        [B, 256] → each text's audio [samples] and frames [length], as `forward` gives it
        alone. The encoders run as one batch; alignment and decoding text by text."""
        padded = None if min(lengths) == ids.shape[1] else torch.tensor(lengths)
        frames, features = self.durations(ids, style, speed, padded)
        text = self.text_encoder(ids, padded)
        spoken = []
        for row, length in enumerate(lengths):
            own = frames[row, :length]
            audio = self.decode(
                features[row : row + 1, :length],
                text[row : row + 1, :, :length],
                own,
                style[row : row + 1],
            )
            spoken.append((audio, own))
        return spoken

    def decode(self, features: Tensor, text: Tensor, frames: Tensor, style: Tensor) -> Tensor:
        """One text's audio [samples]: its prosody features [1, T, hidden + style] and text
        encoding [1, hidden, T], each token held for its frames [T]."""
        prosody_style, voice_style = style[:, STYLE_HALF:], style[:, :STYLE_HALF]
        aligned = features.repeat_interleave(frames, dim=1)
        f0, energy = self.predictor.pitch_and_energy(aligned, prosody_style)
        audio = self.decoder(text.repeat_interleave(frames, dim=2), f0, energy, voice_style)
        return audio.reshape(-1)
