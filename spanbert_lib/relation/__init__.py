"""Relation extraction (TACRED)."""
