"""Cowork: a local-first AI coworker."""

__version__ = "0.1.0"
