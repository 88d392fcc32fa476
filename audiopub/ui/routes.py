"""HTTP routes for finished books (play, download, cover) and for the cover thumbnail of an
uploaded book. A book is found by its job id only, a thumbnail by the random name the reader
gave it; no path ever comes from the client."""

from __future__ import annotations

import mimetypes
import re

from fastapi import HTTPException
from fastapi.responses import FileResponse
from nicegui import app

from audiopub.errors import JobNotFound
from audiopub.export.names import safe_name
from audiopub.jobs.models import Job
from audiopub.ui import library_files
from audiopub.ui.book_reading import thumbnail_path
from audiopub.ui.chosen_forms import made_downloads
from audiopub.ui.library import LIBRARY_EXPORTS
from audiopub.ui.services import Services

_JOB_ID = re.compile(r"[0-9a-f]{32}")


def register(services: Services) -> None:
    # Plain `def` routes: FastAPI runs them in its thread pool, so the store reads and file
    # checks don't block the event loop. FileResponse answers Range requests (seeking).

    @app.get("/library/{job_id}/audio")
    def play(job_id: str) -> FileResponse:
        job = _finished(services, job_id)
        return FileResponse(job.output_path, media_type="audio/mp4")

    @app.get("/library/{job_id}/download")
    def download(job_id: str) -> FileResponse:
        job = _finished(services, job_id)
        return FileResponse(
            job.output_path,
            media_type="audio/mp4",
            filename=f"{safe_name(job.title, 'audiobook')}.m4b",
        )

    @app.get("/library/{job_id}/export/{kind}")
    def export(job_id: str, kind: str) -> FileResponse:
        if kind not in LIBRARY_EXPORTS:
            raise HTTPException(404, "No such export")
        job = _finished(services, job_id)
        path = services.library.export_path(job, kind)
        if not path.is_file():  # made by the page's Export menu first
            raise HTTPException(404, "This export has not been made")
        return FileResponse(
            path,
            filename=safe_name(job.title, "audiobook")
            + LIBRARY_EXPORTS[kind].replace(" chapters", " - chapters"),
        )

    @app.get("/library/{job_id}/forms/{number}")
    def chosen_form(job_id: str, number: int) -> FileResponse:
        job = _finished(services, job_id)
        made = made_downloads(services.store, job) or []
        if not 0 <= number < len(made) or not made[number].path.is_file():
            raise HTTPException(404, "This form has not been made")  # the library makes it
        return FileResponse(made[number].path, filename=made[number].name)

    @app.get("/library/{job_id}/cover")
    def cover(job_id: str) -> FileResponse:
        path = services.library.cover_of(_finished(services, job_id))
        if path is None:
            raise HTTPException(404, "This book has no cover")
        media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        return FileResponse(path, media_type=media_type)

    @app.get("/library/files/{name}")
    def book_file(name: str) -> FileResponse:
        # What the Library offers while the job store can't be read (`library_files`).
        path = library_files.book_file(services.library.folder, name)
        if path is None:
            raise HTTPException(404, "No such book")
        return FileResponse(path, media_type="audio/mp4", filename=name)

    @app.get("/covers/{name}")
    def upload_cover(name: str) -> FileResponse:
        path = thumbnail_path(services.data_dir, name)
        if path is None:  # a name the reader never gave, or its tab has let go of it
            raise HTTPException(404, "No such cover")
        return FileResponse(path, media_type=mimetypes.guess_type(path.name)[0])


def _finished(services: Services, job_id: str) -> Job:
    if not _JOB_ID.fullmatch(job_id):
        raise HTTPException(404, "No such book")
    try:
        return services.library.finished_book(job_id)
    except (JobNotFound, FileNotFoundError):
        raise HTTPException(404, "No such book") from None
