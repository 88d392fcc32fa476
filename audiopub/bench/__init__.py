"""`audiopub bench`: how fast Audiopub speaks, on this machine, measured honestly.

Characters per second and real-time factor for three text sizes (rows = steps), per-stage
times, device facts (provider actually used, CPU, GPU, peak VRAM and RSS), the share of the
compute bound, a whole book end to end, and Audiopub's pipeline against the engine's plain loop.
Results are JSON with a stable schema (docs/bench-schema.md, schema.json).

    command.py   arguments and modes           run.py      one benchmark run
    measure.py   the timed ways to speak       book.py     a whole EPUB
    machine.py   device facts, memory, matmul  flops.py    the compute bound
    results.py   dataclasses → JSON            tables.py   markdown, --report
    texts.py     the texts and synthetic books rss.py      memory growth by book size
"""
