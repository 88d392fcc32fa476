"""Wrong tokens, counted per client address: after a few, that address is refused for a while.

Where the UI asks for a token, a client could otherwise try thousands a second. Each address
may offer `settings.TOKEN_GUESSES` different wrong tokens; the next is answered 429 for
`settings.TOKEN_LOCKOUT_S`, every request from it meanwhile too (even with the right token,
or the lock-out would not slow guessing down), and each further lock-out of the same address
lasts twice as long as the one before, up to `settings.TOKEN_LOCKOUT_MAX_S`. Only different
values count: a browser that keeps sending the stale cookie of an earlier start is not
guessing. The right token clears the address's record.

Nothing waits: a locked request is answered at once, so the event loop never sleeps on it.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from audiopub import settings

# Addresses remembered at once; the least recently seen go first. An attacker with more
# addresses than this gets nothing from it that the addresses alone would not give.
MAX_CLIENTS: Final = 4096
IPV6_PREFIX: Final = 64  # one computer usually holds a whole /64: it is one client


@dataclass
class _Record:
    wrong: set[bytes] = field(default_factory=set)  # digests of the wrong tokens offered
    lockouts: int = 0
    locked_until: float = 0.0


class TokenLockout:
    """Who has offered how many wrong tokens, and who must wait."""

    def __init__(
        self,
        guesses: int,
        lockout_s: float,
        max_lockout_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.guesses = guesses
        self.lockout_s = lockout_s
        self.max_lockout_s = max_lockout_s
        self.clock = clock
        self._records: OrderedDict[str, _Record] = OrderedDict()

    @staticmethod
    def from_settings() -> TokenLockout:
        # Read when the server starts, so a test's wrapper can lower them first.
        return TokenLockout(
            settings.TOKEN_GUESSES, settings.TOKEN_LOCKOUT_S, settings.TOKEN_LOCKOUT_MAX_S
        )

    def wait_s(self, client: str) -> int:
        """Whole seconds `client` must still wait; 0 when it may try."""
        record = self._records.get(client)
        if record is None:
            return 0
        return max(0, math.ceil(record.locked_until - self.clock()))

    def failed(self, client: str, wrong_tokens: Iterable[str]) -> int:
        """Count `client`'s wrong tokens; the seconds it must now wait (0: none yet)."""
        digests = {hashlib.sha256(token.encode()).digest() for token in wrong_tokens}
        if not digests:  # no token offered: not a guess
            return 0
        record = self._records.pop(client, None) or _Record()
        self._records[client] = record  # the most recently seen last
        while len(self._records) > MAX_CLIENTS:
            self._records.popitem(last=False)
        record.wrong.update(digests)
        if len(record.wrong) < self.guesses:
            return 0
        record.wrong.clear()  # the next lock-out needs as many new guesses
        record.lockouts += 1
        lockout = min(self.lockout_s * 2 ** (record.lockouts - 1), self.max_lockout_s)
        record.locked_until = self.clock() + lockout
        return math.ceil(lockout)

    def succeeded(self, client: str) -> None:
        """`client` gave the right token: its wrong ones are forgiven."""
        self._records.pop(client, None)


def client_key(address: str | None) -> str:
    """Who a request comes from (uvicorn takes it from X-Forwarded-For where the proxy is
    this computer): the address, an IPv6 address's network, or "unknown"."""
    if not address:
        return "unknown"
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:  # a Unix socket's name, say
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:  # ::ffff:192.0.2.1 is 192.0.2.1
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/{IPV6_PREFIX}", strict=False))
    return str(ip)
