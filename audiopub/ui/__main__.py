"""`python -m audiopub.ui` starts the web UI on 127.0.0.1:8080 (`audiopub serve` has options)."""

from audiopub.ui.app import main

if __name__ in {"__main__", "__mp_main__"}:
    main()
