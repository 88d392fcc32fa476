"""The voice catalogue: the shipped index, finding ids, refreshing from a local Hub, listing."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from hub_repos import local_hub, piper_voice_files, serve_piper_voices, serve_supertonic
from hub_server import HubServer

from audiopub import figures
from audiopub.cli import main
from audiopub.errors import VoiceNotFound
from audiopub.tts.hub import reason as network_reason
from audiopub.tts.piper import index as piper_index
from audiopub.tts.piper.downloads import PiperDownloads
from audiopub.tts.piper.index import PiperEntry, snapshot_index
from audiopub.tts.supertonic.downloads import SupertonicDownloads, release_named
from audiopub.tts.supertonic.releases import SUPERTONIC_DEFAULT
from audiopub.voices.catalogue import refresh_catalogue

SHARED_INDEX = Path("/work/shared/catalogues/piper-voices.json")


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    yield from local_hub(tmp_path, monkeypatch)


def test_the_shipped_snapshot_is_the_published_index() -> None:
    voices = snapshot_index()
    assert len(voices) == 97
    assert len({v.language_code for v in voices.values()}) == 34
    thorsten = voices["de_DE-thorsten-medium"]
    assert (thorsten.language, thorsten.quality, thorsten.language_english) == (
        "de-DE",
        "medium",
        "German",
    )
    (model,) = [f for f in thorsten.files if f.name == "de_DE-thorsten-medium.onnx"]
    assert model.path == "de/de_DE/thorsten/medium/de_DE-thorsten-medium.onnx"
    assert (model.size, model.md5) == (63201294, "a129b00fb3078df43c96bab6c94535c0")
    assert sum(v.num_speakers > 1 for v in voices.values()) == 15


@pytest.mark.skipif(not SHARED_INDEX.is_file(), reason="the reference copy is not here")
def test_the_snapshot_is_the_reference_copy_unchanged() -> None:
    shipped = json.loads(snapshot_path().read_text("utf-8"))
    assert shipped == json.loads(SHARED_INDEX.read_text("utf-8"))


def test_ids_are_found_by_engine_prefix_bare_key_alias_and_release() -> None:
    found = PiperDownloads().index()
    assert isinstance(found.find("piper:de_DE-thorsten-medium"), PiperEntry)
    assert found.find("de_DE-thorsten-medium") == found.find("piper:de_DE-thorsten-medium")
    assert found.find("de-eva_k-x-low").key == "de_DE-eva_k-x_low"  # an old name (alias)
    # Supertonic's releases are its own catalogue's (`EngineInfo.downloads`).
    assert release_named("supertonic") is SUPERTONIC_DEFAULT
    assert release_named("supertonic-2").repo == "Supertone/supertonic-2"  # type: ignore[union-attr]
    assert release_named("supertonic:supertonic-2") is release_named("supertonic-2")
    with pytest.raises(VoiceNotFound, match="Did you mean piper:|de_DE-thorsten-medium"):
        found.find("piper:de_DE-thorsten-meduim")
    with pytest.raises(VoiceNotFound, match="Unknown engine"):
        found.find("espeak:de")


def test_language_filter_takes_codes_tags_and_names() -> None:
    entry = PiperDownloads().index().find("de_DE-thorsten-medium")
    for wanted in ("de", "DE_de", "de-DE", "German", "deutsch"):
        assert piper_index.entry_matches(entry, wanted), wanted
    assert not piper_index.entry_matches(entry, "fr")
    # Supertonic's releases, as its own catalogue lists them for German: not the English-only.
    listing = SupertonicDownloads().listing("de", ask_hub=False, sizes={})
    assert listing is not None
    assert [line.split()[0] for line in listing.lines] == ["supertonic-3"]


def test_voices_all_refreshes_from_the_hub_and_keeps_the_index(
    hub: HubServer, capsys: pytest.CaptureFixture[str]
) -> None:
    serve_piper_voices(
        hub,
        {
            key: piper_voice_files(key)
            for key in ("de_DE-newvoice-medium", "de_DE-newvoice-low", "fr_FR-autre-high")
        },
    )
    assert main(["voices", "--all", "--language", "de"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0] == "Piper voices (2, from the Hub's voice index):"
    assert "piper:de_DE-newvoice-low" in lines[1] and "piper:de_DE-newvoice-medium" in lines[2]
    assert "fr_FR" not in captured.out and "de_DE-thorsten" not in captured.out
    assert "supertonic-3" in captured.out and "supertonic-1" not in captured.out  # no German
    assert captured.err == ""
    # Kept for offline use: the newest known index, not the shipped one.
    offline = PiperDownloads().index()  # what a later process finds
    assert set(offline.entries) == {
        "de_DE-newvoice-medium",
        "de_DE-newvoice-low",
        "fr_FR-autre-high",
    }
    assert "last fetched" in offline.source


def test_voices_all_falls_back_to_the_snapshot_when_the_hub_is_unreachable(
    unreachable_hub: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["voices", "list", "--all", "--language", "de"]) == 0
    captured = capsys.readouterr()
    assert captured.err.startswith(
        f"Offline: the Hugging Face Hub at {unreachable_hub} can't be reached (Connection refused)"
    )
    assert "shipped with Audiopub" in captured.err and len(captured.err.splitlines()) == 1
    assert "[Errno" not in captured.err
    assert "piper:de_DE-thorsten-medium" in captured.out
    assert "Piper voices (9, from the voice index shipped with Audiopub)" in captured.out


def test_supertonic_sizes_come_from_the_hub_when_it_answers(
    hub: HubServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    serve_piper_voices(hub, {"de_DE-newvoice-low": piper_voice_files("de_DE-newvoice-low")})
    served = serve_supertonic(
        hub, SUPERTONIC_DEFAULT.repo, SUPERTONIC_DEFAULT.revision, tmp_path / "built"
    )
    found = refresh_catalogue()
    wanted = sum(len(data) for path, data in served.items() if SUPERTONIC_DEFAULT.wants(path))
    assert found.sizes == {"supertonic-3": wanted}  # the others are not served
    assert wanted < sum(len(data) for data in served.values())  # samples are left out
    assert main(["voices", "--all", "--language", "de"]) == 0
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if "supertonic-3" in ln]
    assert line.rstrip().endswith(figures.size(wanted))


def test_index_keys_that_are_not_file_names_are_skipped() -> None:
    entry = json.loads(snapshot_path().read_text("utf-8"))["de_DE-thorsten-medium"]
    index = {
        "../../evil": entry,
        "de_DE-thorsten-medium": entry,
        ".hidden": entry,
        "a\\b": entry,
        "pt_PT-tugão-medium": entry,
    }
    assert list(piper_index.parse_piper_index(index)) == [
        "de_DE-thorsten-medium",
        "pt_PT-tugão-medium",
    ]


def test_a_hub_index_that_is_not_an_index_falls_back_too(hub: HubServer) -> None:
    hub.add_repo(piper_index.PIPER_REPO, {"voices.json": b'{"x": {"key": 1}}'})
    found = refresh_catalogue()
    assert found.note is not None and "voices.json format" in found.note
    assert len(PiperDownloads().index().entries) == 97


def test_an_unknown_language_is_a_clear_error(
    unreachable_hub: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["voices", "--all", "--language", "tlh"]) == 1
    assert "audiopub: error: No voice for language 'tlh'" in capsys.readouterr().err


def test_voices_lists_where_each_installed_voice_came_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from voices import add_voice_with_rate

    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    add_voice_with_rate(tmp_path / "models" / "piper", "fr_FR-mine-low", 16000)
    assert main(["voices"]) == 0
    out = capsys.readouterr().out
    assert "en_US-joe-medium             en-US    built in" in out
    assert "fr_FR-mine-low               fr-FR    added by you" in out
    assert main(["voices", "--language", "fr"]) == 0
    out = capsys.readouterr().out
    assert "fr_FR-mine-low" in out and "en_US-joe-medium" not in out


def snapshot_path() -> Path:
    return Path(piper_index.__file__).with_name(piper_index.SNAPSHOT)


@pytest.fixture
def unreachable_hub(monkeypatch: pytest.MonkeyPatch) -> str:
    """HF_ENDPOINT at a port where nothing listens."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    monkeypatch.setenv("HF_ENDPOINT", url)
    return url


