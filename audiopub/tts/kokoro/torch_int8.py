"""ONNX Runtime's int8 arithmetic in PyTorch, for the layers whose weights came from the int8
export, so that the torch runtime on the CPU speaks what ONNX Runtime speaks.

The int8 export quantizes activations as it runs: each matrix product and convolution takes
its input through DynamicQuantizeLinear (one uint8 scale and zero point for the whole tensor:
scale = (max(0, x_max) − min(0, x_min)) / 255, zero point and values rounded half to even),
multiplies integers exactly (MatMulInteger, ConvInteger), then scales the sum back to float.
A convolution's bias is added as an integer first, floor(bias / scale). Its LSTMs
(DynamicQuantizeLSTM) quantize the whole input sequence once and the hidden state at every
step. Dequantized weights on float activations differ from that by about a quantum per
product: enough to round a token's duration, near half a frame, the other way now and then.

Here the integer products are float64 products of integer-valued tensors (exact: every sum
stays far below 2⁵³), then scaled in float32 as ORT does. One more detail is the CPU's: on x86
without VNNI, ORT multiplies uint8 activations by int8 weights (MatMulInteger, the LSTMs) with
an instruction that adds neighbouring products in pairs into 16 bits, saturating; with VNNI
the sums are exact. `saturate_pairs` says which to reproduce (see `pairs_saturate`).
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from pathlib import Path
from typing import cast

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from audiopub.tts.kokoro.torch_weights import SCALE, ZERO_POINT

_LEVELS = 255.0  # uint8 activations


_INT16 = (-32768, 32767)
_CHUNK = 1 << 24  # elements of pair sums held at once


def pairs_saturate() -> bool:
    """Whether ORT's uint8 × int8 products saturate pair sums here: x86 without VNNI."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return "vnni" not in flags


