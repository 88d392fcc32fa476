"""How many bytes a too-big upload puts on disk before the server refuses it.

Run: PYTHONPATH=. python scripts/upload_disk_use.py [--mb 300] [--chunked]

Starts `audiopub serve` on a free 127.0.0.1 port with a private data dir and TMPDIR, reads a
page's upload route from its HTML and POSTs a file of `--mb` megabytes to it directly, as a
client that ignores the page's limit would (with a Content-Length, or `--chunked` without one).
While it sends, it samples the bytes on disk in the server's temporary folder and the data
dir's uploads folder, counting the files the server holds open after deleting them (Python's
spooled temporary files have no name), and prints the peak, what was left afterwards, the
HTTP status and how long the answer took. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = b"\0" * (1 << 20)
SAMPLE_EVERY_S = 0.05


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def bytes_on_disk(pid: int, folders: list[Path]) -> int:
    """Allocated bytes of the files in `folders`, and of files `pid` holds open there, once each."""
    seen: dict[tuple[int, int], int] = {}
    for folder in folders:
        for path in folder.rglob("*") if folder.is_dir() else ():
            try:
                info = path.lstat()
            except FileNotFoundError:
                continue
            if path.is_file():
                seen[(info.st_dev, info.st_ino)] = info.st_blocks * 512
    fd_dir = Path(f"/proc/{pid}/fd")
    for fd in fd_dir.iterdir() if fd_dir.is_dir() else ():
        try:
            target = os.readlink(fd)
            info = fd.stat()  # follows the link: works for deleted files too
        except (FileNotFoundError, PermissionError):
            continue
        if (
            any(target.startswith(str(folder)) for folder in folders)
            and (info.st_mode & 0o170000) == 0o100000
        ):
            seen[(info.st_dev, info.st_ino)] = info.st_blocks * 512
    return sum(seen.values())


def _send(port: int, path: str, megabytes: int, chunked: bool) -> tuple[str, float]:
    boundary = "audiopubmeasure"
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
        f'filename="big.epub"\r\nContent-Type: application/epub+zip\r\n\r\n'
    ).encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    length = len(head) + megabytes * len(BLOCK) + len(tail)
    framing = "Transfer-Encoding: chunked" if chunked else f"Content-Length: {length}"
    request = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: multipart/form-data; boundary={boundary}\r\n{framing}\r\n\r\n"
    )
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=120) as sock:
        sock.sendall(request.encode())
        try:
            for piece in [head] + [BLOCK] * megabytes + [tail]:
                sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            if chunked:
                sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed before the whole body was sent
        try:
            status = sock.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace")
        except ConnectionResetError:
            status = "(connection reset, no answer read)"
    return status or "(no answer)", time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=int, default=300, help="the file's size in MB (2**20)")
    parser.add_argument("--chunked", action="store_true", help="send no Content-Length")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="audiopub-upload-") as scratch:
        base = Path(scratch)
        tmp, data = base / "tmp", base / "data"
        tmp.mkdir()
        port = _free_port()
        env = {
            **os.environ,
            "TMPDIR": str(tmp),
            "AUDIOPUB_DATA_DIR": str(data),
            "PYTHONPATH": str(ROOT),
        }
        log = (base / "server.log").open("wb")
        server = subprocess.Popen(
            [sys.executable, "-m", "audiopub", "serve", "--port", str(port), "--no-browser"],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            html = ""
            for _ in range(300):
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as reply:
                        html = reply.read().decode()
                    break
                except OSError:
                    time.sleep(0.2)
            match = re.search(r"/_nicegui/client/[0-9a-f-]+/upload/\d+", html)
            if match is None:
                print("no upload route in the page", file=sys.stderr)
                return 1
            folders = [tmp, data / "uploads"]
            peak = 0
            done = threading.Event()

            def sample() -> None:
                nonlocal peak
                while not done.is_set():
                    peak = max(peak, bytes_on_disk(server.pid, folders))
                    time.sleep(SAMPLE_EVERY_S)

            sampler = threading.Thread(target=sample)
            sampler.start()
            status, seconds = _send(port, match.group(0), args.mb, args.chunked)
            time.sleep(1.0)  # let the server finish with what it received
            done.set()
            sampler.join()
            left = bytes_on_disk(server.pid, folders)
        finally:
            server.terminate()
            server.wait(timeout=30)
            log.close()
    framing = "chunked" if args.chunked else "Content-Length"
    print(f"upload of {args.mb} MiB ({framing}): {status} after {seconds:.1f} s")
    print(
        f"peak on disk (temp + uploads): {peak / 2**20:.1f} MiB; left afterwards: "
        f"{left / 2**20:.1f} MiB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
