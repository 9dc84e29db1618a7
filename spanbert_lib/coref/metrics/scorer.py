"""
Corpus-level coreference scores with the semantics of the CoNLL-2012 reference scorer v8.01.

Each metric is micro-averaged like the scorer: recall and precision numerators and
denominators are summed over documents (CEAF: aligned similarities and chain/mention counts;
BLANC: link counts, see ``blanc.py``), then ``R = num / den`` (0 when den = 0) and
``F1 = 2PR / (P + R)`` (0 when P + R = 0). CoNLL F1 = mean of the MUC, B-cubed and CEAFe F1.
"""

from typing import Dict, List, Optional, Sequence, Tuple, Union

from spanbert_lib.common.span_types import Span
from spanbert_lib.coref.metrics.b_cubed import b_cubed_counts
from spanbert_lib.coref.metrics.blanc import blanc_counts, blanc_scores
from spanbert_lib.coref.metrics.ceaf import ceaf_counts
from spanbert_lib.coref.metrics.mention_alignment import align_mentions
from spanbert_lib.coref.metrics.muc import muc_counts

DocumentClusters = Sequence[Sequence[Span]]

METRICS = ("muc", "bcub", "ceafm", "ceafe")
"""Metrics with (recall_num, recall_den, precision_num, precision_den) counts."""
ALL_METRICS = METRICS + ("blanc",)
MAX_REPEATED_MENTIONS = 10
"""The reference scorer refuses to score a response with more repeated mentions than this."""


class TooManyRepeatedMentions(ValueError):
    pass


def prf(recall_num: float, recall_den: float, precision_num: float, precision_den: float) -> Tuple[float, float, float]:
    recall = recall_num / recall_den if recall_den else 0.0
    precision = precision_num / precision_den if precision_den else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return recall, precision, f1


def _clusters_of(document) -> DocumentClusters:
    """A ConllDocument (its ``clusters``) or clusters themselves."""
    return getattr(document, "clusters", document)


class CorefScoreAccumulator:
    """
    Sums the scorer's per-document counts. ``add_document(key, response)`` takes clusters as
    lists of inclusive ``(start, end)`` spans; ``scores()`` returns the corpus scores.

    # Parameters

    max_repeated_mentions : `int`, optional (default = `None`)
        Raise ``TooManyRepeatedMentions`` once the responses added so far repeat more
        (key-matched) mentions than this, as the reference scorer refuses such runs; None never
        raises (repeats are dropped either way).
    """

    def __init__(self, max_repeated_mentions: Optional[int] = None) -> None:
        self.max_repeated_mentions = max_repeated_mentions
        self.reset()

    def reset(self) -> None:
        self.counts: Dict[str, List[float]] = {name: [0.0] * 4 for name in METRICS}
        self.counts["blanc"] = [0.0] * 8
        self.counts["mentions"] = [0.0] * 4
        self.num_documents = 0
        self.repeated_mentions = 0

    def add_document(self, key_clusters: DocumentClusters, response_clusters: DocumentClusters) -> None:
        chains = align_mentions(key_clusters, response_clusters)
        self.repeated_mentions += chains.repeated_mentions
        if self.max_repeated_mentions is not None and self.repeated_mentions > self.max_repeated_mentions:
            raise TooManyRepeatedMentions(
                f"found {self.repeated_mentions} repeated mentions (> "
                f"{self.max_repeated_mentions}) in the response; the reference scorer refuses "
                f"to score it: please fix the output"
            )
        ceafm, ceafe = ceaf_counts(chains.key, chains.response)
        per_metric = {
            "muc": muc_counts(chains.key, chains.response),
            "bcub": b_cubed_counts(chains.key, chains.response),
            "ceafm": ceafm,
            "ceafe": ceafe,
            "blanc": blanc_counts(chains.key, chains.response),
            "mentions": (
                chains.matched_mentions,
                chains.key_mentions,
                chains.matched_mentions,
                chains.response_mentions,
            ),
        }
        for name, values in per_metric.items():
            totals = self.counts[name]
            for index, value in enumerate(values):
                totals[index] += value
        self.num_documents += 1

    def scores(self) -> Dict[str, Union[float, Dict[str, float]]]:
        """
        The corpus scores of the documents added so far.

        # Returns

        `Dict[str, Union[float, Dict[str, float]]]`
            ``{"muc"|"bcub"|"ceafm"|"ceafe"|"blanc"|"mentions": {"recall", "precision", "f1"},
            "conll_f1": float}``, all fractions in [0, 1].
        """
        per_metric: Dict[str, Dict[str, float]] = {}
        for name in METRICS + ("mentions",):
            recall, precision, f1 = prf(*self.counts[name])
            per_metric[name] = {"recall": recall, "precision": precision, "f1": f1}
        recall, precision, f1 = blanc_scores(self.counts["blanc"])
        per_metric["blanc"] = {"recall": recall, "precision": precision, "f1": f1}
        result: Dict[str, Union[float, Dict[str, float]]] = {**per_metric}
        result["conll_f1"] = sum(per_metric[name]["f1"] for name in ("muc", "bcub", "ceafe")) / 3
        return result


def score_documents(
    key_docs: Sequence, response_docs: Sequence, max_repeated_mentions: Optional[int] = MAX_REPEATED_MENTIONS
) -> Dict[str, Union[float, Dict[str, float]]]:
    """
    Corpus scores of ``response_docs`` against ``key_docs``.

    # Parameters

    key_docs : `Sequence`
        The key documents, each a ``ConllDocument`` or a list of clusters of inclusive
        ``(start, end)`` word spans.
    response_docs : `Sequence`
        The response documents, parallel to ``key_docs``, in the same form.
    max_repeated_mentions : `int`, optional (default = `MAX_REPEATED_MENTIONS`)
        As :class:`CorefScoreAccumulator`'s; None never raises.

    # Returns

    `Dict[str, Union[float, Dict[str, float]]]`
        As ``CorefScoreAccumulator.scores``.
    """
    if len(key_docs) != len(response_docs):
        raise ValueError(
            f"{len(key_docs)} key documents but {len(response_docs)} response documents; they must be parallel"
        )
    accumulator = CorefScoreAccumulator(max_repeated_mentions=max_repeated_mentions)
    for key, response in zip(key_docs, response_docs):
        accumulator.add_document(_clusters_of(key), _clusters_of(response))
    return accumulator.scores()
