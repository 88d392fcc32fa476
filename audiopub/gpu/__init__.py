"""NVIDIA GPU facts and live telemetry (VRAM, temperature, load, power) through NVML.

`query_gpu_info()` answers once "is there a usable GPU, and why not?"; `GpuMonitor` samples in
a background thread for the UI's gauges and the benchmark's peak VRAM and utilisation. No GPU
is a normal state: both report it in `GpuStatus.reason` instead of raising. See monitor.py.
`process_vram_mb()` (usage.py) reads one process's own share of each device's memory.
"""
