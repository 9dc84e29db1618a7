"""Relation predictors (TACRED-style tokens, raw text with character spans, SemEval-2010 tagged sentences)."""

from spanbert_lib.relation.predictors.raw_text import RawTextSpanError, tokenize_with_entities  # noqa: F401
from spanbert_lib.relation.predictors.relation_classifier import RelationClassifierPredictor  # noqa: F401
from spanbert_lib.relation.predictors.semeval2010 import SemEval2010Task8Predictor  # noqa: F401
