"""
Reusable torch modules: span-boundary heads and extractors (also the pre-trained SBO head), masked-LM
heads, and the inputs of span models over wordpieces (``wordpiece_inputs``, ``default_span_extractor``).
"""

from spanbert_lib.common.modules.masked_lm_head import MaskedLanguageModelHead, TiedVocabularyDecoder  # noqa: F401
from spanbert_lib.common.modules.pretrained_span_boundary import (  # noqa: F401
    PretrainedSpanBoundarySpanExtractor,
    load_span_boundary_head,
    save_span_boundary_head,
)
from spanbert_lib.common.modules.span_boundary import (  # noqa: F401
    SpanBoundaryHead,
    SpanBoundarySpanExtractor,
    external_boundaries,
    gather_positions,
)
from spanbert_lib.common.modules.span_inputs import default_span_extractor, wordpiece_inputs  # noqa: F401
