"""Relation evaluation: TACRED (official scorer semantics) and SemEval-2010 Task 8 (official scorer v1.2)."""

from spanbert_lib.relation.metrics.semeval2010_f1 import (  # noqa: F401
    SemEval2010MacroF1,
    semeval2010_official_score,
)
from spanbert_lib.relation.metrics.tacred_f1 import TacredF1, micro_scores, tacred_score  # noqa: F401
