"""Other sites in the same browser: forged Host names (DNS rebinding), requests and socket
handshakes from other sites' pages, framing, and the token asked for beyond loopback.

Real `audiopub serve` processes on 127.0.0.1, spoken to over HTTP with hand-made headers:
what a page of another site, or a name pointed at 127.0.0.1, would send. One server answers
two extra names (`--allow-host`, `AUDIOPUB_ALLOWED_HOSTS`); another asks for a token
(`AUDIOPUB_TOKEN`), as every server beyond loopback does, and is opened in Chromium too; a
third asks for one too, with its lock-out for wrong tokens shortened to seconds.
"""

from __future__ import annotations

import base64
import http.client
import os
import re
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from server_helper import (
    RunningServer,
    browser,
    free_port,
    fresh_context,
    require_chromium,
    running_server,
    serve_command,
)

from audiopub import settings
from audiopub.errors import SettingInvalid
from audiopub.ui import guard
from audiopub.ui.token_lockout import TokenLockout, client_key

pytestmark = pytest.mark.timeout(120)

TOKEN = "correct-horse-battery-staple"
GUESSES = 3  # wrong tokens the lock-out server takes before it locks an address out
LOCKOUT_S = 2  # its first lock-out; the next one lasts twice as long
LOCKOUT_SETUP = """
import audiopub.settings as settings
settings.TOKEN_GUESSES = {guesses}
settings.TOKEN_LOCKOUT_S = {lockout}
"""
FRAME_HEADERS = {"content-security-policy": "frame-ancestors 'none'", "x-frame-options": "DENY"}


@pytest.fixture(scope="module")
def named(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A server on loopback (no token) that also answers to two names the user gave."""
    folder = tmp_path_factory.mktemp("named")
    port = free_port()
    command = serve_command(port, "--allow-host", "books.example")
    env = {guard.HOSTS_ENV: "shelf.example, Reader.Example"}
    with running_server(command, folder, port, env) as server:
        yield server


@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A server that asks for its token (AUDIOPUB_TOKEN)."""
    folder = tmp_path_factory.mktemp("locked")
    port = free_port()
    with running_server(
        serve_command(port),
        folder,
        port,
        {guard.TOKEN_ENV: TOKEN},
        ready_headers={"Authorization": f"Bearer {TOKEN}"},
    ) as server:
        yield server


@pytest.fixture(scope="module")
def lockable(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """A server that asks for its token and locks an address out after GUESSES wrong ones."""
    folder = tmp_path_factory.mktemp("lockable")
    port = free_port()
    setup = LOCKOUT_SETUP.format(guesses=GUESSES, lockout=LOCKOUT_S)
    with running_server(
        serve_command(port, setup=setup),
        folder,
        port,
        {guard.TOKEN_ENV: TOKEN},
        ready_headers={"Authorization": f"Bearer {TOKEN}"},
    ) as server:
        yield server


# --- host names ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:{port}",
        "localhost:{port}",
        "[::1]:{port}",
        "books.example:{port}",
        "shelf.example",
        "reader.example",
        "BOOKS.example.:{port}",
    ],
)
def test_its_own_names_are_answered(named: RunningServer, host: str) -> None:
    assert _get(named, "/", host=host.format(port=named.port)).status == 200


@pytest.mark.parametrize(
    "host",
    [
        "rebind.evil.example:{port}",
        "evil.example",
        "127.0.0.1.evil.example:{port}",
        "books.example.evil:{port}",
        "127.0.0.1:{port}@evil.example",
        "[::1",
        "",
    ],
)
def test_other_names_are_refused(named: RunningServer, host: str) -> None:
    """A page at http://rebind.evil.example:PORT/, its name pointed at 127.0.0.1, gets no
    page and no book, and its socket is refused even though it is same-origin."""
    host = host.format(port=named.port)
    page = _get(named, "/", host=host)
    assert page.status == 400
    if host == f"rebind.evil.example:{named.port}":
        assert "--allow-host rebind.evil.example" in page.text
    # 400, not the 404 of a book that does not exist: the request is never routed.
    assert _get(named, f"/library/{uuid.uuid4().hex}/download", host=host).status == 400
    assert _get(named, "/static/icon.svg", host=host).status == 400
    origin = f"http://{host}"
    assert (
        _get(
            named, "/_nicegui_ws/socket.io/?EIO=4&transport=polling", host=host, origin=origin
        ).status
        == 400
    )
    assert _websocket(named, host=host, origin=origin) == 403


