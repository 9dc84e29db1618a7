"""Extractive QA model: transformer + start/end layer, decoding over every window of a question."""

from spanbert_lib.qa.models.span_decoding import (  # noqa: F401
    null_scores,
    span_candidate_scores,
    top_spans,
    window_word_boundaries,
)
from spanbert_lib.qa.models.spanbert_qa import SpanBertQuestionAnswering  # noqa: F401
