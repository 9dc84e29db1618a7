"""The ``entity_typing`` predictor (sentence + mention character offsets -> types)."""

from spanbert_lib.entity_typing.predictors.entity_typing import EntityTypingPredictor  # noqa: F401
