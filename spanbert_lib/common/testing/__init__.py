"""Helpers for tests: deterministic tiny local transformer models (:mod:`.tiny_models`)."""
