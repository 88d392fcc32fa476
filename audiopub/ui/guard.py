"""Who may use the web UI: requests for this server's own names, from its own pages, with its
secret when it serves beyond this computer.

The browser that shows Audiopub also runs other sites' scripts, and the UI has no accounts.
A site whose name its owner points at 127.0.0.1 ("DNS rebinding") is same-origin with the UI
as far as the browser knows: only the `Host` header tells them apart, so a request for a name
this server does not answer to is refused (400). A page of another site may post an upload or
open the UI's socket: any request that changes something, and every socket request, whose
`Origin` is not this server's own is refused (403). No page may frame the UI (clickjacking).
Serving beyond loopback, anyone on the network could connect: a secret is then required
(401 without it), given once in the start-up address (`/?token=…`), which sets a cookie. A
client that keeps offering wrong ones is refused for a while (429, `token_lockout`), and a
secret the user chose must be long enough not to be guessed at all.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlencode, urlsplit

from starlette.requests import HTTPConnection
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocketClose

from audiopub import settings
from audiopub.errors import SettingInvalid
from audiopub.ui.token_lockout import TokenLockout, client_key

TOKEN_ENV: Final = settings.TOKEN_ENV
HOSTS_ENV: Final = settings.HOSTS_ENV
LOOPBACK_NAMES: Final = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARDS: Final = frozenset({"", "0.0.0.0", "::"})  # every interface of this computer
SAFE_METHODS: Final = frozenset({"GET", "HEAD", "OPTIONS"})
SOCKET_PATH: Final = "/_nicegui_ws/"  # NiceGUI's socket.io: every request there acts
TOKEN_PARAMETER: Final = "token"
COOKIE_MAX_AGE_S: Final = 30 * 24 * 3600
FRAME_HEADERS: Final = (
    (b"content-security-policy", b"frame-ancestors 'none'"),
    (b"x-frame-options", b"DENY"),
)
POLICY_VIOLATION: Final = 1008  # WebSocket close code; a close before accept answers 403


@dataclass(frozen=True)
class Policy:
    """What the guard lets through: host names, and the secret (None: none required)."""

    names: frozenset[str]
    any_address: bool  # listening on every interface: any IP address is one of ours
    token: str | None
    cookie: str  # the cookie that carries the token (one per port: cookies ignore ports)

    def allows_host(self, header: str | None) -> bool:
        name = host_name(header)
        if name is None:
            return False
        return name in self.names or (self.any_address and _is_ip(name))

    def has_token(self, connection: HTTPConnection) -> bool:
        if self.token is None:
            return True
        return any(_equal(value, self.token) for value in self.offered_tokens(connection))

    def offered_tokens(self, connection: HTTPConnection) -> list[str]:
        """The tokens a request carries: in the cookie, the address, an Authorization header."""
        scheme, _, credentials = connection.headers.get("authorization", "").partition(" ")
        offered = [
            connection.cookies.get(self.cookie),
            connection.query_params.get(TOKEN_PARAMETER),
            credentials if scheme.lower() == "bearer" else None,
        ]
        return [value for value in offered if value is not None]


def policy_for(
    host: str, port: int, extra_names: Iterable[str], options: settings.Settings
) -> Policy:
    """The policy for serving on `host`:`port`, with the names (`--allow-host`, then the
    settings') and secret the user gave (in `options`)."""
    names = set(LOOPBACK_NAMES)
    given = [*extra_names, *options.allowed_hosts]
    if host not in WILDCARDS:
        given.append(host)
    for value in given:
        name = host_name(value)
        if name is None:
            raise SettingInvalid(
                f"{value!r} is not a host name or address (e.g. --allow-host books.example.lan)"
            )
        names.add(name)
    token = options.token
    if token is not None and len(token) < settings.MIN_TOKEN_CHARS:
        raise SettingInvalid(
            f"{TOKEN_ENV} is too short to keep anyone out (a token needs at least "
            f"{settings.MIN_TOKEN_CHARS} characters, this one has {len(token)}): choose a "
            f"longer one, e.g. {TOKEN_ENV}={secrets.token_urlsafe(24)}"
        )
    if token is None and not is_loopback(host):
        token = secrets.token_urlsafe(24)
    return Policy(frozenset(names), host in WILDCARDS, token, f"audiopub-token-{port}")


def is_loopback(host: str) -> bool:
    """Whether listening on `host` keeps the UI to this computer."""
    if host in WILDCARDS:
        return False
    bare = _unbracketed(host)
    return bare.lower() == "localhost" or (_is_ip(bare) and ipaddress.ip_address(bare).is_loopback)


def host_name(value: str | None) -> str | None:
    """The name in a Host header or a user's host name, lower-case, without port or brackets
    (`Books.Example:8080` → `books.example`, `[::1]:8080` → `::1`); None when malformed."""
    if not value or any(c.isspace() or c in "/?#@\\" for c in value):
        return None
    bare = _unbracketed(value)
    if _is_ip(bare):  # a bare IPv6 address has colons that are no port
        return str(ipaddress.ip_address(bare))
    try:
        parts = urlsplit(f"//{value}")
        parts.port  # noqa: B018 (raises ValueError on a bad port)
    except ValueError:
        return None
    return parts.hostname.rstrip(".") if parts.hostname else None


def same_origin(origin: str | None, host_header: str | None) -> bool:
    """Whether `origin` (a browser's Origin header) is the site that `host_header` names."""
    if not origin or not host_header:
        return False
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host_header.lower()


def socket_origin_check(origin: str | None, environ: Mapping[str, str]) -> bool:
    """For python-engineio's `cors_allowed_origins`: only the UI's own pages get CORS headers."""
    return same_origin(origin, environ.get("HTTP_HOST"))


def start_address(policy: Policy, url: str) -> str:
    """The address to open first: `url` with the token, which sets the cookie."""
    return (
        f"{url.rstrip('/')}/?{urlencode({TOKEN_PARAMETER: policy.token})}" if policy.token else url
    )


class Guard:
    """ASGI middleware in front of the whole app (pages, routes, uploads, socket.io)."""

    def __init__(self, app: ASGIApp, policy: Policy, lockout: TokenLockout | None = None) -> None:
        self.app = app
        self.policy = policy
        self.lockout = lockout or TokenLockout.from_settings()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        connection = HTTPConnection(scope)
        refusal = self._refusal(scope, connection)
        if refusal is None:
            refusal = self._token_refusal(connection)
        if refusal is not None:
            if scope["type"] == "websocket":
                await WebSocketClose(POLICY_VIOLATION)(scope, receive, send)
            else:
                await refusal(scope, receive, send_with_frame_headers(send))
            return
        if (
            scope["type"] == "http"
            and self.policy.token is not None
            and scope["method"] in ("GET", "HEAD")
            and TOKEN_PARAMETER in connection.query_params
        ):
            # The start-up address: keep the token in a cookie, and out of the address bar.
            await self._set_cookie(connection)(scope, receive, send_with_frame_headers(send))
            return
        await self.app(
            scope, receive, send_with_frame_headers(send) if scope["type"] == "http" else send
        )

    def _refusal(self, scope: Scope, connection: HTTPConnection) -> Response | None:
        host = connection.headers.get("host")
        if not self.policy.allows_host(host):
            name = host_name(host) or "(none)"
            return PlainTextResponse(
                f"Audiopub does not answer to the name {name}. If this is how you reach it, "
                f"start it with --allow-host {name}.",
                status_code=400,
            )
        acts = (
            scope["type"] == "websocket"
            or scope["method"] not in SAFE_METHODS
            or scope["path"].startswith(SOCKET_PATH)
        )
        origin = connection.headers.get("origin")
        if acts and origin is not None and not same_origin(origin, host):
            return PlainTextResponse(
                f"Refused: this request came from another site's page ({origin}).", status_code=403
            )
        return None

    def _token_refusal(self, connection: HTTPConnection) -> Response | None:
        """401 without the token, 429 for a client that has offered too many wrong ones."""
        if self.policy.token is None:
            return None
        client = client_key(connection.client.host if connection.client else None)
        wait_s = self.lockout.wait_s(client)
        if wait_s == 0:
            if self.policy.has_token(connection):
                self.lockout.succeeded(client)
                return None
            wait_s = self.lockout.failed(client, self.policy.offered_tokens(connection))
        if wait_s > 0:
            return PlainTextResponse(
                f"Too many wrong tokens came from this address: wait {wait_s} s, then open the "
                "address Audiopub printed when it started (ending in /?token=…).",
                status_code=429,
                headers={"Retry-After": str(wait_s)},
            )
        return PlainTextResponse(
            "This Audiopub asks for its token: open the address it printed when it "
            "started (ending in /?token=…), or add ?token= and the value of "
            f"{TOKEN_ENV} to this address.",
            status_code=401,
        )

    def _set_cookie(self, connection: HTTPConnection) -> Response:
        rest = [(k, v) for k, v in connection.query_params.multi_items() if k != TOKEN_PARAMETER]
        # One leading slash: `//other.example` would send the browser to another site.
        target = "/" + connection.url.path.lstrip("/") + (f"?{urlencode(rest)}" if rest else "")
        response = RedirectResponse(target, status_code=303)
        assert self.policy.token is not None
        response.set_cookie(
            self.policy.cookie,
            self.policy.token,
            max_age=COOKIE_MAX_AGE_S,
            httponly=True,
            samesite="lax",
        )
        return response


def send_with_frame_headers(send: Send) -> Send:
    """`send`, adding the headers that forbid framing to an HTTP response."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            message = {**message, "headers": [*message.get("headers", []), *FRAME_HEADERS]}
        await send(message)

    return sending


def _unbracketed(value: str) -> str:
    return value[1:-1] if value.startswith("[") and value.endswith("]") else value


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def _equal(offered: str, token: str) -> bool:
    return hmac.compare_digest(offered.encode(), token.encode())
