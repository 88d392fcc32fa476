"""The PDF reader's process keeps its limits itself: a circle of references is refused at once,
its CPU limit holds in the process, and it never outlives the process that started it (SIGTERM
or SIGKILL) nor the book's file (an upload whose tab closed)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import psutil
import pytest

from audiopub import settings
from audiopub.book.formats import pdf
from audiopub.book.reading import read_book
from audiopub.errors import BadBook

pytestmark = pytest.mark.timeout(120)

_RUN = subprocess.run
GONE_WITHIN_S = 10.0  # the reader looks for its parent and its file four times a second
STARTED_WITHIN_S = 30.0


def _pdf(objects: list[bytes]) -> bytes:
    """A PDF of these objects (numbered from 1; the first is the catalogue), with its xref."""
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def _page(content: int, font: int) -> bytes:
    return b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R " % content + (
        b"/Resources << /Font << /F1 %d 0 R >> >> >>" % font
    )


FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def looping_pdf() -> bytes:
    """A page whose content's /Length is object 6, which is object 7, which is object 6."""
    content = b"BT /F1 12 Tf 72 720 Td (Hello) Tj ET"
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
            _page(4, 5),
            b"<< /Length 6 0 R >>\nstream\n" + content + b"\nendstream",
            FONT,
            b"7 0 R",
            b"6 0 R",
        ]
    )


def busy_pdf(pages: int = 400) -> bytes:
    """A small file that takes pdfminer minutes: `pages` pages that show one content stream
    of 20,000 characters, each placed on its own."""
    ops = b"".join(b"1 0 0 1 %d %d Tm (x) Tj " % (i % 500, i % 700) for i in range(20_000))
    stream = zlib.compress(b"BT /F1 9 Tf " + ops + b"ET", 9)
    kids = b" ".join(b"%d 0 R" % (5 + n) for n in range(pages))
    return _pdf(
        [
            b"<< /Type /Catalog /Pages 2 0 R >>",
            b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, pages),
            b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream)
            + stream
            + b"\nendstream",
            FONT,
            *(_page(3, 4) for _ in range(pages)),
        ]
    )


def _page_reader(parent: int) -> psutil.Process | None:
    """The PDF page reader `parent` started (directly or below it), once it runs."""
    try:
        children = psutil.Process(parent).children(recursive=True)
    except psutil.NoSuchProcess:
        return None
    return next((c for c in children if "pdf_pages.py" in " ".join(_cmdline(c))), None)


def _cmdline(process: psutil.Process) -> list[str]:
    try:
        return process.cmdline()
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return []


def _wait_for(find, within: float):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if (found := find()) is not None:
            return found
        time.sleep(0.05)
    raise AssertionError("not found in time")


def _gone(process: psutil.Process, within: float) -> bool:
    try:
        process.wait(timeout=within)
    except psutil.TimeoutExpired:
        return False
    return True


def test_references_in_a_circle_are_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "loop.pdf"
    path.write_bytes(looping_pdf())
    started = time.monotonic()
    with pytest.raises(BadBook, match=r"loop\.pdf: the PDF is damaged .*refer to each other"):
        read_book(path)
    # Followed, the circle ran until the 600 s limit; refused, it costs a process's start.
    assert time.monotonic() - started < 60


def test_its_cpu_limit_holds_in_the_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "busy.pdf"
    path.write_bytes(busy_pdf())
    # The parent's own clock is not the one that stops it: only its CPU limit.
    monkeypatch.setattr(pdf.subprocess, "run", _run_without_timeout)
    monkeypatch.setattr(settings, "PDF_MAX_SECONDS", 2.0)
    with pytest.raises(BadBook, match=r"busy\.pdf: refused: reading its pages took over 2 s"):
        read_book(path)


def _run_without_timeout(*args, timeout: float, **kwargs):  # type: ignore[no-untyped-def]
    return _RUN(*args, **kwargs)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_the_page_reader_ends_with_its_parent(tmp_path: Path, sig: signal.Signals) -> None:
    path = tmp_path / "busy.pdf"
    path.write_bytes(busy_pdf())
    command = subprocess.Popen(
        [sys.executable, "-m", "audiopub", "chapters", str(path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        reader = _wait_for(lambda: _page_reader(command.pid), STARTED_WITHIN_S)
        command.send_signal(sig)
        command.wait(timeout=30)
        assert _gone(reader, GONE_WITHIN_S), "the PDF page reader outlived its parent"
    finally:
        command.kill()
        command.wait()


def test_the_page_reader_stops_when_the_file_goes(tmp_path: Path) -> None:
    path = tmp_path / "busy.pdf"
    path.write_bytes(busy_pdf())
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            read_book(path)
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            outcome.append(exc)

    thread = threading.Thread(target=read)
    thread.start()
    reader = _wait_for(lambda: _page_reader(os.getpid()), STARTED_WITHIN_S)
    path.unlink()  # the upload of a tab that closed
    assert _gone(reader, GONE_WITHIN_S), "the PDF page reader read on without its file"
    thread.join(timeout=30)
    assert len(outcome) == 1 and isinstance(outcome[0], BadBook)
    assert "went away while it was read" in str(outcome[0])
