"""Running conversions: the pipeline (and, later, the durable job queue around it)."""
