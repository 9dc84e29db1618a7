"""Entity typing model (``entity_typing``)."""

from spanbert_lib.entity_typing.models.spanbert_entity_typing import SpanBertEntityTyping  # noqa: F401