# --- other sites' pages --------------------------------------------------------------------------


def test_uploads_from_other_sites_are_refused(named: RunningServer) -> None:
    path = _upload_path(named)
    own = f"http://127.0.0.1:{named.port}"
    for origin in (
        "http://evil.example",
        "null",
        f"http://localhost:{named.port}",
        f"http://127.0.0.1:{named.port + 1}",
        f"ftp://127.0.0.1:{named.port}",
    ):
        reply = _post_file(named, path, b"PK\x03\x04 not a book", origin=origin)
        assert reply.status == 403, origin
        assert "another site" in reply.text
    assert not _uploads(named)
    # The page itself (same origin), and a program that sends no Origin, get through: an
    # empty file reaches the upload handler, which refuses it in the page.
    assert _post_file(named, path, b"", origin=own).status == 200
    assert _post_file(named, path, b"", origin=None).status == 200


def test_the_socket_answers_only_its_own_pages(named: RunningServer) -> None:
    handshake = "/_nicegui_ws/socket.io/?EIO=4&transport=polling"
    own = f"http://127.0.0.1:{named.port}"
    foreign = _get(named, handshake, origin="http://evil.example")
    assert foreign.status == 403
    assert "access-control-allow-origin" not in foreign.headers
    mine = _get(named, handshake, origin=own)
    assert mine.status == 200
    assert mine.headers["access-control-allow-origin"] == own  # echoed for its own page only
    assert _websocket(named, origin="http://evil.example") == 403
    assert _websocket(named, origin="null") == 403
    assert _websocket(named, origin=own) == 101


def test_no_page_may_frame_it(named: RunningServer) -> None:
    for reply in (
        _get(named, "/"),
        _get(named, "/library"),
        _get(named, "/no/such/page"),
        _get(named, "/", host="evil.example"),
    ):
        assert {key: reply.headers.get(key) for key in FRAME_HEADERS} == FRAME_HEADERS


# --- the token -----------------------------------------------------------------------------------


def test_without_the_token_nothing_is_served(locked: RunningServer) -> None:
    for path in (
        "/",
        "/library",
        f"/library/{uuid.uuid4().hex}/download",
        "/static/icon.svg",
        "/?token=wrong",
        "/_nicegui_ws/socket.io/?EIO=4&transport=polling",
    ):
        reply = _get(locked, path)
        assert reply.status == 401, path
        assert "asks for its token" in reply.text
    assert _get(locked, "/", cookie=f"{_cookie_name(locked)}=wrong").status == 401
    assert _get(locked, "/", authorization="Bearer wrong").status == 401
    assert _websocket(locked) == 403


def test_the_start_up_address_is_printed_without_a_token_the_user_chose(
    locked: RunningServer,
) -> None:
    assert f"open http://127.0.0.1:{locked.port}/?token=<{guard.TOKEN_ENV}> once" in locked.log()
    assert TOKEN not in locked.log()


def test_the_start_up_address_sets_a_cookie(locked: RunningServer) -> None:
    reply = _get(locked, f"/?token={TOKEN}")
    assert reply.status == 303
    assert reply.headers["location"] == "/"  # the token leaves the address bar
    cookie = reply.headers["set-cookie"]
    assert cookie.startswith(f"{_cookie_name(locked)}={TOKEN};")
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie
    given = f"{_cookie_name(locked)}={TOKEN}"
    assert _get(locked, "/", cookie=given).status == 200
    assert _get(locked, "/library", cookie=given).status == 200
    assert _websocket(locked, cookie=given) == 101
    assert _get(locked, "/", authorization=f"Bearer {TOKEN}").status == 200  # for scripts
    # Other paths and parameters are kept; a path can't make it send the browser elsewhere.
    assert _get(locked, f"/library?view=1&token={TOKEN}").headers["location"] == "/library?view=1"
    assert _get(locked, f"//evil.example/?token={TOKEN}").headers["location"] == "/evil.example/"


