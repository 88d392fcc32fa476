"""The forms a person chose on the Convert page besides the .m4b, offered as downloads.

They are made once the book is finished, the first time the library shows it, from the kept
audio by `export.forms.make_outputs`, exactly as `audiopub convert --format ...` makes
them: nothing is spoken again. Not by the worker: its time belongs to the books still waiting
to be spoken. What was made is listed in the job's folder (`forms.json`), written last, so a
list that exists names complete files; a folder (a file per chapter) is offered as one zip.
"""

from __future__ import annotations

import json
import shutil
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from audiopub.atomic import atomic_write
from audiopub.errors import AudiopubError
from audiopub.export.forms import ConvertOutputs, make_outputs
from audiopub.export.names import safe_name
from audiopub.jobs.models import Job
from audiopub.jobs.store import JobStore

MADE_LIST: Final = "forms.json"
ZIPS_DIR: Final = "forms"  # in the job's folder: the zips of folders made beside the book

AUDIO_CHOICES: Final = {
    "m4b": "The .m4b alone",
    "mp3": "MP3 (VBR)",
    "mp3-cbr": "MP3, 192 kb/s CBR",
    "opus": "Opus",
    "m4a": "M4A (AAC)",
}
SPLIT_CHOICES: Final = {"none": "One file for the book", "chapters": "A file per chapter"}

_making: dict[str, threading.Lock] = {}  # one maker per job, however many tabs show it
_making_lock = threading.Lock()


@dataclass(frozen=True)
class Download:
    name: str  # what the browser saves it as: the book's title and the form's suffix
    path: Path


def chosen(job: Job) -> ConvertOutputs | None:
    """The forms chosen for the job besides the .m4b; None when there are none."""
    if not job.settings.forms:
        return None
    outputs = ConvertOutputs.from_dict(job.settings.forms)
    return outputs if outputs.anything else None


def describe(outputs: ConvertOutputs) -> str:
    """The chosen forms in a few words: "Opus, a file per chapter; .srt subtitles"."""
    parts = []
    if outputs.audio_format != "m4b":
        parts.append(
            f"{AUDIO_CHOICES[outputs.audio_format]}, {SPLIT_CHOICES[outputs.split].lower()}"
        )
    if outputs.subtitles:
        parts.append(" and ".join(f".{name}" for name in outputs.subtitles) + " subtitles")
    if outputs.read_along:
        parts.append("read-aloud EPUB")
    return "; ".join(parts)


def made_downloads(store: JobStore, job: Job) -> list[Download] | None:
    """The chosen forms' downloads once made; None while they are not."""
    try:
        data = json.loads((store.job_dir(job.id) / MADE_LIST).read_text("utf-8"))
    except FileNotFoundError:
        return None
    return [Download(item["name"], Path(item["path"])) for item in data["downloads"]]


def make_downloads(store: JobStore, job_id: str) -> list[Download]:
    """Make the chosen forms of a finished job if they are not made yet, and list them
    (blocking: seconds to minutes). AudiopubError if they can't be made."""
    with _making_lock:
        lock = _making.setdefault(job_id, threading.Lock())
    with lock:
        job = store.queue.get_job(job_id)
        made = made_downloads(store, job)
        if made is not None:
            return made
        outputs = chosen(job)
        if outputs is None:
            raise AudiopubError(f"No forms were chosen for “{job.title}” besides the .m4b")
        items = _top_level(
            job.output_path.parent,
            make_outputs(store, job.id, outputs, progress=lambda done, total: None),
        )
        downloads = [_download(store, job, item) for item in items]
        record = {
            "made": [str(item) for item in items],
            "downloads": [{"name": d.name, "path": str(d.path)} for d in downloads],
        }
        with atomic_write(store.job_dir(job.id) / MADE_LIST) as temp:
            temp.write_text(json.dumps(record, indent=1), encoding="utf-8")
        return downloads


def made_beside(store: JobStore, job: Job) -> list[Path]:
    """The forms made beside the book: their list is in the job's folder, so it is read before
    the job and its folder are forgotten."""
    try:
        data = json.loads((store.job_dir(job.id) / MADE_LIST).read_text("utf-8"))
    except FileNotFoundError:
        return []
    return [Path(item) for item in data["made"]]


def remove_made(made: list[Path]) -> None:
    """Delete the forms `made_beside` listed: files, and the folder of chapter files."""
    for item in made:
        if item.is_dir():
            shutil.rmtree(item, ignore_errors=True)
        else:
            item.unlink(missing_ok=True)


def _top_level(folder: Path, files: list[Path]) -> list[Path]:
    """What `make_outputs` wrote beside the book: its files, and the folder of chapter files."""
    return list(dict.fromkeys(folder / path.relative_to(folder).parts[0] for path in files))


def _download(store: JobStore, job: Job, item: Path) -> Download:
    # The book's files are named by a random stem; the browser gets its title instead.
    name = safe_name(job.title, "audiobook") + item.name[len(job.output_path.stem) :]
    if not item.is_dir():
        return Download(name, item)
    path = store.job_dir(job.id) / ZIPS_DIR / f"{item.name}.zip"
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as temp, zipfile.ZipFile(temp, "w", zipfile.ZIP_STORED) as out:
        for file in sorted(p for p in item.rglob("*") if p.is_file()):
            out.write(file, f"{name}/{file.relative_to(item).as_posix()}")
    return Download(f"{name}.zip", path)
