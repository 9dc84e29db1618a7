"""Span-based NER (flat CoNLL-2003, nested LitBank): readers, model, decoding, predictor, metric."""

import spanbert_lib.ner.dataset_readers  # noqa: F401
import spanbert_lib.ner.decoding  # noqa: F401
import spanbert_lib.ner.metrics  # noqa: F401
import spanbert_lib.ner.models  # noqa: F401
import spanbert_lib.ner.predictors  # noqa: F401