def test_a_browser_opens_the_start_up_address(locked: RunningServer) -> None:
    # One Chromium (seconds of CPU to start); each context its own cookies, as a new profile.
    with browser(require_chromium()) as launched:
        with fresh_context(launched) as context:
            page = context.new_page()
            page.goto(f"{locked.url}?token={TOKEN}")
            page.wait_for_function("() => window.did_handshake === true", timeout=30_000)
            assert page.url == locked.url
            page.goto(f"{locked.url}library")
            page.wait_for_function("() => window.did_handshake === true", timeout=30_000)
        with fresh_context(launched) as fresh:  # a browser that never had the token
            page = fresh.new_page()
            reply = page.goto(locked.url)
            assert reply is not None and reply.status == 401
            assert "asks for its token" in page.content()


def test_wrong_tokens_lock_the_address_out_for_a_while(lockable: RunningServer) -> None:
    """A guesser gets GUESSES tries, then 429 with Retry-After for everything it sends, the
    right token included, each lock-out twice as long as the last. Another address goes on."""
    other = "203.0.113.7"  # uvicorn believes X-Forwarded-For from a proxy on this computer
    for guess in range(GUESSES - 1):
        assert _get(lockable, f"/?token=guess-{guess}").status == 401
    # The same wrong value again is not a new guess: a stale cookie stays a 401.
    for _ in range(3):
        assert _get(lockable, "/", cookie=f"{_cookie_name(lockable)}=guess-0").status == 401
    refused = _get(lockable, f"/?token=guess-{GUESSES}")
    assert refused.status == 429
    assert refused.headers["retry-after"] == str(LOCKOUT_S)
    assert f"Too many wrong tokens came from this address: wait {LOCKOUT_S} s" in refused.text
    assert _get(lockable, "/", authorization=f"Bearer {TOKEN}").status == 429
    assert _get(lockable, "/", authorization="Bearer another-guess").status == 429
    assert _websocket(lockable, cookie=f"{_cookie_name(lockable)}={TOKEN}") == 403
    assert _get(lockable, "/", authorization=f"Bearer {TOKEN}", forwarded=other).status == 200

    time.sleep(LOCKOUT_S + 0.2)  # the lock-out ends; guessing on locks it out twice as long
    for guess in range(GUESSES - 1):
        assert _get(lockable, f"/?token=again-{guess}").status == 401
    again = _get(lockable, "/?token=again-last")
    assert again.status == 429 and again.headers["retry-after"] == str(2 * LOCKOUT_S)

    # The right token forgives the wrong ones before it.
    for guess in range(GUESSES - 1):
        assert _get(lockable, f"/?token=typo-{guess}", forwarded=other).status == 401
    assert _get(lockable, "/", authorization=f"Bearer {TOKEN}", forwarded=other).status == 200
    for guess in range(GUESSES - 1):
        assert _get(lockable, f"/?token=typo-{guess}", forwarded=other).status == 401


def _policy(
    host: str, port: int, names: list[str] | None = None, environ: dict[str, str] | None = None
) -> guard.Policy:
    """`guard.policy_for` with the settings of this environment (none set: {})."""
    return guard.policy_for(host, port, names or [], settings.from_environ(environ or {}))


