"""Coreference clusters of raw texts in three lines (:class:`Coreference`)."""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

from spanbert_lib.pipelines.text_model import TextModel

CharSpan = Tuple[int, int]


@dataclass
class CorefDoc:
    """
    The clusters of one text.

    # Parameters

    text : `str`
        The text as given.
    clusters : `List[List[CharSpan]]`
        Each cluster's mentions as ``(start, end)`` character offsets into ``text``, end exclusive, in order.
    """

    text: str
    clusters: List[List[CharSpan]] = field(default_factory=list)

    @property
    def cluster_strings(self) -> List[List[str]]:
        """Each cluster's mentions as strings."""
        return [[self.text[start:end] for start, end in cluster] for cluster in self.clusters]

    @property
    def resolved_text(self) -> str:
        """``text`` with each later mention replaced by its cluster's first mention."""
        from spanbert_lib.common.predictors.text_views import resolved_text

        return resolved_text(self.text, self.clusters)


class Coreference(TextModel[CorefDoc]):
    """
    A trained ``spanbert_coref`` model over raw texts::

        from spanbert_lib import Coreference
        coref = Coreference("models/litbank_coref/model.tar.gz")   # or an installed model package's name
        doc = coref.predict(["Anna met Tom in Paris. She thanked him."])[0]
        doc.clusters          # [[(0, 4), (23, 26)], [(9, 12), (35, 38)]]
        doc.cluster_strings   # [["Anna", "She"], ["Tom", "him"]]

    A text is one document of the model whatever its length (encoded in independent segments). Parameters: see
    :class:`~spanbert_lib.pipelines.text_model.TextModel`.
    """

    model_type = "spanbert_coref"
    predictor_name = "spanbert_coref"

    def predictor_input(self, text: str) -> Dict[str, Any]:
        return {"document": text}

    def result(self, text: str, output: Dict[str, Any]) -> CorefDoc:
        clusters = [[(int(start), int(end)) for start, end in cluster] for cluster in output["char_clusters"]]
        return CorefDoc(text, clusters)
