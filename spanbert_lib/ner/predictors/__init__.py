"""The ``span_ner`` predictor (raw text or pre-tokenised sentences -> entities)."""

from spanbert_lib.ner.predictors.span_ner import SpanNerPredictor  # noqa: F401
