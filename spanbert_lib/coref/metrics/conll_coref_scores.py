"""The CoNLL-2012 scorer's metrics as an allennlp ``Metric`` accumulated over documents."""

from typing import Dict, Sequence, cast

import torch
from allennlp.training.metrics import Metric

from spanbert_lib.common.span_types import Span
from spanbert_lib.coref.metrics.scorer import ALL_METRICS, CorefScoreAccumulator

DocumentClusters = Sequence[Sequence[Span]]

_COUNT_NAMES = ("muc", "bcub", "ceafm", "ceafe", "blanc", "mentions")


# Not "conll_coref_scores": allennlp-models registers its own (different API) under that name.
@Metric.register("conll2012_coref_scores")
class ConllCorefScores(Metric):
    """
    MUC, B-cubed, CEAFm, CEAFe and BLANC with the semantics of the reference scorer v8.01
    (``spanbert_lib.coref.metrics.scorer``), micro-averaged over every document seen since
    the last reset.

    Call it with a batch, ``metric(predicted_clusters, gold_clusters)``. ``get_metric`` returns
    flat floats: ``{muc,bcub,ceafm,ceafe,blanc,mention}_{precision,recall,f1}`` and
    ``conll_f1``.
    """

    supports_distributed = True

    def __init__(self) -> None:
        self._accumulator = CorefScoreAccumulator(max_repeated_mentions=None)

    def __call__(  # type: ignore[override]  # why: takes clusters, not allennlp's tensors
        self,
        predicted_clusters: Sequence[DocumentClusters],
        gold_clusters: Sequence[DocumentClusters],
    ) -> None:
        """
        Adds a batch of documents.

        # Parameters

        predicted_clusters : `Sequence[DocumentClusters]`
            One item per document: its clusters, a cluster being a list of inclusive
            ``(start, end)`` word (or wordpiece) spans.
        gold_clusters : `Sequence[DocumentClusters]`
            The gold clusters of the same documents, with the same offsets as the predictions.
        """
        if len(predicted_clusters) != len(gold_clusters):
            raise ValueError(
                f"got predicted clusters for {len(predicted_clusters)} documents "
                f"but gold clusters for {len(gold_clusters)}"
            )
        for predicted, gold in zip(predicted_clusters, gold_clusters):
            self.add_document(predicted, gold)

    def add_document(self, predicted_clusters: DocumentClusters, gold_clusters: DocumentClusters) -> None:
        self._accumulator.add_document(gold_clusters, predicted_clusters)

    def _reduced_accumulator(self) -> CorefScoreAccumulator:
        from allennlp.nn.util import dist_reduce_sum, is_distributed

        if not is_distributed():
            return self._accumulator
        flat = [value for name in _COUNT_NAMES for value in self._accumulator.counts[name]]
        summed = dist_reduce_sum(torch.tensor(flat, dtype=torch.float64)).tolist()
        reduced = CorefScoreAccumulator()
        offset = 0
        for name in _COUNT_NAMES:
            size = len(reduced.counts[name])
            reduced.counts[name] = summed[offset : offset + size]
            offset += size
        return reduced

    def get_metric(self, reset: bool = False) -> Dict[str, float]:
        scores = self._reduced_accumulator().scores()
        metrics: Dict[str, float] = {}
        for name in ALL_METRICS + ("mentions",):
            prefix = "mention" if name == "mentions" else name
            per_metric = cast(Dict[str, float], scores[name])  # all but conll_f1 are {recall, precision, f1}
            for kind in ("precision", "recall", "f1"):
                metrics[f"{prefix}_{kind}"] = float(per_metric[kind])
        metrics["conll_f1"] = float(cast(float, scores["conll_f1"]))
        if reset:
            self.reset()
        return metrics

    def reset(self) -> None:
        self._accumulator.reset()
