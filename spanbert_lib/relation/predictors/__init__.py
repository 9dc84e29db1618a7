"""Relation predictors (TACRED-style tokens or raw text with character spans)."""
from spanbert_lib.relation.predictors.raw_text import RawTextSpanError, tokenize_with_entities  # noqa: F401
from spanbert_lib.relation.predictors.relation_classifier import RelationClassifierPredictor  # noqa: F401
