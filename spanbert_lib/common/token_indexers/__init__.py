"""Token indexers; importing this package registers ``segmented_wordpiece``."""

from spanbert_lib.common.token_indexers.segmentation import (  # noqa: F401
    SegmentedDocument,
    segment_document,
    segment_words,
)
from spanbert_lib.common.token_indexers.segmented_wordpiece_indexer import (  # noqa: F401
    SegmentedWordpieceIndexer,
    SentenceToken,
    sentence_tokens,
)
