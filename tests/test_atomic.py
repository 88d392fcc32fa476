"""Tests for audiopub.atomic: a file appears complete or not at all, and crash leftovers go."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from audiopub.atomic import TEMP_MARK, atomic_write, remove_stale_temp_files


def test_the_file_appears_only_when_the_block_ends(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "book.m4b"
    with atomic_write(path) as temp:
        assert temp.parent == path.parent and temp.name.startswith(f"book.m4b{TEMP_MARK}")
        temp.write_bytes(b"complete")
        assert not path.exists()
    assert path.read_bytes() == b"complete"
    assert [p.name for p in path.parent.iterdir()] == ["book.m4b"]  # no temp file left


def test_an_existing_file_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text("old")
    with atomic_write(path) as temp:
        temp.write_text("new")
        assert path.read_text() == "old"
    assert path.read_text() == "new"


def test_an_exception_removes_the_temp_file_and_keeps_the_old_one(tmp_path: Path) -> None:
    path = tmp_path / "chapter.wav"
    path.write_bytes(b"old")
    with pytest.raises(KeyError, match="engine blew up"), atomic_write(path) as temp:
        temp.write_bytes(b"half")
        raise KeyError("engine blew up")
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["chapter.wav"]


def test_an_exception_before_anything_is_written_leaves_nothing(tmp_path: Path) -> None:
    path = tmp_path / "chapter.wav"
    with pytest.raises(RuntimeError), atomic_write(path):
        raise RuntimeError("stopped")
    assert list(tmp_path.iterdir()) == []


def test_a_block_that_writes_no_file_fails(tmp_path: Path) -> None:
    path = tmp_path / "book.m4b"
    path.write_bytes(b"old")
    with pytest.raises(FileNotFoundError), atomic_write(path):
        pass
    assert path.read_bytes() == b"old"


def test_each_write_has_its_own_temp_file(tmp_path: Path) -> None:
    path = tmp_path / "chunk.wav"
    with atomic_write(path) as first, atomic_write(path) as second:
        assert first != second
        first.write_bytes(b"1")
        second.write_bytes(b"2")
    assert path.read_bytes() == b"1"  # the outer block ends last
    assert [p.name for p in tmp_path.iterdir()] == ["chunk.wav"]


def test_a_folder_that_refuses_fsync_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_fsync = os.fsync
    refused: list[int] = []

    def fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            refused.append(fd)
            raise OSError("fsync not supported on this directory")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    path = tmp_path / "x.bin"
    with atomic_write(path) as temp:
        temp.write_bytes(b"data")
    assert path.read_bytes() == b"data"
    assert len(refused) == (1 if os.name == "posix" else 0)


def test_remove_stale_temp_files(tmp_path: Path) -> None:
    keep = ["a.wav", "notes.tmp-draft", "a.wav.tmp-12-zz", "b.wav.tmp-1-ab.wav"]
    for name in keep:
        (tmp_path / name).write_bytes(b"kept")
    stale = [tmp_path / "a.wav.tmp-123-abcd", tmp_path / "b.m4b.tmp-9-0f1e2d3c"]
    for path in stale:
        path.write_bytes(b"partial")
    (tmp_path / "dir.tmp-1-ab").mkdir()  # only files are removed

    assert sorted(remove_stale_temp_files(tmp_path)) == stale
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*keep, "dir.tmp-1-ab"])
    assert remove_stale_temp_files(tmp_path / "missing") == []


def test_remove_stale_temp_files_of_one_destination(tmp_path: Path) -> None:
    mine = tmp_path / "0001.wav.tmp-123-abcd"
    others = [tmp_path / "0002.wav.tmp-123-abcd", tmp_path / "x0001.wav.tmp-1-ab"]
    for path in [mine, *others]:
        path.write_bytes(b"partial")
    assert remove_stale_temp_files(tmp_path, "0001.wav") == [mine]
    assert sorted(tmp_path.iterdir()) == sorted(others)
