"""The Hugging Face Hub, through `huggingface_hub`: file facts, downloads, checksums, errors.

`huggingface_hub` does the transfer: `HF_ENDPOINT` (a mirror), `HTTPS_PROXY`/`HTTP_PROXY`,
`HF_TOKEN`, `HF_HUB_OFFLINE`, `HF_HUB_DOWNLOAD_TIMEOUT` and `HF_HUB_ETAG_TIMEOUT` work as for any
Hub client. A dropped connection is resumed with a Range request from the last piece written
(huggingface_hub writes 10 MB at a time), up to five times in a row. Files are fetched with
`local_dir=` into a staging folder that the caller chooses, so a finished file is kept there
(with the Hub's metadata beside it) and a second attempt after an interruption fetches only
what is missing; a file already in the user's Hub cache at the same commit is copied from
there instead of downloaded.

Every failure a person can meet — no network, a mirror that is not a Hub, a missing repository,
revision or file, a file that does not match its checksum, a full disk, a cancel — is raised
as a DownloadFailed (or subclass) whose message says what to do.
"""

from __future__ import annotations

import errno
import hashlib
import json
import re
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import httpx2
from huggingface_hub import HfApi, constants, get_hf_file_metadata, hf_hub_download, hf_hub_url
from huggingface_hub.errors import (
    EntryNotFoundError,
    GatedRepoError,
    HfHubHTTPError,
    LocalEntryNotFoundError,
    OfflineModeIsEnabled,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)

from audiopub import figures, settings
from audiopub.atomic import scratch_dir
from audiopub.errors import (
    ChecksumMismatch,
    DownloadCancelled,
    DownloadFailed,
    HubUnreachable,
    NotEnoughSpace,
)

# Room left free after a download: a disk filled to the last byte breaks everything else.
SPARE_BYTES: Final = 50 * 1024 * 1024
_SHA256_LENGTH: Final = 64


# The Hub's address and patience are the process's, asked by every download, file listing
# and message that names the Hub, across the voice, model and catalogue code: read here, where
# they are used, rather than carried through every one of those calls.


def endpoint() -> str:
    """The Hub's address: HF_ENDPOINT as the settings hold it, else huggingface_hub's."""
    return (settings.current().hub_endpoint or constants.ENDPOINT).rstrip("/")


def metadata_timeout_s() -> float:
    """Seconds to wait for the Hub to answer a metadata request (HF_HUB_ETAG_TIMEOUT)."""
    return settings.current().hub_metadata_timeout_s


def _timeout(given: float | None) -> float:
    return metadata_timeout_s() if given is None else given


@dataclass(frozen=True)
class HubFile:
    """A file of a repository at one commit, as the Hub describes it."""

    path: str
    size: int
    commit: str
    sha256: str | None  # the LFS object's hash; None for files kept in git itself


@dataclass(frozen=True)
class Progress:
    """Where a download stands: bytes, rate (this run) and what is left."""

    file: str
    done_bytes: int
    total_bytes: int
    bytes_per_s: float | None

    @property
    def eta_s(self) -> float | None:
        if not self.bytes_per_s:
            return None
        return max(0, self.total_bytes - self.done_bytes) / self.bytes_per_s

    def describe(self) -> str:
        """ "12.3 MB of 63.2 MB, 4.1 MB/s, 0:12 left"."""
        rate = f"{figures.size(self.bytes_per_s)}/s" if self.bytes_per_s else "—"
        return (
            f"{figures.size(self.done_bytes)} of {figures.size(self.total_bytes)}, {rate}, "
            f"{figures.clock(self.eta_s)} left"
        )


class Transfer:
    """Progress over all the files of one download, and its cancel switch.

    `huggingface_hub` reports each file's bytes to tqdm-like bars it makes from `tqdm_class`;
    `bar_class` is that class, and every update lands here. A cancel is noticed at the next
    update (plain HTTP reads in 10 MB pieces) or the next file (a Xet download reports from
    its own threads), and raises DownloadCancelled, which stops the transfer and removes the
    partial file.
    """

    def __init__(
        self,
        total_bytes: int,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: threading.Event | None = None,
    ) -> None:
        self.total_bytes = total_bytes
        self.done_bytes = 0
        self.file = ""
        self._on_progress = on_progress
        self._cancel = cancel
        self._moved = 0  # bytes that arrived in this run, for the rate
        self._began: float | None = None
        self.bar_class = type("TransferBar", (_FileBar,), {"transfer": self})

    def check_cancelled(self) -> None:
        if self._cancel is not None and self._cancel.is_set():
            raise DownloadCancelled("The download was cancelled; nothing was installed.")

    def start_file(self, name: str) -> None:
        self.check_cancelled()
        self.file = name
        if self._moved == 0:  # the clock starts with the first file that is really fetched
            self._began = time.monotonic()
        self._report()

    def finish_file(self, done_bytes: int) -> None:
        """Count a file as complete (it may have needed no transfer at all)."""
        self.done_bytes = done_bytes
        self._report()

    def advance(self, n: int) -> None:
        # huggingface_hub reports every 10 MB: a clock started here, not when the file was
        # asked for, would leave the rate unknown for the first 20 MB.
        self.check_cancelled()
        if self._began is None:
            self._began = time.monotonic()
        self.done_bytes += n
        self._moved += n
        self._report()

    @property
    def bytes_per_s(self) -> float | None:
        if self._began is None:
            return None
        elapsed = time.monotonic() - self._began
        return self._moved / elapsed if elapsed > 0.05 and self._moved > 0 else None

    def _report(self) -> None:
        if self._on_progress is not None:
            self._on_progress(
                Progress(self.file, self.done_bytes, self.total_bytes, self.bytes_per_s)
            )


