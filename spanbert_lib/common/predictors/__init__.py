"""Pieces shared by the task predictors: raw or pre-tokenised text as sentences of words with offsets."""

from spanbert_lib.common.predictors.text_views import (  # noqa: F401
    DEFAULT_SPACY_PIPELINE,
    TokenizedText,
    character_clusters,
    join_pretokenized,
    resolved_text,
    spacy_pipeline,
    tokenize_text,
)
