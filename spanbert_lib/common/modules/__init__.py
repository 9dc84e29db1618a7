"""Reusable torch modules: span-boundary heads, MLM head."""
