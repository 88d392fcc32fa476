"""The web UI (NiceGUI): upload a book, pick a voice, follow the jobs, play the results.

    app.py          start-up and shutdown, routes, `main(host, port, show)`
    guard.py        who may use it: host names, other sites' pages, frames, the token
    services.py     the one `Services` object of the process: job store, worker, event bus,
                    GPU monitor, engine catalogue, preferences; pages get it from `current()`
    activity.py     the worker's events turned into a per-job log and latest figures
    pages/          one module per page (convert, library)
    components/     book card, settings, job panel, GPU panel
    theme.py        the shared `frame()`: header, navigation, dark mode

The domain code never imports anything from here.
"""
