"""Entity typing (Open Entity / UFET) reading."""

from spanbert_lib.entity_typing.dataset_readers.open_entity import OpenEntityReader, TypingReadStats  # noqa: F401
from spanbert_lib.entity_typing.dataset_readers.open_entity_format import (  # noqa: F401
    EntityTypingFormatError,
    MentionExample,
    iter_mention_records,
    parse_mention_record,
)