def test_a_chosen_token_too_short_is_refused_at_start(tmp_path: Path) -> None:
    env = {
        key: value
        for key, value in os.environ.items()  # as `running_server` starts it
        if not key.startswith(("PYTEST_", "NICEGUI_"))
    }
    env.update({guard.TOKEN_ENV: "x", "AUDIOPUB_DATA_DIR": str(tmp_path / "data")})
    started = subprocess.run(
        [sys.executable, "-m", "audiopub", "serve", "--port", str(free_port()), "--no-browser"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert started.returncode == 1
    assert started.stderr.startswith(
        f"audiopub: error: {guard.TOKEN_ENV} is too short to keep anyone out (a token needs at "
        "least 16 characters, this one has 1): choose a longer one, e.g. AUDIOPUB_TOKEN="
    )
    suggested = started.stderr.rsplit("=", 1)[1].strip()
    assert len(suggested) >= 16
    assert _policy("127.0.0.1", 8080, environ={guard.TOKEN_ENV: suggested}).token == suggested


def test_the_lock_out_doubles_up_to_its_longest_and_forgets_on_success() -> None:
    now = [0.0]
    lockout = TokenLockout(guesses=2, lockout_s=10, max_lockout_s=25, clock=lambda: now[0])
    assert lockout.failed("a", []) == 0 and lockout.wait_s("a") == 0  # no token: no guess
    assert [lockout.failed("a", [token]) for token in ("x", "x", "y")] == [0, 0, 10]
    now[0] = 9.5
    assert lockout.wait_s("a") == 1 and lockout.wait_s("b") == 0
    now[0] = 10.0
    assert lockout.wait_s("a") == 0
    assert lockout.failed("a", ["p", "q"]) == 20  # two at once (cookie and address) count two
    now[0] = 30.0
    assert lockout.failed("a", ["r"]) == 0 and lockout.failed("a", ["s"]) == 25
    now[0] = 55.0
    lockout.succeeded("a")
    assert lockout.failed("a", ["t"]) == 0 and lockout.failed("a", ["u"]) == 10


def test_a_client_is_its_address_or_its_ipv6_network() -> None:
    assert client_key("192.0.2.7") == client_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert client_key("2001:db8::1") == client_key("2001:db8::ffff:2") == "2001:db8::/64"
    assert client_key("2001:db8:0:1::1") != client_key("2001:db8::1")
    assert client_key(None) == "unknown"


# --- the policy ----------------------------------------------------------------------------------


def test_loopback_needs_no_token_and_every_other_address_gets_one() -> None:
    assert _policy("127.0.0.1", 8080, environ={}).token is None
    assert _policy("localhost", 8080, environ={}).token is None
    assert _policy("::1", 8080, environ={}).token is None
    for host in ("0.0.0.0", "::", "192.168.1.20", "books.example.lan"):
        first = _policy(host, 8080, environ={})
        assert first.token and len(first.token) >= 32, host
        assert first.token != _policy(host, 8080, environ={}).token  # random
    given = _policy("0.0.0.0", 8080, environ={guard.TOKEN_ENV: f" {TOKEN} "})
    assert given.token == TOKEN
    assert _policy("127.0.0.1", 8080, environ={guard.TOKEN_ENV: TOKEN}).token == TOKEN
    with pytest.raises(SettingInvalid, match="too short to keep anyone out"):
        _policy("0.0.0.0", 8080, environ={guard.TOKEN_ENV: "s3cret"})


def test_the_names_it_answers_to() -> None:
    policy = _policy(
        "192.168.1.20",
        9000,
        ["Books.Example.", "[fe80::1]"],
        environ={guard.HOSTS_ENV: "shelf.example,reader.example  x.lan"},
    )
    for host in (
        "localhost:9000",
        "127.0.0.1",
        "[::1]:9000",
        "192.168.1.20:9000",
        "books.example",
        "shelf.example:9000",
        "reader.example",
        "x.lan",
        "[fe80::1]:9000",
    ):
        assert policy.allows_host(host), host
    for host in (
        "192.168.1.21:9000",
        "evil.example",
        "books.example.evil",
        None,
        "",
        "localhost:notaport",
        "a b",
    ):
        assert not policy.allows_host(host), host
    # On every interface, any address of this computer is its own (no name can be rebound
    # to an address); names still have to be given.
    everywhere = _policy("0.0.0.0", 9000, environ={})
    assert everywhere.allows_host("192.168.1.21:9000") and everywhere.allows_host("[fe80::2]")
    assert not everywhere.allows_host("my-laptop.lan:9000")


@pytest.mark.parametrize(
    "name", ["http://books.example", "books.example/x", "a b", "x:y:z", "user@books.example"]
)
def test_a_name_that_is_no_host_name_is_refused(name: str) -> None:
    with pytest.raises(SettingInvalid, match="is not a host name"):
        _policy("127.0.0.1", 8080, [name], environ={})


def test_the_socket_origin_check() -> None:
    environ = {"HTTP_HOST": "127.0.0.1:8080"}
    assert guard.socket_origin_check("http://127.0.0.1:8080", environ)
    assert guard.socket_origin_check("https://127.0.0.1:8080", environ)  # behind a TLS proxy
    for origin in (
        "http://evil.example",
        "null",
        "http://127.0.0.1:8081",
        None,
        "http://127.0.0.1:8080.evil.example",
    ):
        assert not guard.socket_origin_check(origin, environ), origin
    assert not guard.socket_origin_check("http://127.0.0.1:8080", {})


# --- helpers -------------------------------------------------------------------------------------


class Reply:
    def __init__(self, response: http.client.HTTPResponse) -> None:
        self.status = int(response.status)
        self.headers = {key.lower(): value for key, value in response.getheaders()}
        self.text = response.read().decode(errors="replace")


def _request(
    server: RunningServer,
    method: str,
    path: str,
    body: bytes = b"",
    headers: Mapping[str, str] | None = None,
) -> Reply:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=15)
    try:
        connection.request(
            method,
            path,
            body=body or None,
            headers={"Host": f"127.0.0.1:{server.port}", **(headers or {})},
        )
        return Reply(connection.getresponse())
    finally:
        connection.close()


def _get(
    server: RunningServer,
    path: str,
    *,
    host: str | None = None,
    origin: str | None = None,
    cookie: str | None = None,
    authorization: str | None = None,
    forwarded: str | None = None,
) -> Reply:
    headers = {
        "Host": host,
        "Origin": origin,
        "Cookie": cookie,
        "Authorization": authorization,
        "X-Forwarded-For": forwarded,
    }
    return _request(
        server,
        "GET",
        path,
        headers={key: value for key, value in headers.items() if value is not None},
    )


def _post_file(server: RunningServer, path: str, data: bytes, *, origin: str | None) -> Reply:
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="book.epub"\r\nContent-Type: application/epub+zip\r\n\r\n'
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    if origin is not None:
        headers["Origin"] = origin
    return _request(server, "POST", path, body, headers)


def _upload_path(server: RunningServer) -> str:
    """A fresh page's upload route, as its q-uploader would post to it."""
    match = re.search(r"/_nicegui/client/[0-9a-f-]+/upload/\d+", _get(server, "/").text)
    assert match is not None
    return match.group(0)


def _uploads(server: RunningServer) -> list[str]:
    folder = server.log_path.parent / "data" / "uploads"
    return os.listdir(folder) if folder.is_dir() else []


def _websocket(
    server: RunningServer,
    *,
    host: str | None = None,
    origin: str | None = None,
    cookie: str | None = None,
) -> int:
    """The status of a socket.io WebSocket handshake, as a browser page would open it."""
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        "GET /_nicegui_ws/socket.io/?EIO=4&transport=websocket HTTP/1.1",
        f"Host: {host if host is not None else f'127.0.0.1:{server.port}'}",
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    lines += [f"Origin: {origin}"] if origin is not None else []
    lines += [f"Cookie: {cookie}"] if cookie is not None else []
    with socket.create_connection(("127.0.0.1", server.port), timeout=15) as sock:
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        status_line = sock.recv(4096).split(b"\r\n", 1)[0].decode()
    return int(status_line.split()[1])


def _cookie_name(server: RunningServer) -> str:
    return f"audiopub-token-{server.port}"
