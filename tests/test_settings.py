"""The settings: read from an environment once, the command line's options over them, handed
down as values (never written back to the environment)."""

from __future__ import annotations

import os
import pickle
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from audiopub import settings
from audiopub.errors import SettingInvalid


def test_an_environment_gives_the_settings(tmp_path: Path) -> None:
    given = settings.from_environ(
        {
            "AUDIOPUB_DATA_DIR": str(tmp_path),
            "AUDIOPUB_BATCH_SIZE": "8",
            "AUDIOPUB_CPU_WORKERS": "0",
            "AUDIOPUB_ALLOWED_HOSTS": "a.lan, b.lan",
            "AUDIOPUB_KEEP_CHUNK_AUDIO": "0",
            "AUDIOPUB_CUDA_TUNING": "pad_nc1d",
            "AUDIOPUB_SUPERTONIC_MULTILINGUAL": "no",
            "HOME": "/home/someone",
            "AUDIOPUB_TOKEN": " a-long-enough-secret ",
        }
    )
    assert given.data_dir == tmp_path and given.models_dir == tmp_path / "models"
    assert not given.models_dir_chosen
    assert given.batch_size == 8 and given.cpu_workers == 1  # at least this process
    assert given.allowed_hosts == ("a.lan", "b.lan")
    assert not given.keep_chunk_audio and given.level_chapters
    assert given.cuda_tuning == {"pad_nc1d"}
    assert given.token == "a-long-enough-secret" and "secret" not in repr(given)
    # The engines' own variables are kept as they are set, for each engine to read (and check):
    # every AUDIOPUB_* one but the token, and no other program's.
    assert given.environment["AUDIOPUB_SUPERTONIC_MULTILINGUAL"] == "no"
    assert "AUDIOPUB_TOKEN" not in given.environment and "HOME" not in given.environment
    assert pickle.loads(pickle.dumps(given)) == given  # handed to engine processes whole

    nothing = settings.from_environ({"XDG_DATA_HOME": str(tmp_path)})
    assert nothing.data_dir == tmp_path / "audiopub"
    assert (nothing.batch_size, nothing.cpu_workers, nothing.ray_address) == (None, None, None)
    assert nothing.engine_idle_s == settings.ENGINE_IDLE_S and nothing.keep_chunk_audio
    models = settings.from_environ({"AUDIOPUB_MODELS_DIR": str(tmp_path / "m")})
    assert models.models_dir == tmp_path / "m" and models.models_dir_chosen


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("AUDIOPUB_CPU_WORKERS", "many"),
        ("AUDIOPUB_ENGINE_IDLE_S", "-1"),
        ("AUDIOPUB_CUDA_TUNING", "turbo"),
        ("AUDIOPUB_BATCH_SIZE", "0"),
    ],
)
def test_a_value_that_cannot_be_used_is_named(name: str, value: str) -> None:
    with pytest.raises(SettingInvalid, match=name):
        settings.from_environ({name: value})


def test_the_command_line_wins_and_is_not_written_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(settings.RAY_ADDRESS_ENV, "auto")
    assert settings.load().ray_address == "auto"
    assert settings.load(ray_address="10.0.0.7:6379").ray_address == "10.0.0.7:6379"
    assert os.environ[settings.RAY_ADDRESS_ENV] == "auto"


def test_installed_settings_hold_in_every_thread_until_their_block_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = replace(settings.from_environ({}), data_dir=tmp_path / "chosen")
    seen: list[Path] = []
    with settings.installed(chosen):
        monkeypatch.setenv("AUDIOPUB_DATA_DIR", str(tmp_path / "later"))  # read once: not now
        reader = threading.Thread(target=lambda: seen.append(settings.data_dir()))
        reader.start()
        reader.join()
        assert settings.data_dir() == tmp_path / "chosen"
    assert seen == [tmp_path / "chosen"]
    assert settings.data_dir() == tmp_path / "later"  # none installed: the environment now


def test_an_engine_setting_reads_the_settings_it_is_given() -> None:
    def parse(text: str) -> int:
        if not text.strip().isdigit():
            raise ValueError(f"expected a number, not {text!r}")
        return int(text)

    setting = settings.EngineSetting("AUDIOPUB_TEST_LEVEL", parse, 3, "a level")
    assert setting.read(settings.from_environ({})) == 3
    assert setting.read(settings.from_environ({"AUDIOPUB_TEST_LEVEL": " "})) == 3  # unset
    given = settings.from_environ({"AUDIOPUB_TEST_LEVEL": "7"})
    assert setting.read(given) == 7
    with settings.installed(given):
        assert setting.read() == 7
    # A command line's option wins, written nowhere but the settings it makes.
    assert setting.read(setting.given(given, "9")) == 9 and setting.read(given) == 7
    with pytest.raises(SettingInvalid, match="AUDIOPUB_TEST_LEVEL: expected a number, not 'x'"):
        setting.read(settings.from_environ({"AUDIOPUB_TEST_LEVEL": "x"}))
