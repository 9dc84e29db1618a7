"""Span-NER model (``span_ner``) and the chunking of candidate spans into encoder passes."""

from spanbert_lib.ner.models.span_chunks import SpanChunkLayout  # noqa: F401
from spanbert_lib.ner.models.span_ner import SpanNer  # noqa: F401
