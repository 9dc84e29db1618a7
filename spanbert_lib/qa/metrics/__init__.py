"""SQuAD v1.1/v2.0 evaluation (official-script semantics) and the allennlp metrics built on it."""

from spanbert_lib.qa.metrics.squad_evaluation import (  # noqa: F401
    SquadEvaluationError,
    evaluate_v1,
    evaluate_v2,
    normalize_answer,
)
from spanbert_lib.qa.metrics.squad_metrics import SquadV1Metrics, SquadV2Metrics  # noqa: F401