class _FileBar:
    """What `huggingface_hub` uses of a tqdm bar, for plain HTTP and Xet downloads alike.

    Bytes written (`update`) are what counts. Having `update_transfer` makes a Xet download
    use one bar per file, not a second one for network bytes, which Xet's deduplication and
    compression make differ from the file's size; those are ignored here.
    """

    transfer: Transfer  # set on the subclass each Transfer makes

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.n = 0
        self.total = kwargs.get("total")

    def __enter__(self) -> _FileBar:
        return self

    def __exit__(self, *exc_info: object) -> None:
        pass

    def update(self, n: float | None = 1) -> None:
        # Negative when a server ignored a Range request and the file starts over.
        self.n += int(n or 0)
        self.transfer.advance(int(n or 0))

    def update_transfer(self, n: float | None = 1) -> None:
        pass

    def set_postfix_str(self, *args: Any, **kwargs: Any) -> None:
        pass

    def set_transfer_postfix_str(self, *args: Any, **kwargs: Any) -> None:
        pass

    def refresh(self) -> None:
        pass

    def close(self) -> None:
        pass


@contextmanager
def hub_errors(what: str, repo: str, revision: str) -> Iterator[None]:
    """Translate what `huggingface_hub` and the network raise into DownloadFailed."""
    where = f"the Hugging Face Hub at {endpoint()}"
    first = f"The Hugging Face Hub at {endpoint()}"  # where a message starts with it
    try:
        yield
    except (DownloadFailed, KeyboardInterrupt):
        raise
    except OfflineModeIsEnabled as exc:
        raise DownloadFailed(
            f"Can't download {what}: HF_HUB_OFFLINE is set, which forbids "
            "network access. Unset it and try again."
        ) from exc
    except httpx2.ProxyError as exc:
        raise DownloadFailed(
            f"Can't download {what}: the proxy refused the connection ({exc}). "
            "Check HTTPS_PROXY / HTTP_PROXY."
        ) from exc
    except (httpx2.TransportError, LocalEntryNotFoundError) as exc:
        raise HubUnreachable(
            f"Can't reach {where} to download {what} ({reason(exc)}). Check "
            "your internet connection (or HF_ENDPOINT and proxy settings) and "
            "run the command again."
        ) from exc
    except GatedRepoError as exc:
        raise DownloadFailed(
            f"{repo} on {where} needs you to accept its terms and log in "
            "(HF_TOKEN) before downloading."
        ) from exc
    except RepositoryNotFoundError as exc:
        raise DownloadFailed(
            f"{first} has no repository {repo} (or it is private); is "
            "HF_ENDPOINT a Hub mirror that carries it?"
        ) from exc
    except RevisionNotFoundError as exc:
        raise DownloadFailed(f"{repo} has no revision {revision!r} on {where}.") from exc
    except EntryNotFoundError as exc:
        raise DownloadFailed(
            f"{first} has no {what} in {repo} at revision {revision!r} "
            "(404). The voice index may be out of date: "
            "`audiopub voices --all` refreshes it."
        ) from exc
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        raise DownloadFailed(
            f"{first} answered HTTP {status} for {what}; try again later."
        ) from exc
    except OSError as exc:
        if exc.errno == errno.ENOSPC:
            raise NotEnoughSpace(
                f"The disk filled up while downloading {what}; nothing was "
                "installed. Free some space and try again."
            ) from exc
        raise DownloadFailed(f"Downloading {what} failed: {reason(exc)}") from exc


_ERRNO: Final = re.compile(r"^\[Errno -?\d+\]\s*")


def reason(exc: BaseException) -> str:
    """The innermost cause's first line, in words: what really went wrong (an OS error's
    "[Errno -2] …" number means nothing to a person)."""
    if _name_lookup_failed(exc):
        return "its name could not be looked up: is this computer offline?"
    while exc.__cause__ is not None:
        exc = exc.__cause__
    text = str(exc).strip().splitlines()
    return _ERRNO.sub("", text[0]) if text else type(exc).__name__


