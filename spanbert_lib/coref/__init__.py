"""Coreference resolution."""
