"""Which Supertonic release speaks: the choice, the newest installed, AUDIOPUB_SUPERTONIC_DIR,
each release's languages, and engines that notice their model removed or replaced."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from tiny_supertonic import build_tiny_model

from audiopub.cli import main
from audiopub.errors import ModelMissing, VoiceNotFound
from audiopub.jobs.submission import language_note
from audiopub.tts.engine import Voice
from audiopub.tts.registry import get_engine
from audiopub.tts.supertonic.engine import SupertonicEngine, default_model_dir
from audiopub.tts.supertonic.environment import DIR
from audiopub.tts.supertonic.files import folder_stamp
from audiopub.tts.supertonic.releases import (
    active_release,
    choice_path,
    choose_release,
    chosen_release,
    languages_of,
)
from audiopub.tts.supertonic.text import SUPPORTED_LANGUAGES

SUPERTONIC_2 = ("en", "ko", "es", "pt", "fr")


@pytest.fixture(autouse=True)
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.delenv(DIR.env, raising=False)
    return tmp_path / "models"


def install(models: Path, release: str, **options: object) -> Path:
    """A release as a download leaves it (the tiny model in models/<release>/)."""
    return build_tiny_model(models / release, **options)


def test_the_newest_installed_release_speaks_unless_another_is_chosen(models: Path) -> None:
    assert default_model_dir() == models / "supertonic-3"  # none: where the files would go
    assert active_release() is None
    install(models, "supertonic-1")
    install(models, "supertonic-2")
    assert default_model_dir() == models / "supertonic-2"
    install(models, "supertonic-3")
    assert default_model_dir() == models / "supertonic-3"

    assert choose_release("supertonic-1").id == "supertonic-1"
    assert default_model_dir() == models / "supertonic-1"
    assert choice_path().read_text() == "supertonic-1\n"
    shutil.rmtree(models / "supertonic-1")  # removed: the newest installed speaks again
    assert default_model_dir() == models / "supertonic-3"
    assert chosen_release() is not None  # kept: installed again, it speaks again


def test_choosing_a_release_that_is_not_installed_says_how_to_install_it(models: Path) -> None:
    install(models, "supertonic-3")
    with pytest.raises(VoiceNotFound) as error:
        choose_release("supertonic-2")
    assert str(error.value) == (
        f"supertonic-2 is not installed in {models / 'supertonic-2'}: "
        "`audiopub voices download supertonic-2` (or Download on the "
        "Voices page) installs it, then choose it."
    )
    with pytest.raises(
        VoiceNotFound,
        match="No Supertonic release 'supertonic-9'; the "
        "releases are supertonic-3, supertonic-2, "
        "supertonic-1",
    ):
        choose_release("supertonic-9")
    assert chosen_release() is None


def test_a_damaged_choice_file_leaves_the_newest_installed_release(models: Path) -> None:
    install(models, "supertonic-2")
    choice_path().parent.mkdir(parents=True)
    choice_path().write_bytes(b"\xff\xfe not a release")
    assert chosen_release() is None
    assert default_model_dir() == models / "supertonic-2"


def test_audiopub_supertonic_dir_wins_over_the_choice(
    models: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    install(models, "supertonic-2")
    own = build_tiny_model(tmp_path / "own")
    monkeypatch.setenv(DIR.env, str(own))
    assert main(["voices", "use", "supertonic-2"]) == 0
    assert "AUDIOPUB_SUPERTONIC_DIR=" in capsys.readouterr().out
    assert default_model_dir() == own
    assert active_release() is None and languages_of(own) is None
    monkeypatch.setenv(DIR.env, str(models / "supertonic-2"))  # a release's folder all the same
    assert active_release() is not None and active_release().id == "supertonic-2"  # type: ignore[union-attr]


def test_voices_use_switches_the_engine_and_the_listing_follows(
    models: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    install(models, "supertonic-3")
    install(models, "supertonic-2", seed=1)
    assert main(["voices"]) == 0
    out = capsys.readouterr().out
    assert f"supertonic (supertonic-3 in {models / 'supertonic-3'}: en, ko, ja," in out
    assert (
        f"also installed: supertonic-2 in {models / 'supertonic-2'} "
        "(`audiopub voices use supertonic-2` speaks with it)"
    ) in out
    three = get_engine("supertonic")

    assert main(["voices", "use", "supertonic-2"]) == 0
    assert "Supertonic speaks with supertonic-2 from now on" in capsys.readouterr().out
    two = get_engine("supertonic")
    assert two is not three and two.files.onnx_dir.parent == models / "supertonic-2"  # type: ignore[attr-defined]
    assert main(["voices", "--language", "de"]) == 0  # supertonic-2 reads no German
    out = capsys.readouterr().out
    assert "supertonic (supertonic-2" in out and "F1" not in out
    assert "also installed: supertonic-3" in out

    assert main(["voices", "use", "supertonic-1"]) == 1
    assert "`audiopub voices download supertonic-1`" in capsys.readouterr().err


# --- languages -------------------------------------------------------------------------------


def test_each_release_reads_its_own_languages(models: Path) -> None:
    install(models, "supertonic-2")
    (voice, *_) = get_engine("supertonic").voices()
    assert voice.language == "multi" and voice.languages == SUPERTONIC_2
    assert voice.speaks("pt-BR") and voice.speaks("fr") and not voice.speaks("de-DE")
    assert language_note("fr-FR", voice) is None
    note = language_note("de-DE", voice)
    assert note is not None and note.startswith(
        "The book is in de-DE, the voice F1 speaks en, ko, es, pt, fr: "
    )


def test_a_folder_of_your_own_is_judged_by_its_text_front_end(tmp_path: Path) -> None:
    """Not from the catalogue: multilingual is taken as Supertonic-3's languages."""
    many = SupertonicEngine(build_tiny_model(tmp_path / "many"), use_gpu=False)
    assert many.voices()[0].languages == SUPPORTED_LANGUAGES
    assert many.voices()[0].speaks("de")
    one = SupertonicEngine(build_tiny_model(tmp_path / "one", multilingual=False), use_gpu=False)
    (voice, *_) = one.voices()
    assert (voice.language, voice.languages) == ("en", ())
    assert voice.speaks("en-GB") and not voice.speaks("fr")


