"""
Relation extraction (TACRED, SemEval-2010 Task 8): readers, entity markers, classifier, predictors, official scorers.
"""

import spanbert_lib.relation.dataset_readers  # noqa: F401
import spanbert_lib.relation.metrics  # noqa: F401
import spanbert_lib.relation.models  # noqa: F401
import spanbert_lib.relation.predictors  # noqa: F401
