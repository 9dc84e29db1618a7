"""Reusable torch modules: span-boundary heads and extractors, masked-LM heads."""
from spanbert_lib.common.modules.masked_lm_head import MaskedLanguageModelHead, TiedVocabularyDecoder  # noqa: F401
from spanbert_lib.common.modules.span_boundary import (  # noqa: F401
    ExternalBoundarySpanExtractor,
    SpanBoundaryHead,
    SpanBoundarySpanExtractor,
    external_boundaries,
    gather_positions,
)
