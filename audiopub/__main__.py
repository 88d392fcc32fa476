"""`python -m audiopub` runs the command line."""

from audiopub.cli import main

raise SystemExit(main())
