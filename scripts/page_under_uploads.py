"""How fast the convert page answers while many tabs upload books at once, and what the
server keeps afterwards; prints figures.

Starts `audiopub serve` on 127.0.0.1 with a fresh data dir, opens N tabs as a browser would
(GET /, then NiceGUI's socket.io connection), uploads the same EPUB from all of them at the
same moment, and meanwhile asks for `/` every 0.2 s, timing each answer. It waits until every
tab shows its book, closes the tabs, and does that `--rounds` times. It prints the page's
latency (alone, and during the uploads: median, p95, max), the sockets that dropped before
their tab showed its book, and the server's resident memory after each round (once the
server has forgotten the closed tabs) and after `--idle` seconds with no tab open; the last
line sums them up. The server runs the `audiopub` Python finds: `PYTHONPATH=TREE` measures
another checkout's.

Without BOOK it builds a 5 MB one (`--mb`): the text of Leaves of Grass (376 chapters, from
/work/shared/testdata/epubs or AUDIOPUB_TESTDATA) and a cover of random pixels (many EPUBs
are this large because of their pictures).

    python scripts/page_under_uploads.py [BOOK.epub] [--tabs 20] [--rounds 3] [--idle 60]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import uuid
import zlib
from html import escape
from pathlib import Path

import aiohttp
import socketio

UPLOAD_URL = re.compile(r'"url":"(/_nicegui/client/([0-9a-f-]+)/upload/\d+)"')
PROBE_EVERY_S = 0.2
TESTDATA = Path(os.environ.get("AUDIOPUB_TESTDATA", "/work/shared/testdata")) / "epubs"
TEXT_SOURCE = "pg1322-leaves-of-grass-calibre.epub"
START_TIMEOUT_S = 300.0  # a loaded machine takes minutes to import the app
# The server loads its engines after it answers: memory is measured once it has settled.
SETTLED_MB = 2.0
SETTLED_FOR_S = 5.0
SETTLE_TIMEOUT_S = 120.0


def rss_mb(pid: int, children: bool = True) -> float:
    """Resident memory of `pid` (and its children), in MB (Linux /proc)."""
    total = 0
    for p in [pid, *(_children(pid) if children else [])]:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except FileNotFoundError:
            continue
    return total / 1e6


def _children(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except FileNotFoundError:
        return []
    kids = [int(p) for p in found]
    return kids + [g for k in kids for g in _children(k)]


def noise_png(side: int) -> bytes:
    """A PNG of random pixels, which no compression shrinks."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + os.urandom(side * 3) for _ in range(side))
    header = struct.pack(">IIBBBBB", side, side, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 1))
        + chunk(b"IEND", b"")
    )


def build_book(path: Path, megabytes: float) -> Path:
    """Leaves of Grass' text with a cover of noise, `megabytes` in all."""
    from audiopub.bench.texts import write_simple_epub
    from audiopub.book.epub.reader import read_epub

    source = read_epub(TESTDATA / TEXT_SOURCE)
    chapters = [(escape(c.title), [escape(p) for p in c.paragraphs]) for c in source.chapters]
    write_simple_epub(
        path, chapters, identifier="measure", title=source.title, author=source.author
    )
    room = megabytes * 1e6 - path.stat().st_size
    side = int((max(room, 0) / 3) ** 0.5)
    return write_simple_epub(
        path,
        chapters,
        identifier="measure",
        title=source.title,
        author=source.author,
        cover=noise_png(side) if side else None,
    )


class Tab:
    """One browser tab: its page, its socket, whether its book is shown, whether it dropped."""

    def __init__(self, session: aiohttp.ClientSession, base: str, title: str) -> None:
        self.session, self.base, self.title = session, base, title
        self.shown = asyncio.Event()
        self.ended = asyncio.Event()  # shown, dropped, or its upload failed: nothing to wait for
        self.dropped = False
        self.refused = ""  # why the upload itself failed, if it did
        self.closing = False
        self.socket = socketio.AsyncClient(reconnection=False)
        self.socket.on("*", self._message)
        self.socket.on("disconnect", self._disconnected)
        self.upload = ""

    async def _message(self, event: str, data: object) -> None:
        if self.title in json.dumps(data):
            self.shown.set()
            self.ended.set()

    async def _disconnected(self, *reason: object) -> None:
        if not self.closing and not self.shown.is_set():
            self.dropped = True
            self.ended.set()
            print(f"  a socket dropped ({', '.join(map(str, reason)) or 'no reason given'})")

    async def open(self) -> None:
        async with self.session.get(self.base) as response:
            page = await response.text()
        match = UPLOAD_URL.search(page)
        if match is None:
            raise SystemExit("no upload element found in the page")
        self.upload, client_id = match.group(1), match.group(2)
        query = (
            f"client_id={client_id}&next_message_id=0&implicit_handshake=true"
            f"&document_id={uuid.uuid4()}&tab_id={uuid.uuid4()}"
        )
        try:
            await self.socket.connect(
                f"{self.base}?{query}",
                transports=["websocket"],
                socketio_path="/_nicegui_ws/socket.io",
            )
        except socketio.exceptions.ConnectionError as exc:  # a server too busy to answer
            self.dropped = True
            self.ended.set()
            print(f"  a socket did not connect ({exc})")

    async def send(self, book: Path) -> None:
        form = aiohttp.FormData()
        form.add_field(
            "file", book.read_bytes(), filename=book.name, content_type="application/epub+zip"
        )
        try:
            async with self.session.post(
                self.base.rstrip("/") + self.upload, data=form
            ) as response:
                response.raise_for_status()
        except aiohttp.ClientError as exc:
            self.refused = str(exc) or type(exc).__name__
            self.ended.set()

    async def close(self) -> None:
        self.closing = True
        await self.socket.disconnect()


