"""
A model that predicts nothing says so. Training whose best model keeps no coreference mentions (or predicts no
entity) on the validation data, and ``allennlp evaluate`` of such a model, end with one warning line naming what to
change, instead of a silent CoNLL F1 of 0.0: a short run (few documents, few epochs) often gives a model whose
mention scores are all below the threshold that keeps a mention.

The models report the count in their metrics: ``predicted_mentions`` (``spanbert_coref``: mentions in the predicted
clusters per document) and ``predicted_entities`` (``spanbert_span_ner``).
"""

import logging
import sys
from typing import Any, Dict, Optional

logger = logging.getLogger(__name__)

# metric -> what a model that predicts none of it should change
EMPTY_PREDICTION_HINTS = {
    "predicted_mentions": (
        "keeps no mentions (no span was linked to an antecedent or, with singletons, scored as a mention): train "
        "longer (trainer.num_epochs) or on more documents; the shipped LitBank config needs its 6 epochs on 70 "
        "documents"
    ),
    "predicted_entities": (
        "predicts no entity: train longer (trainer.num_epochs) or on more sentences, or lower the prediction-time "
        "bias model.outside_logit_bias"
    ),
}


def empty_prediction_warning(metrics: Dict[str, Any], prefix: str = "") -> Optional[str]:
    """
    What a model whose ``metrics`` count no prediction should change, or None.

    # Parameters

    metrics : `Dict[str, Any]`
        Metrics of a model of this library (``metrics.json``, ``evaluate``'s output).
    prefix : `str`, optional (default = `""`)
        Of the metric names, e.g. ``"best_validation_"``.
    """
    for metric, hint in EMPTY_PREDICTION_HINTS.items():
        value = metrics.get(prefix + metric)
        if isinstance(value, (int, float)) and value == 0:
            return f"the model {hint}"
    return None


def warn(message: str) -> None:
    """One ``warning:`` line on stderr, and in the log."""
    logger.warning(message)
    print(f"warning: {message}", file=sys.stderr, flush=True)


def _callback_class():
    from allennlp.training.callbacks.callback import TrainerCallback

    class EmptyPredictionsCallback(TrainerCallback):
        """At the end of training: a warning when the best model predicted nothing on the validation data."""

        def on_end(
            self,
            trainer,
            metrics: Optional[Dict[str, Any]] = None,
            epoch: Optional[int] = None,
            is_primary: bool = True,
            **_,
        ):
            if not is_primary or not metrics:
                return
            message = empty_prediction_warning(metrics, "best_validation_")
            if message is not None:
                warn(f"{self.serialization_dir}: on the validation data {message}")

    return EmptyPredictionsCallback


def empty_predictions_callback(serialization_dir: str) -> Any:
    """A new ``EmptyPredictionsCallback`` (a ``TrainerCallback``, built when allennlp's training has been imported)."""
    return _callback_class()(serialization_dir)


def warn_on_empty_evaluations(module) -> None:
    """Safeguard for ``allennlp.commands.evaluate``: ``evaluate`` of a model that predicted nothing warns."""
    original = module.evaluate_from_args
    if getattr(original, "_spanbert_lib_empty_predictions", False):
        return

    def evaluate_from_args(args, *rest, **kwargs):
        metrics = original(args, *rest, **kwargs)
        message = empty_prediction_warning(metrics or {}) if isinstance(metrics, dict) else None
        if message is not None:
            warn(f"{args.archive_file}: on {args.input_file} {message}")
        return metrics

    evaluate_from_args._spanbert_lib_empty_predictions = True  # type: ignore[attr-defined]  # why: shim marker
    evaluate_from_args.__wrapped__ = original  # type: ignore[attr-defined]  # why: as functools.wraps sets it
    module.evaluate_from_args = evaluate_from_args