def u8s8_product(q: Tensor, zero: Tensor, weight: Tensor, saturate: bool) -> Tensor:
    """Σₖ (q − zero)·w as ORT computes it: q [M, K] the uint8 values, weight [N, K] int8 →
    [M, N] float64. Saturating: Σ over pairs of clamp(q₂ₚw₂ₚ + q₂ₚ₊₁w₂ₚ₊₁) to 16 bits, less
    zero × Σw (ORT corrects the zero point apart, exactly)."""
    # Two products of 255 × |w| fit in 16 bits when |w| ≤ 64 (Kokoro's export keeps its
    # weights within ±64 for that reason): then the exact product is ORT's, and much faster.
    if not saturate or 2 * 255 * float(weight.abs().max()) <= _INT16[1]:
        return (q - zero) @ weight.T
    qi, wi = q.to(torch.int32), weight.to(torch.int32)
    if qi.shape[-1] % 2:
        qi, wi = F.pad(qi, (0, 1)), F.pad(wi, (0, 1))
    even, odd = wi[:, 0::2].T, wi[:, 1::2].T  # [K/2, N]
    rows = max(1, _CHUNK // (even.numel()))
    sums = []
    for start in range(0, qi.shape[0], rows):
        part = qi[start : start + rows]
        paired = part[:, 0::2, None] * even + part[:, 1::2, None] * odd
        sums.append(paired.clamp(*_INT16).sum(dim=1))
    total = torch.cat(sums).double()
    return total - zero * weight.sum(dim=1)


def quantize_raw(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """DynamicQuantizeLinear on the whole tensor: the uint8 values and zero point as float64,
    and the float32 scale."""
    x = x.float()
    low = torch.clamp(x.min(), max=0.0)
    high = torch.clamp(x.max(), min=0.0)
    scale = (high - low) / _LEVELS
    scale = torch.where(scale == 0, torch.ones_like(scale), scale)  # all zeros: ORT takes 1
    zero = torch.round(torch.clamp(-low / scale, 0.0, _LEVELS))
    q = torch.clamp(torch.round(x / scale) + zero, 0.0, _LEVELS)
    return q.double(), zero.double(), scale


def quantize(x: Tensor) -> tuple[Tensor, Tensor]:
    """(q − zero point) as float64 integers, and the float32 scale."""
    q, zero, scale = quantize_raw(x)
    return q - zero, scale


def _integers(weight: Tensor, scale: Tensor, zero: Tensor) -> Tensor:
    """The stored integers less their zero point, back from the dequantized weight (exact:
    the weight is (q − zero point) × scale with |q − zero point| ≤ 255)."""
    shape = (-1,) + (1,) * (weight.dim() - 1) if scale.numel() > 1 else (1,) * weight.dim()
    return torch.round(weight.double() / scale.double().reshape(shape))


class Int8Linear(nn.Module):
    """MatMulInteger, then × (input scale × weight scale per output), then + bias."""

    def __init__(
        self, linear: nn.Linear, scale: Tensor, zero: Tensor, saturate: bool = False
    ) -> None:
        super().__init__()
        self.weight: Tensor
        self.scale: Tensor
        self.register_buffer("weight", _integers(linear.weight, scale, zero))
        self.register_buffer("scale", scale.float())
        self.bias = linear.bias
        self.saturate = saturate

    def forward(self, x: Tensor) -> Tensor:
        q, zero, x_scale = quantize_raw(x)
        rows = q.reshape(-1, q.shape[-1])
        product = u8s8_product(rows, zero, self.weight, self.saturate)
        y = product.reshape(*q.shape[:-1], -1).float() * (x_scale * self.scale)
        return y if self.bias is None else y + self.bias


class Int8Conv1d(nn.Module):
    """ConvInteger (padding with the zero point: a real zero), its bias added as
    floor(bias / scale) in integers, then × (input scale × weight scale)."""

    def __init__(self, conv: nn.Conv1d, scale: Tensor, zero: Tensor) -> None:
        super().__init__()
        self.weight: Tensor
        self.scale: Tensor
        self.register_buffer("weight", _integers(conv.weight, scale, zero))
        self.register_buffer("scale", scale.float().reshape(()))
        self.bias = conv.bias
        # The network's convolutions are padded by numbers, never "same" or "valid".
        self.stride, self.padding = conv.stride, cast(tuple[int, ...], conv.padding)
        self.dilation, self.groups = conv.dilation, conv.groups

    def forward(self, x: Tensor) -> Tensor:
        q, x_scale = quantize(x)
        scale = x_scale * self.scale
        y = F.conv1d(q, self.weight, None, self.stride, self.padding, self.dilation, self.groups)
        if self.bias is not None:
            y = y + torch.floor(self.bias / scale).double()[None, :, None]
        return y.float() * scale


class Int8LSTM(nn.Module):
    """DynamicQuantizeLSTM, bidirectional, batch first, one sequence: the input's products for
    every step at once (quantized once), the hidden state's quantized step by step."""

    def __init__(
        self,
        lstm: nn.LSTM,
        quantization: Mapping[str, tuple[Tensor, Tensor]],
        saturate: bool = False,
    ) -> None:
        super().__init__()
        self.hidden = lstm.hidden_size
        self.saturate = saturate
        for suffix in ("_l0", "_l0_reverse"):
            for kind in ("ih", "hh"):
                key = f"weight_{kind}{suffix}"
                scale, zero = quantization[key]
                self.register_buffer(key, _integers(getattr(lstm, key), scale, zero))
                self.register_buffer(f"{key}{SCALE}", scale.float().reshape(()))
            bias = getattr(lstm, f"bias_ih{suffix}") + getattr(lstm, f"bias_hh{suffix}")
            self.register_buffer(f"bias{suffix}", bias.detach().float())

    def forward(self, x: Tensor) -> tuple[Tensor, None]:
        q, zero, x_scale = quantize_raw(x)
        outputs = [
            self._direction(q[0], zero, x_scale, suffix) for suffix in ("_l0", "_l0_reverse")
        ]
        return torch.cat(outputs, dim=-1).unsqueeze(0), None

    def _direction(self, q: Tensor, zero: Tensor, x_scale: Tensor, suffix: str) -> Tensor:
        w, w_scale = getattr(self, f"weight_ih{suffix}"), getattr(self, f"weight_ih{suffix}{SCALE}")
        r, r_scale = getattr(self, f"weight_hh{suffix}"), getattr(self, f"weight_hh{suffix}{SCALE}")
        product = u8s8_product(q, zero, w, self.saturate)
        inputs = product.float() * (x_scale * w_scale) + getattr(self, f"bias{suffix}")
        h = torch.zeros(self.hidden, device=q.device)
        c = torch.zeros_like(h)
        steps = range(q.shape[0] - 1, -1, -1) if suffix.endswith("reverse") else range(q.shape[0])
        out = torch.empty(q.shape[0], self.hidden, device=q.device)
        for t in steps:
            hq, h_zero, h_scale = quantize_raw(h[None])
            recurrent = u8s8_product(hq, h_zero, r, self.saturate)[0]
            gates = inputs[t] + recurrent.float() * (h_scale * r_scale)
            i, f, g, o = gates.chunk(4)  # PyTorch's gate order (the loader reordered ONNX's)
            c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
            h = torch.sigmoid(o) * torch.tanh(c)
            out[t] = h
        return out


def quantized_weights(state: Mapping[str, Tensor]) -> dict[str, tuple[Tensor, Tensor]]:
    """{parameter key: (scale, zero point)} of every weight the int8 export multiplies as
    integers (none for an fp32 export or the published checkpoint)."""
    return {
        key[: -len(SCALE)]: (value, state[key[: -len(SCALE)] + ZERO_POINT])
        for key, value in state.items()
        if key.endswith(SCALE) and key[: -len(SCALE)] + ZERO_POINT in state
    }


def match_int8(
    network: nn.Module,
    quantization: Mapping[str, tuple[Tensor, Tensor]],
    saturate: bool | None = None,
) -> int:
    """Replace each layer whose weights were int8 by its integer-arithmetic twin; how many.
    `saturate`: as ORT does on this CPU when None."""
    if saturate is None:
        saturate = pairs_saturate()
    replaced = 0
    for name, module in list(network.named_modules()):
        twin: nn.Module | None = None
        if isinstance(module, nn.Linear) and f"{name}.weight" in quantization:
            twin = Int8Linear(module, *quantization[f"{name}.weight"], saturate=saturate)
        elif isinstance(module, nn.Conv1d) and f"{name}.weight" in quantization:
            twin = Int8Conv1d(module, *quantization[f"{name}.weight"])
        elif isinstance(module, nn.LSTM) and f"{name}.weight_ih_l0" in quantization:
            prefix = f"{name}."
            own = {
                k.removeprefix(prefix): v for k, v in quantization.items() if k.startswith(prefix)
            }
            twin = Int8LSTM(module, own, saturate=saturate)
        if twin is None:
            continue
        parent, _, child = name.rpartition(".")
        setattr(network.get_submodule(parent), child, twin)
        replaced += 1
    return replaced
