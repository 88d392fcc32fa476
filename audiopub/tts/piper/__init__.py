"""piper"""
