"""Memory a closed tab held, freed and given back to the system.

Three things kept it after the tab went (847 MB, from 294 MB at start, a minute after three
rounds of 20 uploads of a 5 MB book):

- FastAPI remembers every endpoint it has classified (coroutine or not) in caches of 4,096
  entries keyed by the function itself, and each page's upload element adds a route whose
  endpoint holds the element, and through it the whole page: a closed tab's page, chapter
  list and all, stayed until 4,096 more pages had been loaded (`_forget_endpoints`).
- A page is a web of elements that refer to each other, so Python frees it only when its
  cyclic collector next makes a full pass, which a quiet server may not make for hours.
- What Python frees, glibc keeps for the process's next allocations; `malloc_trim` hands
  the free pages back.

So once a tab has gone (NiceGUI removes its elements after its delete handlers ran),
`release_soon` does all three, once for the tabs that go within `RELEASE_AFTER_S` of each other.

What stays is Python's own: its small objects live in 1 MiB arenas, returned only once empty,
and a page's objects are scattered among those that outlive it. After two rounds of 20 tabs
the objects were back to their number at start but the arenas had grown from 70 to 171, none
returned; neither MALLOC_ARENA_MAX=2 nor PYTHONMALLOC=malloc made the server smaller.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import gc
import sys
from functools import cache
from typing import Any, Final

from fastapi.dependencies import models as fastapi_dependencies

# Tabs go together (a browser quits, the pages fetched but never opened are pruned every
# 10 s): one collection for all of them. A full collection holds the event loop for a moment.
RELEASE_AFTER_S: Final = 2.0

_ENDPOINT_CACHES: Final = (
    "_is_gen_callable_cached",
    "_is_async_gen_callable_cached",
    "_is_coroutine_callable_cached",
)

# The loop whose release is pending (the server has one; each UI test its own), if any.
_pending: asyncio.AbstractEventLoop | None = None


def release_soon() -> None:
    """Collect the cycles a closed tab left, and return the freed memory, shortly (on the
    event loop; a call while one is pending joins it)."""
    global _pending
    loop = asyncio.get_running_loop()
    if _pending is not loop:
        _pending = loop
        loop.call_later(RELEASE_AFTER_S, _release, loop)


def _release(loop: asyncio.AbstractEventLoop) -> None:
    global _pending
    if _pending is loop:
        _pending = None
    _forget_endpoints()
    gc.collect()
    return_freed_memory()


def _forget_endpoints() -> None:
    """Empty FastAPI's caches of endpoints classified (where this FastAPI has them): the app's
    own few routes are classified again, the routes of pages that are gone let go of them."""
    for name in _ENDPOINT_CACHES:
        cached = getattr(fastapi_dependencies, name, None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()


def return_freed_memory() -> None:
    """Give the pages free in the C heap back to the system (glibc only; elsewhere nothing)."""
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


@cache
def _glibc() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    return libc if hasattr(libc, "malloc_trim") else None  # musl has none
