"""Span-based named entity recognition (flat CoNLL-2003, nested LitBank): readers, decoding, metric."""

import spanbert_lib.ner.dataset_readers  # noqa: F401
import spanbert_lib.ner.decoding  # noqa: F401
import spanbert_lib.ner.metrics  # noqa: F401