def _name_lookup_failed(exc: BaseException | None) -> bool:
    """Whether a DNS lookup failed somewhere in the chain (no network, or no such host)."""
    seen = 0
    while exc is not None and seen < 20:  # chains are short; never loop on a cycle
        if isinstance(exc, socket.gaierror):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _is_sha256(etag: str | None) -> bool:
    return (
        etag is not None
        and len(etag) == _SHA256_LENGTH
        and all(c in "0123456789abcdef" for c in etag)
    )


def file_facts(repo: str, path: str, revision: str, timeout_s: float | None = None) -> HubFile:
    """Size, commit and (for LFS files) SHA-256 of a file, from one HEAD request."""
    with hub_errors(path, repo, revision):
        url = hf_hub_url(repo, path, revision=revision, endpoint=endpoint())
        meta = get_hf_file_metadata(url, timeout=_timeout(timeout_s))
    if meta.commit_hash is None or meta.size is None:
        raise DownloadFailed(
            f"{endpoint()} does not answer like a Hugging Face Hub (no commit "
            f"or size for {path}); check HF_ENDPOINT and proxy settings."
        )
    sha256 = meta.etag if _is_sha256(meta.etag) else None
    return HubFile(path, meta.size, meta.commit_hash, sha256)


def repo_files(
    repo: str, revision: str, timeout_s: float | None = None
) -> tuple[str, list[HubFile]]:
    """The commit a revision points at, and every file there with size and LFS SHA-256."""
    with hub_errors(f"the file list of {repo}", repo, revision):
        info = HfApi(endpoint=endpoint()).model_info(
            repo, revision=revision, files_metadata=True, timeout=_timeout(timeout_s)
        )
    if not info.sha or info.siblings is None:
        raise DownloadFailed(
            f"{endpoint()} did not list the files of {repo}; check HF_ENDPOINT and proxy settings."
        )
    files = [
        HubFile(
            s.rfilename,
            int(s.lfs.size if s.lfs else s.size or 0),
            info.sha,
            s.lfs.sha256 if s.lfs else None,
        )
        for s in info.siblings
    ]
    return info.sha, files


def check_space(folder: Path, needed: int, what: str) -> None:
    """NotEnoughSpace unless `needed` bytes (and some spare) fit where `folder` is."""
    probe = folder
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if free < needed + SPARE_BYTES:
        raise NotEnoughSpace(
            f"{what} needs {figures.size(needed)} but {probe} has only "
            f"{figures.size(free)} free (keeping {figures.size(SPARE_BYTES)} "
            "spare); free some space or set AUDIOPUB_MODELS_DIR to another "
            "disk."
        )


def fetch(file: HubFile, repo: str, staging: Path, transfer: Transfer) -> Path:
    """Download one file at its commit into `staging` (resuming a dropped connection);
    a file already complete there is not fetched again."""
    transfer.start_file(file.path)
    try:
        with hub_errors(file.path, repo, file.commit):
            local = hf_hub_download(
                repo,
                file.path,
                revision=file.commit,
                local_dir=staging,
                endpoint=endpoint(),
                etag_timeout=metadata_timeout_s(),
                tqdm_class=transfer.bar_class,
            )
    except DownloadFailed:
        transfer.check_cancelled()  # a cancel seen in a Xet thread surfaces as another error
        raise
    return Path(local)


def verify(path: Path, file: HubFile, md5: str | None = None) -> None:
    """ChecksumMismatch unless the file has the listed size, MD5 and SHA-256."""
    size = path.stat().st_size
    if size != file.size:
        raise ChecksumMismatch(
            f"{file.path} is {size:,} bytes, not the {file.size:,} the Hub "
            "lists; it was not installed. Try again."
        )
    want = {"MD5": md5, "SHA-256": file.sha256}
    digests = {"MD5": hashlib.md5(usedforsecurity=False), "SHA-256": hashlib.sha256()}
    active = {name: digests[name] for name, value in want.items() if value}
    if not active:
        return
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            for digest in active.values():
                digest.update(block)
    for name, digest in active.items():
        if digest.hexdigest() != str(want[name]).lower():
            raise ChecksumMismatch(
                f"{file.path} does not match its published {name} ({want[name]}; got "
                f"{digest.hexdigest()}): it is damaged or not the file the index lists, and "
                "was not installed. Try again; if it happens again, the index or a mirror "
                "(HF_ENDPOINT) is out of date."
            )


def fetch_json(
    repo: str, path: str, revision: str = "main", timeout_s: float | None = None
) -> tuple[HubFile, Any]:
    """A small JSON file from the Hub, parsed, with its facts (nothing is kept on disk)."""
    facts = file_facts(repo, path, revision, timeout_s)
    with tempfile.TemporaryDirectory(prefix="audiopub-hub-", dir=scratch_dir()) as folder:
        local = fetch(facts, repo, Path(folder), Transfer(facts.size))
        try:
            return facts, json.loads(local.read_text("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DownloadFailed(f"{path} from {repo} is not JSON ({exc})") from exc
