"""SpanBERT pre-training: span masking, corpus readers, the MLM + SBO pre-training model."""

import spanbert_lib.pretraining.dataset_readers  # noqa: F401
import spanbert_lib.pretraining.masking  # noqa: F401
import spanbert_lib.pretraining.models  # noqa: F401
