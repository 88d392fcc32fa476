"""Reusable parts of the pages."""
