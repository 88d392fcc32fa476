"""How well Whisper hears a voice: the figures proof-listening's thresholds are chosen from.

    python scripts/listening_wer.py BOOK.epub [--chapters 2-3] [--engine piper] [--voice V]
        [--model base] [--threads 2] [--limit N] [--drop-sentences] [--flagged-only]
        [--max-missing-run 6] [--max-wer 0.35] [--min-words-for-wer 8]

It plans the chosen chapters as a conversion does (chunks and their spoken forms), speaks every
chunk with the engine and voice (Kokoro too: `--engine kokoro --voice af_heart`), hears each
with `Listener` and judges it against its spoken form. It prints the corpus WER, the
distribution of per-chunk WER and longest missing run (percentiles), how many clean chunks
each candidate threshold would flag, the chunks flagged at the thresholds (the defaults unless
given; text and what was heard), and the cost of listening: CPU-seconds per minute of audio
(this process's CPU time while hearing, all threads) and wall time.

`--drop-sentences` also hears, for every chunk of two or more sentences, its audio with one
sentence's words missing (the chunk's text judged against the audio of the chunk without its
longest sentence): the share of those the thresholds catch.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import numpy as np

from audiopub.book.epub.reader import read_epub
from audiopub.book.models import Chunk
from audiopub.jobs.book_plan import plan_book
from audiopub.jobs.submission import parse_chapter_selection
from audiopub.listen import Clip, Listener, Thresholds, judge
from audiopub.listen.judge import normalise
from audiopub.tts.engine import Engine, SynthesisOptions
from audiopub.tts.registry import get_engine

BATCH = 8  # clips heard together


def percentiles(values: list[float]) -> str:
    if not values:
        return "-"
    points = np.percentile(np.asarray(values, dtype=float), [50, 90, 95, 99])
    return (
        " ".join(f"p{p}={v:.3g}" for p, v in zip((50, 90, 95, 99), points))
        + f" max={max(values):.3g}"
    )


def hear_all(listener: Listener, clips: list[Clip]) -> tuple[list[str], float, float]:
    """Transcripts, CPU-seconds and wall seconds spent hearing."""
    heard: list[str] = []
    cpu, wall = time.process_time(), time.perf_counter()
    for start in range(0, len(clips), BATCH):
        heard += listener.hear(clips[start : start + BATCH])
    return heard, time.process_time() - cpu, time.perf_counter() - wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("book", type=Path)
    parser.add_argument("--chapters", help="1-based selection, e.g. 2-3 (default: all)")
    parser.add_argument("--engine", default="piper")
    parser.add_argument("--voice", help="default: the engine's first")
    parser.add_argument("--model", default="base", help="whisper size (default base)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--limit", type=int, help="at most this many chunks")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--gpu", action="store_true", help="listen on CUDA (float16)")
    parser.add_argument("--drop-sentences", action="store_true")
    parser.add_argument("--flagged-only", action="store_true", help="list only flagged chunks")
    defaults = Thresholds()
    parser.add_argument("--max-missing-run", type=int, default=defaults.max_missing_run)
    parser.add_argument("--max-wer", type=float, default=defaults.max_wer)
    parser.add_argument("--min-words-for-wer", type=int, default=defaults.min_words_for_wer)
    args = parser.parse_args()

    book = read_epub(args.book)
    engine = get_engine(args.engine, threads=args.threads)
    voice = args.voice or engine.voices()[0].id
    language = book.language or "en"
    selection = (
        parse_chapter_selection(args.chapters, len(book.chapters)) if args.chapters else None
    )
    chunks = [
        chunk
        for _, planned in plan_book(book, engine.max_chunk_chars, selection)
        for chunk in planned
    ][: args.limit]
    print(
        f"{book.title}: {len(chunks)} chunks, {args.engine} {voice}, whisper:{args.model}, "
        f"{args.threads} threads"
    )

    started = time.perf_counter()
    options = SynthesisOptions(seed=args.seed, language=language)
    spoken = engine.synthesize([c.spoken for c in chunks], voice, options)
    audio_s = sum(r.duration_s for r in spoken)
    print(f"spoke {audio_s / 60:.1f} audio minutes in {time.perf_counter() - started:.0f} s")

    load = time.perf_counter()
    listener = Listener.load(args.model, use_gpu=args.gpu, threads=args.threads)
    print(f"listener loaded in {time.perf_counter() - load:.1f} s on {listener.device}")
    clips = [Clip(r.audio, r.sample_rate, language) for r in spoken]
    heard, cpu_s, wall_s = hear_all(listener, clips)
    print(
        f"listening: {cpu_s / (audio_s / 60):.1f} CPU-s and {wall_s / (audio_s / 60):.1f} "
        f"wall-s per audio minute ({cpu_s:.0f} CPU-s, {wall_s:.0f} s for "
        f"{audio_s / 60:.1f} min)"
    )

    limits = Thresholds(args.max_missing_run, args.max_wer, args.min_words_for_wer)
    verdicts = [judge(c.spoken, text, language, limits) for c, text in zip(chunks, heard)]
    words = [len(normalise(c.spoken, language)) for c in chunks]
    edits = sum(v.wer * n for v, n in zip(verdicts, words))
    print(f"corpus WER {edits / max(1, sum(words)):.4f} over {sum(words)} words")
    print(f"per-chunk WER   {percentiles([v.wer for v in verdicts])}")
    print(f"missing run     {percentiles([float(v.missing_run) for v in verdicts])}")
    long_chunks = [v for v, n in zip(verdicts, words) if n >= limits.min_words_for_wer]
    print(
        "chunks with a missing run of at least k: "
        + ", ".join(f"k={k}: {sum(v.missing_run >= k for v in verdicts)}" for k in range(2, 9))
    )
    print(
        f"chunks of {limits.min_words_for_wer}+ words above a WER of w: "
        + ", ".join(
            f"w={w}: {sum(v.wer > w for v in long_chunks)}" for w in (0.2, 0.25, 0.3, 0.35, 0.4)
        )
    )
    flagged = [i for i, v in enumerate(verdicts) if v.flagged]
    print(
        f"flagged at {limits}: {len(flagged)} of {len(chunks)} "
        f"({len(flagged) / max(1, len(chunks)):.1%})"
    )
    for i in flagged if args.flagged_only else range(len(chunks)):
        if args.flagged_only or verdicts[i].flagged:
            print(
                f"  [{chunks[i].chapter_index}:{chunks[i].index}] {verdicts[i].reason} "
                f"(WER {verdicts[i].wer:.2f})\n    text:  {chunks[i].spoken}\n"
                f"    heard: {heard[i]}"
            )
    if args.drop_sentences:
        _drop_sentences(engine, voice, options, listener, chunks, language, limits)


def _drop_sentences(
    engine: Engine,
    voice: str,
    options: SynthesisOptions,
    listener: Listener,
    chunks: list[Chunk],
    language: str,
    limits: Thresholds,
) -> None:
    """Each chunk of two or more sentences judged against its audio without its longest one."""
    cases = []
    for chunk in chunks:
        sentences = [s for s in re.split(r"(?<=[.!?;])\s+", chunk.spoken) if s.strip()]
        if len(sentences) < 2:
            continue
        longest = max(sentences, key=len)
        rest = " ".join(s for s in sentences if s is not longest)
        cases.append((chunk.spoken, rest, len(normalise(longest, language))))
    if not cases:
        print("no chunk has two sentences")
        return
    spoken = engine.synthesize([rest for _, rest, _ in cases], voice, options)
    heard, _, _ = hear_all(listener, [Clip(r.audio, r.sample_rate, language) for r in spoken])
    caught = [
        judge(text, said, language, limits).flagged for (text, _, _), said in zip(cases, heard)
    ]
    dropped = [n for _, _, n in cases]
    print(
        f"a sentence dropped ({min(dropped)}-{max(dropped)} words, median "
        f"{int(np.median(dropped))}): {sum(caught)} of {len(cases)} caught"
    )
    for (text, _, n), hit in zip(cases, caught):
        if not hit:
            print(f"  missed ({n} words dropped): {text}")


if __name__ == "__main__":
    main()
