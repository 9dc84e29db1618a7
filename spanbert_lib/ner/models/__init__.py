"""Span-NER model (``spanbert_span_ner``) and the chunking of candidate spans into encoder passes."""

from spanbert_lib.ner.models.span_chunks import SpanChunkLayout  # noqa: F401
from spanbert_lib.ner.models.spanbert_span_ner import SpanBertSpanNer  # noqa: F401
