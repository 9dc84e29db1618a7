"""TACRED evaluation (official scorer semantics)."""
from spanbert_lib.relation.metrics.tacred_f1 import TacredF1, micro_scores, tacred_score  # noqa: F401