def test_a_multilingual_voice_names_the_languages_it_reads() -> None:
    voice = Voice("F1", "Female 1", "multi", 44100, SUPERTONIC_2)
    assert voice.describe_languages() == "en, ko, es, pt, fr"


def test_a_release_tags_text_only_with_languages_it_reads(models: Path) -> None:
    two = SupertonicEngine(
        install(models, "supertonic-2"), use_gpu=False, languages=SUPERTONIC_2, language="de"
    )
    assert two.language == "en"  # no <de> tag: supertonic-2 never saw one
    three = SupertonicEngine(
        install(models, "supertonic-3"), use_gpu=False, languages=SUPPORTED_LANGUAGES, language="zh"
    )
    assert three.language == "na"  # Supertonic-3's tag for a language it does not know


# --- engines follow their files ----------------------------------------------------------------


def test_a_removed_model_is_not_spoken_with_and_the_next_release_takes_over(models: Path) -> None:
    install(models, "supertonic-3")
    install(models, "supertonic-2")
    three = get_engine("supertonic")
    assert get_engine("supertonic") is three  # cached while its files stay
    shutil.rmtree(models / "supertonic-3")
    two = get_engine("supertonic")
    assert two.files.onnx_dir.parent == models / "supertonic-2"  # type: ignore[attr-defined]
    shutil.rmtree(models / "supertonic-2")
    with pytest.raises(ModelMissing, match="The Supertonic model in .*supertonic-3 is missing"):
        get_engine("supertonic")


def test_a_replaced_model_is_loaded_again(tmp_path: Path) -> None:
    folder = build_tiny_model(tmp_path / "own")
    first = get_engine("supertonic", model_dir=folder)
    stamp = folder_stamp(folder)
    vocoder = folder / "onnx" / "vocoder.onnx"
    os.utime(vocoder, ns=(vocoder.stat().st_atime_ns, vocoder.stat().st_mtime_ns + 10**9))
    assert folder_stamp(folder) != stamp
    assert get_engine("supertonic", model_dir=folder) is not first
    (folder / "onnx" / "tts.json").unlink()
    assert folder_stamp(folder) is None
    with pytest.raises(ModelMissing):
        get_engine("supertonic", model_dir=folder)
