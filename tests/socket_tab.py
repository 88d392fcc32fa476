"""A tab of the convert page without a browser: the page fetched over HTTP, NiceGUI's socket.io
connection opened with python-socketio, and a book posted to the page's upload route as the
page itself posts it. Cheaper than Chromium where a test needs many tabs, or a tab that drops
its connection and comes back.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
import urllib.request
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import socketio

UPLOAD_URL = re.compile(r'"url":"(/_nicegui/client/([0-9a-f-]+)/upload/\d+)"')
SOCKET_PATH = "/_nicegui_ws/socket.io"
HTTP_TIMEOUT_S = 30.0
RECONNECT_PAUSE_S = 0.5


class SocketTab:
    """One open convert page; `texts()` is everything the server has sent it, as text."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.port = int(urlsplit(url).port or 80)
        with urllib.request.urlopen(url, timeout=HTTP_TIMEOUT_S) as response:
            page = response.read().decode()
        match = UPLOAD_URL.search(page)
        assert match is not None, "no upload element in the page"
        self.upload_path, self.client_id = match.group(1), match.group(2)
        self._received: list[str] = []
        self._lock = threading.Lock()
        self._next_message_id = 0
        self._document_id, self._tab_id = uuid.uuid4(), uuid.uuid4()  # the same page throughout
        self.socket = self._connect()

    def _connect(self) -> socketio.Client:
        sock = socketio.Client(reconnection=False)
        sock.on("*", self._message)
        query = (
            f"client_id={self.client_id}&next_message_id={self._next_message_id}"
            f"&implicit_handshake=true&document_id={self._document_id}&tab_id={self._tab_id}"
        )
        sock.connect(
            f"{self.url}?{query}",
            transports=["polling"],
            socketio_path=SOCKET_PATH,
            wait_timeout=HTTP_TIMEOUT_S,
        )
        return sock

    def _message(self, event: str, data: Any) -> None:
        with self._lock:
            self._received.append(json.dumps(data, ensure_ascii=False))
            if isinstance(data, dict) and isinstance(data.get("_id"), int):
                self._next_message_id = data["_id"] + 1  # NiceGUI's message history

    def texts(self) -> str:
        with self._lock:
            return "\n".join(self._received)

    def wait_for(self, text: str, timeout_s: float = 30.0) -> None:
        deadline = time.monotonic() + timeout_s
        while text not in self.texts():
            if time.monotonic() > deadline:
                raise AssertionError(f"the tab was not sent {text!r} in {timeout_s:.0f} s")
            time.sleep(0.05)

    def drop(self) -> None:
        """The connection goes without a word (as a tab's does when its network goes); the
        server finds out when its pings go unanswered. The page stays."""
        self.socket.eio.disconnect(abort=True)

    def reconnect(self, tries: int = 3) -> None:
        """The page comes back on a new connection, asking for what it missed. Tried again
        as a browser would: the server may still be closing the connection that went."""
        for attempt in range(tries):
            try:
                self.socket = self._connect()
                return
            except socketio.exceptions.ConnectionError:
                if attempt == tries - 1:
                    raise
                time.sleep(RECONNECT_PAUSE_S)

    def upload(self, book: Path, name: str | None = None) -> int:
        """POST `book` to the page's upload route; the HTTP status."""
        boundary = uuid.uuid4().hex
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                f'filename="{name or book.name}"\r\nContent-Type: application/epub+zip'
                "\r\n\r\n"
            ).encode()
            + book.read_bytes()
            + f"\r\n--{boundary}--\r\n".encode()
        )
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=HTTP_TIMEOUT_S)
        try:
            connection.request(
                "POST",
                self.upload_path,
                body=body,
                headers={"Content-Type": f"multipart/form-data; boundary={boundary}"},
            )
            response = connection.getresponse()
            response.read()
            return int(response.status)
        finally:
            connection.close()

    def close(self) -> None:
        """Leave, telling the server. Returns once the client's long poll is answered: the
        server answers it at its next ping, not at the goodbye (up to 8 + 4 s)."""
        self.socket.disconnect()

    def __enter__(self) -> SocketTab:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


def close_all(tabs: Sequence[SocketTab]) -> None:
    """Close the tabs side by side, as a browser closing them would: each close waits for the
    server's next ping (`SocketTab.close`), and one after another they took 35 s for four."""
    if tabs:
        with ThreadPoolExecutor(len(tabs)) as closing:
            list(closing.map(SocketTab.close, tabs))
