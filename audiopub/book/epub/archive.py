"""An EPUB's zip archive, read into memory entry by entry, within limits. Nothing is extracted.

A hostile EPUB can be a zip bomb (kilobytes that unpack to gigabytes), a central directory of
millions of entries, entries named `../../x` or `/etc/x`, symbolic links, headers that lie about
sizes, or compression methods with no bound on their output. `EpubArchive`:

- checks the end-of-central-directory record before `zipfile` parses anything (entry count,
  directory size), then every entry's header: the sum of declared sizes and each entry's
  compression ratio (`settings.EPUB_*`);
- never writes to disk: `read` returns bytes. Entries whose names would leave the book's
  folder (absolute, `..`, drive letters) and symbolic links are left out of the name index, so
  nothing can ask for them;
- reads only Stored and Deflate entries (the only ones the EPUB spec allows; `zipfile`'s bzip2
  and LZMA decoders have no bound on the output of one step);
- counts the bytes actually unpacked: no entry yields more than its header promised, and no
  book more than `EPUB_MAX_READ_BYTES`, whatever the headers say.

Every failure is a `BadEpub` (or its `DamagedEntry`, for one entry that can't be unpacked,
which the reader can skip if the entry is not essential).
"""

from __future__ import annotations

import io
import os
import posixpath
import re
import stat
import struct
import zipfile
import zlib
from pathlib import Path
from typing import BinaryIO, final

from audiopub import settings
from audiopub.errors import BadEpub, DamagedEntry

__all__ = ["DamagedEntry", "EpubArchive", "human_size", "printable", "safe_name"]

MIMETYPE = b"application/epub+zip"
_READ_STEP = 1 << 16
# A central directory entry is 46 bytes plus its name, extra field and comment; real ones stay
# far below 1 KiB, so a directory larger than this per allowed entry is not a real EPUB's.
_DIRECTORY_BYTES_PER_ENTRY = 1024
_EOCD = b"PK\x05\x06"
_EOCD64_LOCATOR = b"PK\x06\x07"
_EOCD64 = b"PK\x06\x06"
_DRIVE = re.compile(r"^[A-Za-z]:")


def human_size(n: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def safe_name(name: str) -> str | None:
    """The entry name as a clean relative path, or None if it would leave the book's folder."""
    name = name.replace("\\", "/")  # written on Windows by a careless tool
    if not name or name.startswith("/") or _DRIVE.match(name) or "\x00" in name:
        return None
    if ".." in name.split("/"):
        return None
    return posixpath.normpath(name)


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def _decoded_name(info: zipfile.ZipInfo) -> str:
    """EPUB names are UTF-8; some tools forget the flag that says so, and zipfile then reads
    them as cp437 ("cafÃ©.xhtml"). Undo that when the bytes are valid UTF-8."""
    if info.flag_bits & 0x800 or info.filename.isascii():
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return info.filename


def _directory_extent(fp: BinaryIO) -> tuple[int, int] | None:
    """(entries, bytes) of the central directory from the end record; None if there is none."""
    fp.seek(0, os.SEEK_END)
    size = fp.tell()
    tail_size = min(size, 22 + 0xFFFF + 20 + 56)  # end record, its comment, zip64 records
    fp.seek(size - tail_size)
    tail = fp.read(tail_size)
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) - at < 22:
        return None
    entries, directory_bytes = struct.unpack("<10xHL6x", tail[at : at + 22])
    if entries == 0xFFFF or directory_bytes == 0xFFFFFFFF:  # zip64: the real figures are before
        locator = at - 20
        record = locator - 56
        if (
            record < 0
            or tail[locator : locator + 4] != _EOCD64_LOCATOR
            or tail[record : record + 4] != _EOCD64
        ):
            return None
        entries, directory_bytes = struct.unpack("<32xQQ8x", tail[record : record + 56])
    return entries, directory_bytes


