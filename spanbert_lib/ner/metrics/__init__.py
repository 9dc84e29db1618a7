"""Exact-match entity P/R/F1 (conlleval semantics)."""

from spanbert_lib.ner.metrics.ner_span_f1 import NerSpanF1, count_entities, entity_scores  # noqa: F401
