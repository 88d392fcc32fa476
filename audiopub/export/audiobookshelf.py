"""A finished book as a folder Audiobookshelf files correctly: drop it into a library folder.

    <library>/<Author>/<Title>/                       or, in a series,
    <library>/<Author>/<Series>/Vol <n> - <Title>/
        <Title>.m4b     the audiobook, with its chapters (a hard link where it can be)
        cover.jpg
        metadata.opf    title, author, narrator, description, language, year, series
        desc.txt        the description
        reader.txt      the narrator: the engine and voice that read it

Audiobookshelf reads the folder names ({Author}/{Series}/{Book}, "Vol N - " for a book's
place in its series) and, above them in its default order of sources, the OPF file; the text
files are what older versions and other tools read. The folder is made beside its final place
and renamed into it, so a library scan never sees half an export. For a browser, the same
folder comes in a zip (`export_audiobookshelf_zip`), to unpack into a library folder.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from lxml import etree

from audiopub.atomic import atomic_write, link_or_copy, scratch_dir
from audiopub.audio.ffmpeg import ffmpeg_exe
from audiopub.audio.mux import prepare_cover
from audiopub.book.models import Book
from audiopub.errors import AudiopubError
from audiopub.export.names import safe_name
from audiopub.jobs.book_plan import stored_book
from audiopub.jobs.models import Job, JobState
from audiopub.jobs.store import JobStore

OPF_NS = "http://www.idpf.org/2007/opf"
DC_NS = "http://purl.org/dc/elements/1.1/"


def export_audiobookshelf(store: JobStore, job_id: str, library: Path) -> Path:
    """Write the book's folder under `library`, replacing an earlier export of it; returns it."""
    job = store.queue.get_job(job_id)
    if job.state is not JobState.DONE or not job.output_path.is_file():
        raise AudiopubError(f"“{job.title}” has no finished audiobook to export")
    book = stored_book(store, job)
    folder = Path(library) / book_folder(book)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.with_name(f".{folder.name}.partial-{secrets.token_hex(4)}")
    try:
        staging.mkdir()
        title = safe_name(book.title, "Audiobook")
        link_or_copy(job.output_path, staging / f"{title}.m4b")
        _write_cover(book, staging)
        narrator = reader(job)
        (staging / "metadata.opf").write_bytes(metadata_opf(book, narrator))
        (staging / "reader.txt").write_text(narrator + "\n", "utf-8")
        if book.details.description:
            (staging / "desc.txt").write_text(book.details.description + "\n", "utf-8")
        _replace_folder(staging, folder)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return folder


def export_audiobookshelf_zip(store: JobStore, job_id: str, path: Path) -> Path:
    """The book's folder, exactly as `export_audiobookshelf` writes it (`Author/Title/...`),
    in one zip at `path` (atomically)."""
    path = Path(path)
    # Beside the zip: on one filesystem the .m4b is linked into the folder, not copied.
    with tempfile.TemporaryDirectory(prefix=".audiopub-abs-", dir=path.parent) as tmp:
        folder = export_audiobookshelf(store, job_id, Path(tmp))
        with atomic_write(path) as temp, zipfile.ZipFile(temp, "w", zipfile.ZIP_STORED) as out:
            for file in sorted(p for p in folder.rglob("*") if p.is_file()):
                out.write(file, file.relative_to(tmp).as_posix())
    return path


def book_folder(book: Book) -> Path:
    """Author/Title, or Author/Series/Vol N - Title, each part safe as a file name."""
    author = safe_name(book.authors[0] if book.authors else "", "Unknown Author")
    title = safe_name(book.title, "Untitled")
    series = book.details.series
    if not series:
        return Path(author) / title
    index = book.details.series_index
    name = f"Vol {index} - {book.title}" if index else book.title
    return Path(author) / safe_name(series) / safe_name(name, title)


def reader(job: Job) -> str:
    return job.settings.narrator


def metadata_opf(book: Book, narrator: str) -> bytes:
    """An OPF package document with the metadata Audiobookshelf reads from `metadata.opf`."""
    package = etree.Element(
        f"{{{OPF_NS}}}package",
        nsmap={None: OPF_NS},
        attrib={"version": "3.0", "unique-identifier": "id"},
    )
    metadata = etree.SubElement(
        package, f"{{{OPF_NS}}}metadata", nsmap={"dc": DC_NS, "opf": OPF_NS}
    )

    def dc(name: str, text: str, **attributes: str) -> None:
        element = etree.SubElement(metadata, f"{{{DC_NS}}}{name}")
        element.text = text
        for key, value in attributes.items():
            element.set(f"{{{OPF_NS}}}{key}", value)

    dc("title", book.title)
    for author in book.authors:
        dc("creator", author, role="aut")
    dc("creator", narrator, role="nrt")
    details = book.details
    if details.description:
        dc("description", details.description)
    if book.language:
        dc("language", book.language)
    if details.year:
        dc("date", details.year)
    if details.series:
        etree.SubElement(
            metadata, f"{{{OPF_NS}}}meta", name="calibre:series", content=details.series
        )
        if details.series_index:
            etree.SubElement(
                metadata,
                f"{{{OPF_NS}}}meta",
                name="calibre:series_index",
                content=details.series_index,
            )
    return etree.tostring(package, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def _write_cover(book: Book, folder: Path) -> None:
    """cover.jpg: the book's cover as it is when it is a JPEG, else converted by ffmpeg."""
    if book.cover is None:
        return
    ffmpeg = ffmpeg_exe()
    with tempfile.TemporaryDirectory(prefix="audiopub-cover-", dir=scratch_dir()) as tmp:
        picture = prepare_cover(ffmpeg, book.cover, Path(tmp))  # JPEG or PNG, or None
        if picture is None:
            return
        if picture.suffix == ".jpg":
            shutil.copyfile(picture, folder / "cover.jpg")
            return
        subprocess.run(
            [
                ffmpeg,
                "-hide_banner",
                "-nostdin",
                "-loglevel",
                "error",
                "-y",
                "-i",
                str(picture),
                "-frames:v",
                "1",
                "-q:v",
                "2",
                str(folder / "cover.jpg"),
            ],
            capture_output=True,
            check=False,
        )


def _replace_folder(staging: Path, folder: Path) -> None:
    """Put `staging` in `folder`'s place: a rename, with an earlier export moved aside first."""
    old = folder.with_name(f".{folder.name}.old-{secrets.token_hex(4)}")
    if folder.exists():
        folder.rename(old)
    staging.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
