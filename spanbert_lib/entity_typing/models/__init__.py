"""Entity typing model (``entity_typing``)."""

from spanbert_lib.entity_typing.models.entity_typing import EntityTyping  # noqa: F401