async def probe(
    session: aiohttp.ClientSession, base: str, times: list[float], stop: asyncio.Event
) -> None:
    while not stop.is_set():
        began = time.perf_counter()
        async with session.get(base) as response:
            await response.read()
        times.append(time.perf_counter() - began)
        await asyncio.sleep(PROBE_EVERY_S)


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"n={len(times)} median={statistics.median(times):.2f}s p95={p95:.2f}s "
        f"max={ordered[-1]:.2f}s"
    )


def closed_tab_gone_s() -> float:
    """How long after a tab closed the server has forgotten it (and let go of what it held)."""
    from audiopub.ui.app import RECONNECT_TIMEOUT_S

    return RECONNECT_TIMEOUT_S + 5.0


def memory(pid: int) -> str:
    return f"{rss_mb(pid, False):.0f} MB, {rss_mb(pid):.0f} MB with its child processes"


async def one_round(
    session: aiohttp.ClientSession, base: str, book: Path, tabs: int, title: str, wait_s: float
) -> tuple[list[float], int]:
    """`tabs` tabs upload `book` at once and wait for it; the page's answer times meanwhile,
    and how many sockets dropped."""
    opened = [Tab(session, base, title) for _ in range(tabs)]
    await asyncio.gather(*(tab.open() for tab in opened))
    busy: list[float] = []
    stop = asyncio.Event()
    task = asyncio.create_task(probe(session, base, busy, stop))
    began = time.perf_counter()
    await asyncio.gather(*(tab.send(book) for tab in opened))
    try:
        await asyncio.wait_for(asyncio.gather(*(tab.ended.wait() for tab in opened)), wait_s)
    except asyncio.TimeoutError:
        pass
    took = time.perf_counter() - began
    stop.set()
    await task
    shown = sum(tab.shown.is_set() for tab in opened)
    dropped = sum(tab.dropped for tab in opened)
    refused = [tab.refused for tab in opened if tab.refused]
    print(
        f"  {shown} of {tabs} tabs show their book after {took:.1f}s; "
        f"{dropped} sockets dropped before; {len(refused)} uploads failed"
    )
    for reason in sorted(set(refused)):
        print(f"  an upload failed: {reason}")
    print(f"  GET / during uploads: {summary(busy)}")
    for tab in opened:
        await tab.close()
    return busy, dropped


async def settled(pid: int) -> None:
    """Until the server's memory has stopped growing (it loads its engines once it is up)."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    last = rss_mb(pid, False)
    while time.monotonic() < deadline:
        await asyncio.sleep(SETTLED_FOR_S)
        now = rss_mb(pid, False)
        if abs(now - last) < SETTLED_MB:
            return
        last = now


async def measure(
    base: str,
    book: Path,
    tabs: int,
    title: str,
    pid: int,
    rounds: int,
    wait_s: float,
    idle_s: float,
) -> None:
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        quiet: list[float] = []
        stop = asyncio.Event()
        task = asyncio.create_task(probe(session, base, quiet, stop))
        await asyncio.sleep(3)
        stop.set()
        await task
        print(f"GET / alone:             {summary(quiet)}")
        await settled(pid)
        print(f"server RSS before:       {memory(pid)}")
        figures = [f"start {rss_mb(pid, False):.0f}"]
        every: list[float] = []
        dropped = 0
        for number in range(1, rounds + 1):
            print(f"round {number}: {tabs} uploads of {book.stat().st_size / 1e6:.1f} MB")
            busy, lost = await one_round(session, base, book, tabs, title, wait_s)
            every, dropped = every + busy, dropped + lost
            await asyncio.sleep(closed_tab_gone_s())
            print(f"  server RSS after:      {memory(pid)}")
            figures.append(f"round {number} {rss_mb(pid, False):.0f}")
        print(f"GET / during all rounds: {summary(every)}")
        await asyncio.sleep(idle_s)
        print(f"server RSS {idle_s:.0f}s idle:    {memory(pid)}")
        figures.append(f"{idle_s:.0f} s idle {rss_mb(pid, False):.0f}")
        print(f"in all: server RSS (MB) {', '.join(figures)}; {dropped} sockets dropped")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("book", type=Path, nargs="?", help="default: a 5 MB book, built")
    parser.add_argument("--mb", type=float, default=5.0, help="size of the book built")
    parser.add_argument("--tabs", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle", type=float, default=60, help="seconds idle at the end")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--wait", type=float, default=600, help="seconds to wait for the books")
    parser.add_argument("--title", help="text the book card shows (default: the book's title)")
    parser.add_argument("--log", type=Path, help="write the server's output here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        book = args.book or build_book(Path(data) / "five-mb.epub", args.mb)
        if args.title is None:
            from audiopub.book.epub.reader import read_epub

            args.title = read_epub(book).title
        base = f"http://127.0.0.1:{args.port}/"
        env = {**os.environ, "AUDIOPUB_DATA_DIR": str(Path(data) / "data")}
        log = args.log.open("wb") if args.log else subprocess.DEVNULL
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "audiopub",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(args.port),
                "--no-browser",
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_up(base)
            asyncio.run(
                measure(
                    base, book, args.tabs, args.title, server.pid, args.rounds, args.wait, args.idle
                )
            )
        finally:
            server.terminate()
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


def _wait_up(base: str) -> None:
    import urllib.request

    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(base, timeout=5):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("the server did not start")


if __name__ == "__main__":
    main()
