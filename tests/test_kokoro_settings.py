"""Kokoro's own settings (tts/kokoro/environment.py): read from the environment, checked as a
command starts, and `--runtime` over its variable."""

from __future__ import annotations

from pathlib import Path

import pytest

from audiopub import settings
from audiopub.cli import _build_parser, main
from audiopub.errors import SettingInvalid
from audiopub.tts.kokoro import KOKORO
from audiopub.tts.kokoro.environment import DIR, RUNTIME
from audiopub.tts.kokoro.files import default_folder


def test_kokoro_lists_its_settings() -> None:
    assert KOKORO.settings == (DIR, RUNTIME)


def test_the_runtime_is_onnx_unless_set() -> None:
    assert RUNTIME.read(settings.from_environ({})) == "onnx"
    assert RUNTIME.read(settings.from_environ({"AUDIOPUB_KOKORO_RUNTIME": " Torch "})) == "torch"
    assert RUNTIME.read(settings.from_environ({"AUDIOPUB_KOKORO_RUNTIME": "auto"})) == "auto"


def test_a_runtime_that_is_not_one_is_named_with_the_ones_there_are() -> None:
    with pytest.raises(
        SettingInvalid,
        match="AUDIOPUB_KOKORO_RUNTIME: expected one of onnx, torch, auto, not 'tensorflow'",
    ):
        RUNTIME.read(settings.from_environ({"AUDIOPUB_KOKORO_RUNTIME": "tensorflow"}))


def test_the_command_refuses_a_bad_runtime_before_it_runs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("AUDIOPUB_KOKORO_RUNTIME", "tensorflow")
    assert main(["voices"]) == 1
    assert capsys.readouterr().err == (
        "audiopub: error: AUDIOPUB_KOKORO_RUNTIME: expected one of onnx, torch, auto, "
        "not 'tensorflow'\n"
    )


def test_the_runtime_option_names_the_runtimes(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _build_parser().parse_args(["convert", "book.epub", "--runtime", "tensorflow"])
    assert "expected one of onnx, torch, auto, not 'tensorflow'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        _build_parser().parse_args(["bench", "--runtime", "onnx,tensorflow"])
    assert "expected one of onnx, torch, auto, not 'tensorflow'" in capsys.readouterr().err


def test_its_folder_is_the_variables_else_the_models_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.delenv("AUDIOPUB_KOKORO_DIR", raising=False)
    assert default_folder() == tmp_path / "models" / "kokoro"
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("AUDIOPUB_KOKORO_DIR", "~/kokoro")
    assert default_folder() == tmp_path / "kokoro"
