"""Kokoro voice mixes saved under a name (`audiopub.ui.voice_mixes`), without the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from audiopub.errors import AudiopubError
from audiopub.tts.kokoro import KOKORO
from audiopub.tts.kokoro.files import parse_mix
from audiopub.ui.voice_mixes import VoiceMixes, mix_string

assert KOKORO.mixing is not None
MIXING = KOKORO.mixing  # Kokoro's voices mix


def test_weights_become_shares_of_one_the_engine_accepts() -> None:
    assert mix_string([("jf_alpha", 75), ("jm_kumo", 25)], MIXING) == "jf_alpha:0.75+jm_kumo:0.25"
    thirds = mix_string([("jf_alpha", 5), ("jm_kumo", 5), ("jf_nezumi", 5)], MIXING)
    assert thirds == "jf_alpha:0.3333+jm_kumo:0.3333+jf_nezumi:0.3333"
    assert [name for name, _ in parse_mix(thirds).parts] == ["jf_alpha", "jm_kumo", "jf_nezumi"]
    # A weight of 0, or a row with no voice, leaves that row out.
    assert (
        mix_string([("jf_alpha", 40), ("jm_kumo", 0), ("", 50), ("jf_nezumi", 10)], MIXING)
        == "jf_alpha:0.8+jf_nezumi:0.2"
    )


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        ([("jf_alpha", 50)], "at least two different voices"),
        ([("jf_alpha", 50), ("jm_kumo", 0)], "at least two different voices"),
        ([("jf_alpha", 50), ("jf_alpha", 50)], "at least two different voices"),
        ([("jf_alpha", 50), ("jf_alpha", 20), ("jm_kumo", 30)], "names a voice twice"),
    ],
)
def test_a_mix_that_is_not_one_says_why(parts: list[tuple[str, float]], message: str) -> None:
    with pytest.raises(AudiopubError, match=message):
        mix_string(parts, MIXING)


def test_saved_mixes_are_kept_by_name_and_replaced(tmp_path: Path) -> None:
    mixes = VoiceMixes(tmp_path / "data" / "kokoro-mixes.json", KOKORO.name)
    assert mixes.all() == {}
    assert mixes.save("  Warm   narrator ", "jf_alpha:0.6+jm_kumo:0.4") == "Warm narrator"
    mixes.save("Bright", "jf_alpha+jm_kumo")
    mixes.save("Warm narrator", "jf_alpha:0.3+jm_kumo:0.7")
    assert VoiceMixes(mixes.path, KOKORO.name).all() == {
        "Warm narrator": "jf_alpha:0.3+jm_kumo:0.7",
        "Bright": "jf_alpha+jm_kumo",
    }


def test_a_removed_mix_is_gone_under_every_name_and_the_others_stay(tmp_path: Path) -> None:
    mixes = VoiceMixes(tmp_path / "kokoro-mixes.json", KOKORO.name)
    mixes.save("Warm", "jf_alpha:0.6+jm_kumo:0.4")
    mixes.save("Bright", "jf_alpha+jm_kumo")
    mixes.save("Also warm", "jf_alpha:0.6+jm_kumo:0.4")
    assert mixes.remove("jf_alpha:0.6+jm_kumo:0.4") == ["Warm", "Also warm"]
    assert VoiceMixes(mixes.path, KOKORO.name).all() == {"Bright": "jf_alpha+jm_kumo"}
    # Removed already (by another page): nothing to do, nothing else touched.
    assert mixes.remove("jf_alpha:0.6+jm_kumo:0.4") == []
    assert VoiceMixes(mixes.path, KOKORO.name).all() == {"Bright": "jf_alpha+jm_kumo"}


@pytest.mark.parametrize(
    ("name", "mix", "message"),
    [
        ("  ", "jf_alpha+jm_kumo", "Give the mix a name"),
        ("x" * 61, "jf_alpha+jm_kumo", "at most 60 characters"),
        ("Odd", "jf_alpha:0.6+jm_kumo:0.6", "add up to 1.2"),
    ],
)
def test_a_bad_name_or_mix_is_refused_and_nothing_is_written(
    tmp_path: Path, name: str, mix: str, message: str
) -> None:
    mixes = VoiceMixes(tmp_path / "kokoro-mixes.json", KOKORO.name)
    mixes.save("Kept", "jf_alpha+jm_kumo")
    before = mixes.path.read_bytes()
    with pytest.raises(AudiopubError, match=message):
        mixes.save(name, mix)
    assert mixes.path.read_bytes() == before


@pytest.mark.parametrize(
    "content", ["not json", "[1, 2]", '{"Good": "jf_alpha+jm_kumo", "Bad": 3}']
)
def test_a_damaged_file_never_stops_the_page(tmp_path: Path, content: str) -> None:
    path = tmp_path / "kokoro-mixes.json"
    path.write_text(content, "utf-8")
    expected = {"Good": "jf_alpha+jm_kumo"} if "Good" in content else {}
    assert VoiceMixes(path, KOKORO.name).all() == expected
    VoiceMixes(path, KOKORO.name).save("New", "jf_alpha+jm_kumo")
    assert json.loads(path.read_text("utf-8"))["New"] == "jf_alpha+jm_kumo"
