"""A connection to a Ray cluster, made by a job's driver process (`cluster.driver`), and
the words for a cluster that can't be reached.

Ray is an optional dependency: without it `--ray` says which extra to install.
"""

from __future__ import annotations

import logging
import threading
from types import ModuleType
from typing import Any

from audiopub.errors import ClusterLost, EngineUnavailable

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'audiopub[cluster]'"
NAMESPACE = "audiopub"  # the cluster's jobs from Audiopub heads, apart from other programs'

_lock = threading.Lock()


def ray_module() -> ModuleType:
    """Ray, or EngineUnavailable saying how to install it."""
    try:
        import ray  # optional (`audiopub[cluster]`): see the top
    except ImportError as exc:
        raise EngineUnavailable(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from exc
    return ray


def lost(address: str, reason: object) -> ClusterLost:
    """The error that pauses a job whose cluster went away (or never answered)."""
    return ClusterLost(
        f"The Ray cluster at {address} can't be reached ({reason}). The job is "
        "paused with its finished chunks kept: start the cluster again and run "
        "the same command, or run it without --ray to finish on this machine."
    )


def connect(address: str) -> Any:
    """Ray, connected to the cluster at `address` (once per process)."""
    ray = ray_module()
    with _lock:
        if not ray.is_initialized():
            log.info("connecting to the Ray cluster at %s", address)
            try:
                ray.init(
                    address=address,
                    namespace=NAMESPACE,
                    logging_level=logging.WARNING,
                    log_to_driver=False,
                )
            except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError…
                raise lost(address, exc) from exc
    return ray
