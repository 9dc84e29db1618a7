"""Relation extraction (TACRED): reader, entity markers, classifier, predictor, official scorer."""
import spanbert_lib.relation.dataset_readers  # noqa: F401
import spanbert_lib.relation.metrics  # noqa: F401
import spanbert_lib.relation.models  # noqa: F401
import spanbert_lib.relation.predictors  # noqa: F401
