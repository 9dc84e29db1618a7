"""The ``entity_typing`` predictor (sentence + mention character offsets -> types)."""

from spanbert_lib.entity_typing.predictors.spanbert_entity_typing import SpanBertEntityTypingPredictor  # noqa: F401
