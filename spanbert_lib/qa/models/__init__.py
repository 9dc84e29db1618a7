"""Extractive QA model: transformer + start/end layer, decoding over every window of a question."""
from spanbert_lib.qa.models.span_decoding import null_scores, span_candidate_scores, top_spans  # noqa: F401
from spanbert_lib.qa.models.spanbert_qa import SpanBertQuestionAnswering  # noqa: F401
