"""Coreference resolution."""

import spanbert_lib.coref.dataset_readers  # noqa: F401
import spanbert_lib.coref.metrics  # noqa: F401
import spanbert_lib.coref.models  # noqa: F401
import spanbert_lib.coref.predictors  # noqa: F401
