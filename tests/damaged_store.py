"""Job stores damaged the way disks and people damage them, for the tests of what Audiopub
says then (tests/test_store_damage.py, tests/test_ui_store_damage.py).

A data directory with one finished book is made once by a real conversion (`made_data_dir`)
and copied into each test's own; the damage is done to the copy with the same byte operations
as by hand:

    head -c 16384 /dev/urandom | dd of=jobs.sqlite3 bs=4096 seek=2 conv=notrunc   # the middle
    truncate -s 1000 jobs.sqlite3                                                  # the header
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import closing, contextmanager
from pathlib import Path

import pytest
from epub_factory import build_epub

from audiopub.cli import main

STORE = "jobs.sqlite3"
BOOK_NAME = "0123456789abcdef0123456789abcdef.m4b"  # as the web app names its books
TITLE = "A Finished Book"


def made_data_dir(folder: Path, models_dir: Path) -> Path:
    """`folder/data`: a store holding one finished job, its book in `library/` as the web app
    keeps them, made by `audiopub convert` (with the voices of `models_dir`, in one process);
    and the book's EPUB at `folder/book.epub`."""
    data = folder / "data"
    epub = build_epub(
        folder / "book.epub",
        [
            ("One", ["It was a bright cold day in April."]),
            ("Two", ["The clocks struck thirteen.", "Nobody on the platform moved."]),
        ],
        title=TITLE,
        author="Ann Author",
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AUDIOPUB_MODELS_DIR", str(models_dir))
        patch.setenv("AUDIOPUB_CPU_WORKERS", "1")
        patch.setenv("AUDIOPUB_DATA_DIR", str(data))
        assert main(["convert", str(epub), "-o", str(data / "library" / BOOK_NAME)]) == 0
    return data


def copy_data_dir(made: Path, target: Path) -> Path:
    shutil.copytree(made, target, dirs_exist_ok=True)
    return target / STORE


def damage_middle(store: Path) -> None:
    """16 KiB of noise from the third 4 KiB page on, the file's length unchanged."""
    with open(store, "r+b") as file:
        file.seek(2 * 4096)
        file.write(random.Random(2).randbytes(16384))
    with closing(sqlite3.connect(f"file:{store}?immutable=1", uri=True)) as conn:
        try:
            verdict = conn.execute("PRAGMA quick_check").fetchall()
        except sqlite3.DatabaseError:
            verdict = [("damaged",)]
    assert verdict != [("ok",)], "the noise must land on pages the store uses"


def damage_header(store: Path) -> None:
    """The file cut short inside its first page."""
    os.truncate(store, 1000)


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` can't be written to for as long as the block lasts. Root writes past the mode
    bits, so there the folder is made immutable (chattr) instead; where neither holds, the
    test is skipped, since a read-only folder can't be made."""
    folder.chmod(0o555)
    immutable = False
    try:
        if os.access(folder, os.W_OK) or os.geteuid() == 0:
            immutable = (
                subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
            )
            if not immutable:
                pytest.skip("a read-only folder can't be made here (root, without chattr)")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(0o755)
