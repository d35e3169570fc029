"""Lantern: ask questions about the code in your workspace."""

__version__ = "0.1.0"
