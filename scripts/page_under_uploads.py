"""How fast the convert page answers while many tabs upload books at once; prints figures.

Starts `audiopub serve` on 127.0.0.1 with a fresh data dir, opens N tabs as a browser would
(GET /, then NiceGUI's socket.io connection), uploads the same EPUB from all of them at the
same moment, and meanwhile asks for `/` every 0.2 s, timing each answer. It waits until every
tab shows its book, then prints the page's latency (alone, and during the uploads: median,
p95, max) and the server's resident memory.

    python scripts/page_under_uploads.py BOOK.epub [--tabs 20] [--port 8765] [--wait 600]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import aiohttp
import socketio

UPLOAD_URL = re.compile(r'"url":"(/_nicegui/client/([0-9a-f-]+)/upload/\d+)"')
PROBE_EVERY_S = 0.2


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


class Tab:
    """One browser tab: its page, its socket, and whether its book is shown."""

    def __init__(self, session: aiohttp.ClientSession, base: str, title: str) -> None:
        self.session, self.base, self.title = session, base, title
        self.shown = asyncio.Event()
        self.socket = socketio.AsyncClient(reconnection=False)
        self.socket.on("*", self._message)
        self.upload = ""

    async def _message(self, event: str, data: object) -> None:
        if self.title in json.dumps(data):
            self.shown.set()

    async def open(self) -> None:
        async with self.session.get(self.base) as response:
            page = await response.text()
        match = UPLOAD_URL.search(page)
        if match is None:
            raise SystemExit("no upload element found in the page")
        self.upload, client_id = match.group(1), match.group(2)
        query = (f"client_id={client_id}&next_message_id=0&implicit_handshake=true"
                 f"&document_id={uuid.uuid4()}&tab_id={uuid.uuid4()}")
        await self.socket.connect(f"{self.base}?{query}", transports=["websocket"],
                                  socketio_path="/_nicegui_ws/socket.io")

    async def send(self, book: Path) -> None:
        form = aiohttp.FormData()
        form.add_field("file", book.read_bytes(), filename=book.name,
                       content_type="application/epub+zip")
        async with self.session.post(self.base.rstrip("/") + self.upload, data=form) as response:
            response.raise_for_status()


async def probe(session: aiohttp.ClientSession, base: str, times: list[float],
                stop: asyncio.Event) -> None:
    while not stop.is_set():
        began = time.perf_counter()
        async with session.get(base) as response:
            await response.read()
        times.append(time.perf_counter() - began)
        await asyncio.sleep(PROBE_EVERY_S)


def summary(times: list[float]) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (f"n={len(times)} median={statistics.median(times):.2f}s p95={p95:.2f}s "
            f"max={ordered[-1]:.2f}s")


async def measure(base: str, book: Path, tabs: int, title: str, pid: int,
                  wait_s: float) -> None:
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(timeout=timeout) as session:
        quiet: list[float] = []
        stop = asyncio.Event()
        task = asyncio.create_task(probe(session, base, quiet, stop))
        await asyncio.sleep(3)
        stop.set()
        await task
        print(f"GET / alone:            {summary(quiet)}")
        print(f"server RSS before:      {rss_mb(pid, False):.0f} MB, "
              f"{rss_mb(pid):.0f} MB with its child processes")

        opened = [Tab(session, base, title) for _ in range(tabs)]
        await asyncio.gather(*(tab.open() for tab in opened))
        busy: list[float] = []
        stop = asyncio.Event()
        task = asyncio.create_task(probe(session, base, busy, stop))
        began = time.perf_counter()
        await asyncio.gather(*(tab.send(book) for tab in opened))
        try:
            await asyncio.wait_for(asyncio.gather(*(tab.shown.wait() for tab in opened)), wait_s)
        except asyncio.TimeoutError:
            shown = sum(tab.shown.is_set() for tab in opened)
            print(f"after {wait_s:.0f}s only {shown} of {tabs} tabs show their book")
        took = time.perf_counter() - began
        stop.set()
        await task
        print(f"{tabs} uploads shown in:   {took:.1f}s")
        print(f"GET / during uploads:   {summary(busy)}")
        print(f"server RSS after:       {rss_mb(pid, False):.0f} MB, "
              f"{rss_mb(pid):.0f} MB with its child processes")
        for tab in opened:
            await tab.socket.disconnect()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("book", type=Path)
    parser.add_argument("--tabs", type=int, default=20)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--wait", type=float, default=600, help="seconds to wait for the books")
    parser.add_argument("--title", help="text the book card shows (default: the book's title)")
    args = parser.parse_args()
    if args.title is None:
        from audiopub.book.epub_reader import read_epub
        args.title = read_epub(args.book).title
    base = f"http://127.0.0.1:{args.port}/"
    with tempfile.TemporaryDirectory() as data:
        env = {**os.environ, "AUDIOPUB_DATA_DIR": data}
        server = subprocess.Popen([sys.executable, "-m", "audiopub", "serve", "--host",
                                   "127.0.0.1", "--port", str(args.port), "--no-browser"],
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait_up(base)
            asyncio.run(measure(base, args.book, args.tabs, args.title, server.pid,
                                args.wait))
        finally:
            server.terminate()
            server.wait(30)


def _wait_up(base: str) -> None:
    import urllib.request
    for _ in range(300):
        try:
            with urllib.request.urlopen(base, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit("the server did not start")


if __name__ == "__main__":
    main()
