"""supertonic"""
