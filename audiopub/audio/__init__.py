"""Audio output: `stitch` turns chunk audio into chapter WAVs, `mux` turns those into an .m4b."""
