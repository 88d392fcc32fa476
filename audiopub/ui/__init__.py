"""The web UI (NiceGUI): upload a book, pick a voice, follow the jobs, play the results.

    app.py          start-up and shutdown, routes, `main(host, port, show)`; makes the
                    services and hands them to the routes and pages it registers
    guard.py        who may use it: host names, other sites' pages, frames, the token
    services.py     the one `Services` object of the process: job store, worker, event bus,
                    GPU monitor, preferences, and the parts below
    job_control.py  queue, pause, resume, cancel, delete a job
    library.py      the finished books: covers, timings, subtitles, exports
    engine_catalog.py  the engines and voices offered, whether the GPU switch can be
    previews.py     speech heard in the page (previews, Hear it), lexicon entries checked
    activity.py     the worker's events turned into a per-job log and latest figures
    pages/          one module per page (convert, library, lexicon, voices)
    components/     book card, settings, job panel, GPU panel, the player of spoken previews
    theme.py        the shared `frame()`: header, navigation, dark mode

The domain code never imports anything from here.
"""
