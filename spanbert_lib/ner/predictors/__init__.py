"""The ``spanbert_span_ner`` predictor (raw text or pre-tokenised sentences -> entities)."""

from spanbert_lib.ner.predictors.spanbert_span_ner import SpanBertSpanNerPredictor  # noqa: F401