@final
class EpubArchive:
    """The entries of one EPUB file, by name; use as a context manager (it holds the file)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        name: str | None = None,
        kind: str = "an EPUB",
        mimetype: bytes | None = MIMETYPE,
    ) -> None:
        """`name`: the file's name in messages (default: the path's; an upload is kept under
        a random one). Other zipped formats (Word, OpenDocument, FB2 in a zip) are read with the
        same limits: `kind` names the format in messages ("a Word document"), `mimetype` is
        the `mimetype` entry it should have (None: it has none)."""
        path = Path(path)
        self.book = name or path.name
        self.kind = kind
        self.mimetype = mimetype
        self.warnings: list[str] = []
        self._read_total = 0
        self._cache: dict[str, bytes] = {}
        try:
            self._fp: BinaryIO = open(path, "rb")  # noqa: SIM115 (closed by close())
        except OSError as exc:
            raise BadEpub(f"{self.book}: the file can't be opened ({exc.strerror or exc})") from exc
        try:
            self._zip = self._open_zip()
            self._entries, self._unreadable = self._index()
            if self.mimetype is not None:
                self._check_mimetype(self.mimetype)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> EpubArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        zf = getattr(self, "_zip", None)
        if zf is not None:
            zf.close()
        self._fp.close()

    # --- opening ------------------------------------------------------------------------

    def _open_zip(self) -> zipfile.ZipFile:
        head = self._fp.read(4)
        looks_like_zip = head.startswith(b"PK")
        extent = _directory_extent(self._fp)
        damaged = BadEpub(
            f"{self.book}: the archive is incomplete or damaged (was the download "
            "or copy cut short?)"
        )
        if extent is None:
            if looks_like_zip:
                raise damaged
            raise BadEpub(f"{self.book}: not {self.kind} (it is not a zip archive)")
        entries, directory_bytes = extent
        limit = settings.EPUB_MAX_ENTRIES
        if entries > limit or directory_bytes > limit * _DIRECTORY_BYTES_PER_ENTRY:
            raise BadEpub(
                f"{self.book}: refused: its archive lists more than {limit:,} files, "
                "far more than any real book"
            )
        self._fp.seek(0)
        try:
            return zipfile.ZipFile(self._fp)
        except zipfile.BadZipFile as exc:
            if not looks_like_zip and "not a zip file" in str(exc):
                raise BadEpub(f"{self.book}: not {self.kind} (it is not a zip archive)") from exc
            raise damaged from exc
        except (
            zipfile.LargeZipFile,
            ValueError,
            EOFError,
            OverflowError,
            struct.error,
            NotImplementedError,
            UnicodeDecodeError,
        ) as exc:
            raise damaged from exc

    def _index(self) -> tuple[dict[str, zipfile.ZipInfo], dict[str, str]]:
        """Safe names → entries; entries that can't be read → why; checks the size limits."""
        infos = self._zip.infolist()
        if len(infos) > settings.EPUB_MAX_ENTRIES:
            raise BadEpub(
                f"{self.book}: refused: its archive lists more than "
                f"{settings.EPUB_MAX_ENTRIES:,} files, far more than any real book"
            )
        entries: dict[str, zipfile.ZipInfo] = {}
        unreadable: dict[str, str] = {}
        ignored: list[str] = []
        total = 0
        for info in infos:
            raw = _decoded_name(info)
            name = safe_name(raw)
            if name is None or _is_symlink(info):
                ignored.append(raw + (" (a symbolic link)" if _is_symlink(info) else ""))
                continue
            if raw.endswith(("/", "\\")):
                continue  # a folder
            total += info.file_size
            self._check_ratio(name, info)
            entries[name] = info
            if info.flag_bits & 0x1:
                unreadable[name] = "it is password-protected"
            elif info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                unreadable[name] = "it uses a compression method EPUBs don't allow"
        if total > settings.EPUB_MAX_UNPACKED_BYTES:
            limit = human_size(settings.EPUB_MAX_UNPACKED_BYTES)
            raise BadEpub(
                f"{self.book}: refused: it would unpack to {human_size(total)}, over "
                f"the {limit} limit for {self.kind} (zip bombs look like this)"
            )
        if ignored:
            shown = ", ".join(printable(n) for n in ignored[:3])
            shown += ", …" if len(ignored) > 3 else ""
            what = (
                "entry whose name points outside the book or that is a link"
                if len(ignored) == 1
                else "entries whose names point outside the book or that are links"
            )
            self.warnings.append(f"Ignored {len(ignored)} archive {what}: {shown}.")
        return entries, unreadable

    def _check_ratio(self, name: str, info: zipfile.ZipInfo) -> None:
        if info.file_size <= settings.EPUB_RATIO_FREE_BYTES:
            return
        ratio = info.file_size / max(info.compress_size, 1)
        if ratio > settings.EPUB_MAX_COMPRESSION_RATIO:
            raise BadEpub(
                f"{self.book}: refused: {printable(name)} is compressed "
                f"{ratio:,.0f} to 1, far beyond any real book (zip bombs look like this)"
            )

    def _check_mimetype(self, mimetype: bytes) -> None:
        """EPUBs start with a stored `mimetype` entry; readers accept books without, so do we."""
        info = self._entries.get("mimetype")
        if info is None:
            self.warnings.append(
                f"The archive has no “mimetype” entry; it was read as {self.kind} anyway."
            )
            return
        problems = []
        try:
            content: bytes | None = self.read("mimetype") if info.file_size <= 256 else None
        except DamagedEntry as exc:
            problems.append(f"can't be unpacked ({exc.reason})")
        else:
            if content is None or content.strip() != mimetype:
                text = (
                    "(something long)"
                    if content is None
                    else (printable(content.decode("ascii", "replace").strip()[:60]) or "nothing")
                )
                problems.append(f"says “{text}” instead of “{mimetype.decode()}”")
        if info.compress_type != zipfile.ZIP_STORED:
            problems.append("is compressed")
        if self._zip.infolist()[0] is not info:
            problems.append("is not the first entry")
        if problems:
            self.warnings.append(
                f"The archive’s “mimetype” entry {' and '.join(problems)}; "
                "the book was read anyway."
            )

    # --- reading ------------------------------------------------------------------------

    def names(self) -> list[str]:
        """The safe names of the archive's files, in the archive's order."""
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and safe_name(name) in self._entries

    def size(self, name: str) -> int:
        """The entry's size as its header declares it (reading never yields more)."""
        key = safe_name(name)
        if key is None or key not in self._entries:
            raise KeyError(name)
        return self._entries[key].file_size

    def read(self, name: str) -> bytes:
        """The entry's bytes. KeyError if there is no such (safe) entry; `DamagedEntry` if it
        can't be unpacked; `BadEpub` if reading it would pass the limits."""
        key = safe_name(name)
        if key is None or key not in self._entries:
            raise KeyError(name)
        if key in self._cache:
            return self._cache[key]
        if key in self._unreadable:
            raise DamagedEntry(self.book, printable(key), self._unreadable[key])
        info = self._entries[key]
        limit = settings.EPUB_MAX_READ_BYTES
        if self._read_total + info.file_size > limit:
            raise BadEpub(
                f"{self.book}: refused: its text and images unpack to more than "
                f"{human_size(limit)}, far more than any real book"
            )
        data = self._unpack(key, info)
        self._cache[key] = data
        return data

    def _unpack(self, key: str, info: zipfile.ZipInfo) -> bytes:
        out = io.BytesIO()
        try:
            with self._zip.open(info) as stream:
                while chunk := stream.read(_READ_STEP):
                    out.write(chunk)
                    self._read_total += len(chunk)
                    # zipfile stops at the declared size; this holds even if it didn't.
                    if (
                        out.tell() > info.file_size
                        or self._read_total > settings.EPUB_MAX_READ_BYTES
                    ):
                        raise BadEpub(
                            f"{self.book}: refused: {printable(key)} unpacks to "
                            "more than its header says (zip bombs look like this)"
                        )
        except BadEpub:
            raise
        except (
            zipfile.BadZipFile,
            zlib.error,
            EOFError,
            OSError,
            ValueError,
            RuntimeError,
            NotImplementedError,
            struct.error,
            OverflowError,
        ) as exc:
            raise DamagedEntry(self.book, printable(key), str(exc) or type(exc).__name__) from exc
        if out.tell() != info.file_size:
            raise DamagedEntry(self.book, printable(key), "it is shorter than its header says")
        return out.getvalue()


_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def printable(text: str) -> str:
    """A name or value from the file, safe to show in a message (no control characters)."""
    text = _UNPRINTABLE.sub("?", text)
    return text if len(text) <= 120 else text[:117] + "…"