def test_a_failed_name_lookup_is_said_in_words() -> None:
    """What an offline computer gets from the network stack: "[Errno -2] Name or service not
    known", wrapped by httpx; a person is told the computer may be offline."""
    try:
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except socket.gaierror as exc:
            raise httpx2.ConnectError("[Errno -2] Name or service not known") from exc
    except httpx2.ConnectError as exc:
        said = network_reason(exc)
    assert said == "its name could not be looked up: is this computer offline?"
    assert network_reason(ConnectionRefusedError(111, "Connection refused")) == "Connection refused"


def test_a_voice_for_a_language_comes_from_the_shipped_lists_installed_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from voices import add_voice_with_rate

    from audiopub.voices.suggest import language_name, voices_for

    monkeypatch.setenv("AUDIOPUB_MODELS_DIR", str(tmp_path / "models"))
    piper, kokoro = voices_for("fr-FR")  # medium quality, one speaker; then Kokoro's
    assert (piper.voice, piper.download, piper.installed) == (
        "fr_FR-siwis-medium",
        "piper:fr_FR-siwis-medium",
        False,
    )
    assert (kokoro.engine, kokoro.voice, kokoro.download) == ("kokoro", "ff_siwis", "kokoro")
    add_voice_with_rate(tmp_path / "models" / "piper", "fr_FR-gilles-low", 16000)
    piper, _ = voices_for("fr")
    assert piper.voice == "fr_FR-gilles-low" and piper.installed
    assert piper.describe() == "piper:fr_FR-gilles-low (installed: --voice fr_FR-gilles-low)"
    # An installed voice of the language before one of its region to download.
    assert [s.voice for s in voices_for("en-GB")] == ["en_US-joe-medium", "bf_alice"]
    assert [s.engine for s in voices_for("ja")] == ["kokoro"] and voices_for("xx") == []
    assert language_name("fr-CA") == "French" and language_name("xx") == "xx"
