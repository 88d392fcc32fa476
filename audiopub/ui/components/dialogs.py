"""Small dialogs shared by the job, library and voice cards."""

from __future__ import annotations

from nicegui import run, ui

from audiopub.errors import AudiopubError
from audiopub.ui.services import Services


async def confirm(question: str, yes: str = "Delete", no: str = "Keep") -> bool:
    """Ask; True if the person pressed `yes` (its button is marked `confirm-delete`)."""
    with ui.dialog() as dialog, ui.card().classes("ap-card"):
        ui.label(question)
        with ui.row().classes("w-full justify-end gap-2"):
            ui.button(no, on_click=lambda: dialog.submit(False)).props("flat no-caps")
            ui.button(yes, on_click=lambda: dialog.submit(True)).props(
                "unelevated no-caps color=negative"
            ).mark("confirm-delete")
    confirmed = await dialog
    dialog.delete()
    return bool(confirmed)


async def confirm_delete(services: Services, job_id: str, question: str) -> bool:
    """Ask, then delete the job off the event loop; True if it was deleted."""
    if not await confirm(question):
        return False
    try:
        ui.notify(await run.io_bound(services.jobs.delete, job_id))
    except AudiopubError as exc:
        ui.notify(str(exc))
        return False
    return True
