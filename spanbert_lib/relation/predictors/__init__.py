"""Relation predictors (TACRED-style tokens, raw text with character spans, SemEval-2010 tagged sentences)."""

from spanbert_lib.relation.predictors.raw_text import RawTextSpanError, tokenize_with_entities  # noqa: F401
from spanbert_lib.relation.predictors.spanbert_relation_classifier import SpanBertRelationClassifierPredictor  # noqa: F401
from spanbert_lib.relation.predictors.spanbert_semeval2010_task8 import SpanBertSemEval2010Task8Predictor  # noqa: F401
