"""Text-to-speech engines behind one contract (see engine.py)."""
