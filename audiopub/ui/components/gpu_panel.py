"""Live GPU panel: VRAM, temperature, utilisation and power per GPU, with a short history plot.

NVML is only ever called on the monitor's own thread; this panel reads the monitor's last
samples (a lock, no driver call) once a second, so it never blocks the event loop. No GPU is
a normal state: the panel says so, with the reason, in the same calm style as everything else.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

from nicegui import ui

from audiopub.gpu.monitor import GpuMonitor, GpuSample
from audiopub.ui.theme import section_title, stat

REFRESH_S: Final = 1.0
HISTORY_S: Final = 300.0  # the plot shows the last five minutes
NO_GPU: Final = "No NVIDIA GPU detected"
VRAM_COLOUR: Final = "#3e6e7e"
TEMP_COLOUR: Final = "#b7844b"
AXIS_COLOUR: Final = "#8a979d"
MIN_SPAN_S: Final = 10.0  # the plot's shortest time axis
# ECharts label formatter (JavaScript): -90 → "1.5 min", -20 → "20 s", 0 → "now".
SECONDS_AGO: Final = (
    "v => v === 0 ? 'now' : (v <= -60 ? `${+(-v / 60).toFixed(1)} min` : `${Math.round(-v)} s`)"
)


class GpuPanel:
    def __init__(self, monitor: GpuMonitor, started: Callable[[], bool]) -> None:
        self.monitor = monitor
        self.started = started
        self.blocks: dict[int, _GpuBlock] = {}
        with ui.card().classes("ap-card w-full gap-3").mark("gpu-panel"):
            section_title("GPU", "memory")
            with ui.row().classes("items-start no-wrap gap-3") as self.none:
                ui.icon("developer_board_off").classes("text-2xl ap-muted")
                with ui.column().classes("gap-1"):
                    self.headline = (
                        ui.label("Checking for NVIDIA GPUs…")
                        .classes("font-medium")
                        .mark("gpu-status")
                    )
                    self.reason = ui.label().classes("ap-muted text-sm").mark("gpu-none-reason")
            self.warning = ui.label().classes("ap-banner ap-warn text-sm").mark("gpu-warning")
            self.warning.set_visibility(False)
            self.devices = ui.column().classes("w-full gap-5")
        self._tick()
        ui.timer(REFRESH_S, self._tick)

    def _tick(self) -> None:
        status = self.monitor.status()
        samples = self.monitor.latest()
        if not samples:
            self.none.set_visibility(True)
            if not self.started():
                self.headline.set_text("Checking for NVIDIA GPUs…")
                self.reason.set_text("")
            elif status.available:
                self.headline.set_text("Reading the GPU…")
                self.reason.set_text("")
            else:
                self.headline.set_text(NO_GPU)
                self.reason.set_text(_without_prefix(status.reason or "NVML reports no devices"))
            return
        self.none.set_visibility(False)
        self.warning.set_text(status.reason or "")
        self.warning.set_visibility(bool(status.reason))
        history = self.monitor.history(HISTORY_S)
        now = time.monotonic()
        for sample in samples:
            block = self.blocks.get(sample.index)
            if block is None:
                with self.devices:
                    block = self.blocks[sample.index] = _GpuBlock(sample)
            block.update(
                sample, [s for tick in history for s in tick if s.index == sample.index], now
            )


class _GpuBlock:
    def __init__(self, sample: GpuSample) -> None:
        i = sample.index
        with ui.column().classes("w-full gap-2").mark(f"gpu-{i}"):
            with ui.row().classes("w-full items-baseline no-wrap gap-2"):
                ui.label(sample.name).classes("font-medium truncate flex-1").mark(f"gpu-{i}-name")
                ui.label(f"GPU {i}").classes("ap-muted text-xs")
            with ui.row().classes("w-full items-baseline no-wrap gap-3"):
                ui.label("VRAM").classes("ap-stat-label flex-1")
                self.vram = ui.label().classes("ap-figure text-sm").mark(f"gpu-{i}-vram")
            self.vram_bar = (
                ui.linear_progress(value=0, show_value=False)
                .props("rounded size=8px")
                .classes("w-full")
            )
            with ui.row().classes("w-full justify-between"):
                self.temp = stat("Temp", f"gpu-{i}-temp")
                self.util = stat("Load", f"gpu-{i}-util")
                self.power = stat("Power", f"gpu-{i}-power")
            self.chart = (
                ui.echart(_chart_options(sample)).classes("ap-gpu-chart").mark(f"gpu-{i}-chart")
            )

    def update(self, sample: GpuSample, history: list[GpuSample], now: float) -> None:
        used, total = sample.vram_used_mb, sample.vram_total_mb
        if used is not None and total:
            self.vram_bar.set_value(round(used / total, 4))
            self.vram.set_text(f"{used / 1024:.1f} / {total / 1024:.1f} GiB")
        else:
            self.vram.set_text("VRAM not reported")
        self.temp.set_text(_unit(sample.temperature_c, "°C"))
        self.util.set_text(_unit(sample.utilisation_pct, "%"))
        self.power.set_text(_unit(None if sample.power_w is None else round(sample.power_w), "W"))
        options = self.chart.options
        # x: seconds ago. The axis spans the history there is (up to HISTORY_S), so a fresh
        # start shows a full-width line rather than a dot at the right edge.
        span = now - history[0].timestamp if history else HISTORY_S
        options["xAxis"]["min"] = -round(max(MIN_SPAN_S, min(HISTORY_S, span)))
        vram, temperature = options["series"][0], options["series"][1]
        vram["data"] = [
            [round(s.timestamp - now, 1), round(s.vram_used_mb / 1024, 2)]
            for s in history
            if s.vram_used_mb is not None
        ]
        temperature["data"] = [
            [round(s.timestamp - now, 1), s.temperature_c]
            for s in history
            if s.temperature_c is not None
        ]
        self.chart.update()


def _chart_options(sample: GpuSample) -> dict[str, Any]:
    total_gib = round((sample.vram_total_mb or 0) / 1024, 1) or None
    axis = {
        "axisLabel": {"color": AXIS_COLOUR, "fontSize": 10},
        "splitLine": {"lineStyle": {"color": "rgba(128,128,128,0.15)"}},
    }
    return {
        "animation": False,
        "grid": {"left": 34, "right": 34, "top": 26, "bottom": 22},
        "legend": {
            "top": 0,
            "itemWidth": 12,
            "itemHeight": 8,
            "textStyle": {"color": AXIS_COLOUR, "fontSize": 11},
        },
        "tooltip": {"trigger": "axis"},
        "xAxis": {
            "type": "value",
            "min": -HISTORY_S,
            "max": 0,
            **axis,
            "axisLabel": {"color": AXIS_COLOUR, "fontSize": 10, ":formatter": SECONDS_AGO},
        },
        "yAxis": [
            {"type": "value", "min": 0, "max": total_gib, **axis},
            {"type": "value", "min": 20, "max": 100, **axis, "splitLine": {"show": False}},
        ],
        "series": [
            {
                "name": "VRAM GiB",
                "type": "line",
                "showSymbol": False,
                "data": [],
                "lineStyle": {"width": 1.5, "color": VRAM_COLOUR},
                "itemStyle": {"color": VRAM_COLOUR},
                "areaStyle": {"opacity": 0.12, "color": VRAM_COLOUR},
            },
            {
                "name": "°C",
                "type": "line",
                "yAxisIndex": 1,
                "showSymbol": False,
                "data": [],
                "lineStyle": {"width": 1.5, "color": TEMP_COLOUR},
                "itemStyle": {"color": TEMP_COLOUR},
            },
        ],
    }


def _unit(value: float | None, unit: str) -> str:
    return "—" if value is None else f"{value} {unit}"


def _without_prefix(reason: str) -> str:
    """The monitor's reasons often start with the headline itself; don't say it twice."""
    prefix = f"{NO_GPU}: "
    text = reason.removeprefix(prefix)
    return text[:1].upper() + text[1:]
