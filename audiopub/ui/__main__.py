"""`python -m audiopub.ui` starts the web UI on 127.0.0.1:8080 (`audiopub serve` has options).

Also the NiceGUI "main file" of the UI tests: run there, it uses the services the test set up.
"""

from audiopub.ui.app import main

if __name__ in {"__main__", "__mp_main__"}:
    main()
