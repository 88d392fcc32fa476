"""A local HTTP server that answers like the Hugging Face Hub, for download tests (no network).

It speaks the part of the Hub's protocol `huggingface_hub` 2.x uses to download files:

    HEAD/GET /{repo}/resolve/{revision}/{path}    a file; X-Repo-Commit, ETag, Content-Length;
                                                  an LFS file answers 302 to the "CDN" with
                                                  X-Linked-Etag (its SHA-256) and X-Linked-Size
    HEAD/GET /cdn/{sha256}                        an LFS object, with Range requests (206)
    GET /api/models/{repo}/revision/{revision}    repo info: commit and files (size, LFS)

and answers errors as the Hub does: 401 + X-Error-Code: RepoNotFound for an unknown repository,
404 + RevisionNotFound / EntryNotFound. The "CDN" is the same server reached as `localhost`
instead of 127.0.0.1, a different origin, as the Hub's LFS storage is.

Faults for tests: `damage(repo, path)` sends a file unlike its advertised hashes,
`drop_after(path, n)` cuts the connection after n bytes of the next transfer
of that file (once), `hold(path)` makes transfers of that file wait until `release(path)` (a
download caught half-way, to cancel or watch); `requests` records what was asked (method,
path, Range header).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

LFS_SUFFIXES = (".onnx", ".bin")  # as the voice repositories keep them (Kokoro: .bin)


@dataclass
class HubFile:
    content: bytes  # what the Hub says the file is (size, hashes)
    lfs: bool
    served: bytes | None = None  # what it sends instead, when a test damages it

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.content).hexdigest()

    @property
    def git_sha1(self) -> str:
        """What git (and the Hub's ETag for non-LFS files) names the blob."""
        return hashlib.sha1(b"blob %d\0" % len(self.content) + self.content).hexdigest()


@dataclass
class HubRepo:
    commit: str
    files: dict[str, HubFile] = field(default_factory=dict)


class HubServer:
    def __init__(self) -> None:
        self.repos: dict[str, HubRepo] = {}
        self.requests: list[tuple[str, str, str | None]] = []
        self.waiting: list[str] = []  # repo paths whose transfers are held at a gate now
        self._drops: dict[str, int] = {}
        self._gates: dict[str, threading.Event] = {}
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> HubServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def add_repo(
        self, repo_id: str, files: dict[str, bytes | Path], commit: str | None = None
    ) -> str:
        """Serve `files` (path → content) as `repo_id` at `commit` (made up if not given),
        which the branch `main` points at too."""
        contents = {
            path: data if isinstance(data, bytes) else Path(data).read_bytes()
            for path, data in files.items()
        }
        commit = commit or hashlib.sha1(repr(sorted(contents)).encode()).hexdigest()
        self.repos[repo_id] = HubRepo(
            commit,
            {path: HubFile(data, path.endswith(LFS_SUFFIXES)) for path, data in contents.items()},
        )
        return commit

    def damage(self, repo_id: str, path: str) -> None:
        """Send `path` with one byte changed, while still advertising the original's hashes."""
        file = self.repos[repo_id].files[path]
        file.served = bytes([file.content[0] ^ 0xFF]) + file.content[1:]

    def drop_after(self, path: str, n_bytes: int) -> None:
        """Cut the next transfer of `path` (a repo path) after `n_bytes`, once."""
        self._drops[path] = n_bytes

    def hold(self, path: str) -> None:
        """Make every transfer of `path` (a repo path) wait, before its first byte, until
        `release(path)`: the download is then caught with the files before it complete."""
        self._gates[path] = threading.Event()

    def release(self, path: str) -> None:
        gate = self._gates.pop(path, None)
        if gate is not None:
            gate.set()

    def held(self, path: str) -> bool:
        """Whether a transfer of `path` is waiting at its gate now."""
        return path in self.waiting

    def transfers(self, repo_path: str) -> list[str | None]:
        """The Range header (None: the whole file) of each GET of a file's content, through
        /resolve or, for an LFS file, the CDN."""
        cdn = {
            f"/cdn/{file.sha256}"
            for repo in self.repos.values()
            for path, file in repo.files.items()
            if path == repo_path and file.lfs
        }
        return [
            ranged
            for method, path, ranged in self.requests
            if method == "GET"
            and (path in cdn or ("/resolve/" in path and path.endswith("/" + repo_path)))
        ]

    def _take_drop(self, path: str) -> int | None:
        with self._lock:
            return self._drops.pop(path, None)

    def _find_blob(self, sha256: str) -> tuple[str, HubFile] | None:
        for repo in self.repos.values():
            for path, file in repo.files.items():
                if file.lfs and file.sha256 == sha256:
                    return path, file
        return None


def _handler_for(hub: HubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass  # quiet tests

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def do_GET(self) -> None:
            self._answer(body=True)

        def _answer(self, body: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            hub.requests.append((self.command, path, self.headers.get("Range")))
            parts = path.strip("/").split("/")
            if parts[0] == "cdn" and len(parts) == 2:
                found = hub._find_blob(parts[1])
                if found is None:
                    return self._error(404, "EntryNotFound")
                return self._content(found[0], found[1], {}, body)
            if (
                parts[0] == "api"
                and len(parts) == 6
                and parts[1] == "models"
                and parts[4] == "revision"
            ):
                return self._repo_info(f"{parts[2]}/{parts[3]}", parts[5])
            if len(parts) >= 5 and parts[2] == "resolve":
                return self._resolve(f"{parts[0]}/{parts[1]}", parts[3], "/".join(parts[4:]), body)
            self._error(404, None)

        def _repo(self, repo_id: str, revision: str) -> HubRepo | None:
            repo = hub.repos.get(repo_id)
            if repo is None:
                self._error(401, "RepoNotFound")
                return None
            if revision not in ("main", repo.commit):
                self._error(404, "RevisionNotFound")
                return None
            return repo

        def _repo_info(self, repo_id: str, revision: str) -> None:
            repo = self._repo(repo_id, revision)
            if repo is None:
                return
            siblings = []
            for path, file in repo.files.items():
                sibling: dict[str, object] = {
                    "rfilename": path,
                    "size": len(file.content),
                    "blobId": file.git_sha1,
                }
                if file.lfs:
                    sibling["lfs"] = {
                        "sha256": file.sha256,
                        "size": len(file.content),
                        "pointerSize": 134,
                    }
                siblings.append(sibling)
            data = json.dumps({"id": repo_id, "sha": repo.commit, "siblings": siblings}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _resolve(self, repo_id: str, revision: str, path: str, body: bool) -> None:
            repo = self._repo(repo_id, revision)
            if repo is None:
                return
            file = repo.files.get(path)
            if file is None:
                return self._error(404, "EntryNotFound", {"X-Repo-Commit": repo.commit})
            headers = {"X-Repo-Commit": repo.commit}
            if file.lfs:  # the Hub sends LFS objects to its storage, a different origin
                self.send_response(302)
                self.send_header("Location", f"http://localhost:{hub.port}/cdn/{file.sha256}")
                self.send_header("X-Linked-Etag", f'"{file.sha256}"')
                self.send_header("X-Linked-Size", str(len(file.content)))
                self.send_header("ETag", f'"{file.git_sha1}"')
                self.send_header("X-Repo-Commit", repo.commit)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            headers["ETag"] = f'"{file.git_sha1}"'
            self._content(path, file, headers, body)

        def _content(self, path: str, file: HubFile, headers: dict[str, str], body: bool) -> None:
            gate = hub._gates.get(path) if body else None
            if gate is not None:  # before any answer: the client waits as for a slow server
                hub.waiting.append(path)
                gate.wait(timeout=60)  # a test that forgets to release still ends
                hub.waiting.remove(path)
            data = file.content if file.served is None else file.served
            start = 0
            ranged = self.headers.get("Range")
            if ranged and ranged.startswith("bytes="):
                start = int(ranged[len("bytes=") :].split("-")[0])
            self.send_response(206 if start else 200)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Length", str(len(data) - start))
            if start:
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            self.end_headers()
            if not body:
                return
            drop = hub._take_drop(path)
            if drop is not None:  # a connection lost halfway: send part, then hang up
                self.wfile.write(data[start : start + drop])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(data[start:])

        def _error(
            self, status: int, code: str | None, headers: dict[str, str] | None = None
        ) -> None:
            message = json.dumps({"error": code or "Not Found"}).encode()
            self.send_response(status)
            if code:
                self.send_header("X-Error-Code", code)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(message)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(message)

    return Handler


@contextmanager
def running_hub() -> Iterator[HubServer]:
    server = HubServer().start()
    try:
        yield server
    finally:
        server.stop()
