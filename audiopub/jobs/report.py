"""What the command line says about a job: the summary after a run, and `jobs --details`.

Lines of text, so the CLI prints them and tests read them. Every speed is defined in `figures`:
a run's on the command's wall clock from start to finish, a job's on the wall time its runs
spent speaking (labelled so: the two rightly differ), a chapter's on engine time. The engine's
start-up is a line of its own, and in no speed of speaking. Chunks
whose audio came from another job (`chunk_cache`) cost this job no synthesis: they are counted
apart and left out of its speeds.
"""

from __future__ import annotations

from pathlib import Path

from audiopub import figures as fmt
from audiopub.audio.levels import Levels
from audiopub.figures import Clock, Speed
from audiopub.jobs.chunk_cache import chunks_folder
from audiopub.jobs.models import ChunkRow, ChunkState, Job, JobProgress
from audiopub.jobs.store import JobStore

# A chunk spoken on a cluster records its provider as "PROVIDER on NODE" (audiopub.cluster).
NODE_MARK = " on "


def run_summary(store: JobStore, job: Job, elapsed_s: float, since: float) -> list[str]:
    """After a finished run: what it made in `elapsed_s` (the command's wall time, since the
    Unix time `since`), what it reused, and what the job as a whole took."""
    chapters = store.ledger.chapters(job.id)
    progress = store.ledger.progress(job.id, since=since)
    audio_s = sum(c.duration_s or 0.0 for c in chapters)
    run = Speed(progress.made_chars, elapsed_s, progress.made_audio_s, Clock.WALL)
    lines = [
        f"Wrote {job.output_path}",
        f"  chapters: {len(chapters)}   duration: {fmt.clock(audio_s)}",
        f"  this run: {run.describe(fmt.START_TO_FINISH)}",
    ]
    if job.settings.cast is not None:
        lines.append(f"  cast: {job.settings.cast.summary()}")
    started = job.stage_times.get(fmt.ENGINE_START)
    if started is not None:
        lines.append(
            f"  {fmt.ENGINE_START}: {fmt.seconds_short(started)} (before the first "
            "chunk: in this run's time, not in any speed of speaking)"
        )
    if progress.reused_chunks:
        lines.append(
            f"  reused: {progress.reused_chunks:,} of {progress.chunks_total:,} chunks "
            f"({progress.reused_chars:,} chars) had the audio of an earlier job with "
            "the same text and settings"
        )
    if progress.spoken_chars:  # the figure `jobs --details` shows, word for word
        # Resumed, part of it was made by earlier runs: it is the whole job's.
        label = "whole job" if progress.made_chars < progress.spoken_chars else "speaking"
        lines.append(f"  {label}: {job_speed(progress).describe(fmt.SPEAKING_ONLY)}")
    lines.append(f"  ran on: {job.device or _providers(store.ledger.all_chunks(job.id))}")
    lines += [
        f"    {line}"
        for line in node_lines(
            store.ledger.all_chunks(job.id), elapsed_s, fmt.START_TO_FINISH, since
        )
    ]
    if job.settings.proof_listen:
        lines.append(store.hearings.listening_summary(job.id).describe())
    return lines


