"""Token embedders; importing this package registers ``segmented_transformer``."""

from spanbert_lib.common.token_embedders.segmented_transformer_embedder import (  # noqa: F401
    SegmentedTransformerEmbedder,
)
