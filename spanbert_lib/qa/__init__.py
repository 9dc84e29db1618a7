"""Extractive question answering (SQuAD 1.1/2.0, MRQA): readers, model, predictor, official evaluation."""

import spanbert_lib.qa.dataset_readers  # noqa: F401
import spanbert_lib.qa.metrics  # noqa: F401
import spanbert_lib.qa.models  # noqa: F401
import spanbert_lib.qa.predictors  # noqa: F401
