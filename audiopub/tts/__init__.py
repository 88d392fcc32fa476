"""Text-to-speech engines behind one contract (see engine.py).

piper/, kokoro/, supertonic/
                one package per engine: the engine, its files, graph rewrites, text front
                end and download, described by its `EngineInfo` (engine_info.py)
registry        the engines (`register`, `engines`), loaded and cached by name
onnx_runtime, graph_rewrite, half_precision, conv_layout, node_placement, batching,
phonemes        what the engines share: sessions, graph rewrites, batches, espeak-ng
hub, downloads  the Hugging Face Hub client and the steps every model download takes
"""
