"""Chunks spoken on a Ray cluster (`--ray ADDRESS`): the job's batches go to actors that each
hold an engine, the audio comes back to this process, which writes, marks, stitches and muxes
as for a job made here. Ray is optional (`pip install 'audiopub[cluster]'`)."""