def job_details(store: JobStore, job: Job, progress: JobProgress) -> list[str]:
    """How many chunks the job spoke and reused, its speed on the wall clock and its stages,
    its engine's peak VRAM (once recorded), the chunk audio it keeps; each chapter's figures on
    engine time (summed over the engine processes, so they compare across machines)."""
    spoken = progress.chunks_done - progress.reused_chunks
    lines = [
        f"chunks: {progress.chunks_done:,} of {progress.chunks_total:,} done; "
        f"{spoken:,} spoken by this job, {progress.reused_chunks:,} reused from earlier jobs"
    ]
    if progress.spoken_chars:
        lines.append(f"speaking: {job_speed(progress).describe(fmt.SPEAKING_ONLY)}")
        lines += [
            f"  {line}"
            for line in node_lines(
                store.ledger.all_chunks(job.id), progress.wall_s, fmt.SPEAKING_ONLY
            )
        ]
    if job.stage_times:
        lines.append(f"stages: {fmt.stage_times(job.stage_times)}")
    if job.peak_vram_mb:
        lines.append(
            "peak VRAM: "
            + ", ".join(
                f"GPU {index} {mb:,.0f} MiB" for index, mb in sorted(job.peak_vram_mb.items())
            )
        )
    kept = _folder_bytes(chunks_folder(store.job_dir(job.id)))
    if kept:
        lines.append(
            f"chunk audio kept: {fmt.size(kept)} (shared with later jobs of the same "
            "text; AUDIOPUB_KEEP_CHUNK_AUDIO=0 removes it when a job finishes)"
        )
    if job.settings.proof_listen:
        lines += listening_lines(store, job)
    lines.append(f"chapters ({Clock.ENGINE.value}):")
    for ch in store.ledger.chapters(job.id):
        figures = f"{fmt.rate(ch.chars_per_s)}, RTF {fmt.factor(ch.rtf)}" if ch.chars_per_s else ""
        lines.append(f"{ch.idx + 1:3}. {ch.title[:40]:40} {ch.state.value:7} {figures}")
        if ch.stage_times:
            lines.append(f"     {fmt.stage_times(ch.stage_times)}")
        lines += _levels_lines(ch.levels)
    return lines


def listening_lines(store: JobStore, job: Job) -> list[str]:
    """How many chunks proof-listening flagged and repaired, and each still flagged: where it
    is in the book, its text and what was heard."""
    lines = [store.hearings.listening_summary(job.id).describe()]
    for flagged in store.hearings.still_flagged(job.id):
        where = (
            f"at {fmt.clock(flagged.book_s)}" if flagged.book_s is not None else "not stitched yet"
        )
        lines.append(
            f"  chapter {flagged.chapter_idx + 1} “{flagged.chapter_title}”, {where}, "
            f"chunk {flagged.chunk_idx + 1}: {flagged.reason or 'flagged'}"
        )
        lines.append(f"    text:  {flagged.text}")
        lines.append(f"    heard: {flagged.heard or '(nothing)'}")
    return lines


def job_speed(progress: JobProgress) -> Speed:
    """The job's own speed: what its runs spoke over the wall time they spent speaking it."""
    return Speed(progress.spoken_chars, progress.wall_s, progress.spoken_audio_s, Clock.WALL)


def node_lines(
    chunks: list[ChunkRow], seconds: float, span: str, since: float | None = None
) -> list[str]:
    """Per machine of a cluster that spoke the job (`--ray`): the chunks it spoke and its
    share of the speed over `seconds` of wall time (the shares add up to the whole); with
    `since`, only chunks finished from then on. None for a job spoken on one machine."""
    spoken: dict[str, list[int]] = {}
    for chunk in chunks:
        if (
            chunk.state is ChunkState.DONE
            and chunk.reused_from is None
            and chunk.provider
            and NODE_MARK in chunk.provider
            and (since is None or (chunk.done_at or 0.0) >= since)
        ):
            counts = spoken.setdefault(chunk.provider.rpartition(NODE_MARK)[2], [0, 0])
            counts[0] += 1
            counts[1] += chunk.char_count
    return [
        f"node {node}: {fmt.count(count)} chunks, {fmt.count(chars)} chars, "
        f"{fmt.rate(chars / seconds if seconds > 0 else None)} ({Clock.WALL.value}, {span})"
        for node, (count, chars) in sorted(spoken.items())
    ]


def _levels_lines(levels: dict[str, dict[str, float | None]]) -> list[str]:
    """A chapter's levels as it is now (and as the voice made it), and what is out of range."""
    if "after" not in levels:
        return []
    after, before = Levels.from_dict(levels["after"]), Levels.from_dict(levels["before"])
    line = f"     levels: {after.describe()}"
    if after != before:
        line += f" (spoken at {before.describe()})"
    problems = after.problems()
    return [line] + (
        [f"     outside the audiobook levels: {'; '.join(problems)}"] if problems else []
    )


def _providers(chunks: list[ChunkRow]) -> str:
    return ", ".join(sorted({c.provider for c in chunks if c.provider})) or "unknown"


def _folder_bytes(folder: Path) -> int:
    """Bytes of the files in `folder` (a file linked from other jobs counts in each)."""
    return sum(p.stat().st_size for p in folder.iterdir() if p.is_file()) if folder.is_dir() else 0
