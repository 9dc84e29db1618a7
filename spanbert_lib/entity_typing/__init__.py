"""Entity typing (Open Entity, UFET): reader, model, predictor and loose micro F1."""

import spanbert_lib.entity_typing.dataset_readers  # noqa: F401
import spanbert_lib.entity_typing.metrics  # noqa: F401
import spanbert_lib.entity_typing.models  # noqa: F401
import spanbert_lib.entity_typing.predictors  # noqa: F401
