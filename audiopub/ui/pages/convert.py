"""The start page: upload a book, choose chapters, a voice and the forms to make besides the
.m4b, generate; follow the jobs."""

from __future__ import annotations

from dataclasses import replace

from nicegui import run, ui

from audiopub.errors import AudiopubError, DiskFull
from audiopub.jobs.disk_full import disk_full, in_words_of, is_disk_full
from audiopub.ui.components.book_card import BookPanel
from audiopub.ui.components.cast_panel import CastPanel
from audiopub.ui.components.forms_panel import FormsPanel
from audiopub.ui.components.gpu_panel import GpuPanel
from audiopub.ui.components.job_list import job_list
from audiopub.ui.components.settings_panel import SettingsPanel
from audiopub.ui.jobview import is_listed_as_active
from audiopub.ui.services import Services
from audiopub.ui.theme import frame, section_title
from audiopub.ui.uploads import GENERATE_AGAIN


def page(services: Services) -> None:
    with frame(services, "Convert", "/"), ui.element("div").classes("ap-layout"):
        with ui.column().classes("w-full gap-5 min-w-0"):
            book = BookPanel(
                services,
                on_change=lambda: update(),
                voice=lambda: voice.job_settings(None) if voice.ready else None,
            )
            voice = SettingsPanel(services, on_change=lambda: update())
            cast = CastPanel(services, voice, on_change=lambda: update())
            forms = FormsPanel(on_change=lambda: update())
            with ui.row().classes("w-full items-center gap-4"):
                generate = (
                    ui.button("Generate audiobook", icon="graphic_eq")
                    .props("unelevated no-caps size=md")
                    .mark("generate")
                )
                hint = ui.label().classes("ap-muted text-sm").mark("generate-hint")
            submit_error = ui.label().classes("ap-banner ap-error").mark("generate-error")
            submit_error.set_visibility(False)
            section_title("Jobs", "queue_music")
            jobs = job_list(
                services, is_listed_as_active, "No jobs yet. Upload a book and press Generate."
            )
        with ui.column().classes("w-full gap-5"):
            GpuPanel(services.gpu, lambda: services.gpu_started)

    def update() -> None:
        book.set_speed(voice.speed.value)
        voice.set_book_language(book.book.language if book.book is not None else None)
        cast.follow(book.path if book.book is not None else None, book.book)
        if book.book is None:
            reason = "Upload an EPUB to begin."
        elif not book.selected():
            reason = "Tick at least one chapter."
        elif not voice.ready:
            reason = "Choose an engine and a voice."
        elif forms.problem:
            reason = forms.problem
        else:
            reason = ""
        generate.set_enabled(not reason)
        # Not a reason to wait: a note, since a job reads the lexicon file, not the page.
        note = (
            "The book's lexicon has changes not saved yet: a conversion uses them once "
            "they are saved."
            if book.lexicon_unsaved
            else ""
        )
        hint.set_text(reason or note)

    async def start() -> None:
        if book.book is None or book.path is None or not voice.ready:
            return
        chosen = book.selected()
        every = len(chosen) == len(book.book.chapters)
        settings = voice.job_settings(None if every else tuple(chosen))
        generate.props("loading")
        submit_error.set_visibility(False)
        try:
            outputs = forms.outputs()
            if outputs.anything:
                settings = replace(settings, forms=outputs.to_dict())
            if cast.enabled:  # as `convert --cast`: the book's cast file, as it is now
                voicing = await cast.voicing(settings, failed)
                if voicing is None:  # said under the button
                    return
                settings = replace(settings, cast=voicing)
            job = await run.io_bound(services.jobs.submit, book.path, book.book, settings)
            if job is None:  # the app is shutting down
                return
            said = await run.io_bound(services.jobs.submitted_text, job)
        except (AudiopubError, ValueError) as exc:
            failed(in_words_of(exc, GENERATE_AGAIN) if isinstance(exc, DiskFull) else str(exc))
            return
        except OSError as exc:  # copying the book into the job's folder
            if not is_disk_full(exc):
                raise
            failed(str(disk_full(services.data_dir, then=GENERATE_AGAIN)))
            return
        finally:
            generate.props(remove="loading")
        ui.notify(said, type="positive")
        await jobs.refresh_now()

    def failed(message: str) -> None:
        submit_error.set_text(message)
        submit_error.set_visibility(True)

    generate.on_click(start)
    update()
