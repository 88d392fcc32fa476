"""kokoro"""
