"""How the command line lays a job out on a terminal: the progress bar's counts, the `jobs`
listing's title column.

Counts are whole numbers ("68/12,345 chars"; tqdm's own scaling reads "68.0/12.3k"), and a
title is as wide as the terminal leaves room for: a longer one is shortened with an ellipsis,
so each job stays one line (the id finds the job; `jobs --details` lines follow it). The
speed and the time left are the job's own (`figures`): speaking only, and estimated from the
machine's recorded speed before the first chunk; tqdm's would count the engine's start-up as
speaking.
"""

from __future__ import annotations

from typing import Final

from tqdm import tqdm

from audiopub import figures as fmt
from audiopub.figures import Speed, rate
from audiopub.jobs.models import Job

BAR_FORMAT: Final = "{l_bar}{bar}| {done}/{whole} chars [{elapsed}<{left}, {speed}{postfix}]"
JOBS_TITLE_COLUMN: Final = 29  # where `jobs` prints a title: after id, state and percentage
MIN_TITLE_WIDTH: Final = 20


class CountingBar(tqdm):
    """tqdm with whole numbers for the counts in `BAR_FORMAT` (`done`, `whole`), and the job's
    own estimate and speed (`left`, `speed`), as its events last said them."""

    eta_s: float | None = None
    speaking: Speed | None = None

    @property
    def format_dict(self) -> dict[str, object]:
        meter = super().format_dict
        total = meter["total"]
        speed = self.speaking.chars_per_s if self.speaking is not None else None
        return {
            **meter,
            "done": f"{int(meter['n']):,}",
            "whole": f"{int(total):,}" if total else "?",
            "left": fmt.clock(self.eta_s) if self.eta_s is not None else "?",
            "speed": f"{rate(speed)} speaking" if speed else "—",
        }


def title_width(jobs: list[Job], columns: int) -> int:
    """The title column: as wide as the longest title where the terminal has room for it and
    the longest output path, else what is left (titles are shortened), but never narrower
    than 20."""
    longest = max((len(job.title) for job in jobs), default=0)
    path = max((len(str(job.output_path)) for job in jobs), default=0)
    room = columns - JOBS_TITLE_COLUMN - 2 - path
    return max(min(longest, room), MIN_TITLE_WIDTH)


def fit_title(title: str, width: int) -> str:
    """`title` in `width` characters: a longer one cut at a word where it can be, with "…"."""
    if len(title) <= width:
        return title
    cut = title[: width - 1]
    if " " in cut[width // 2 :]:  # end at a whole word unless that loses half the room
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.-–—") + "…"
