"""Predicting the SemEval-2010 Task 8 relation of a sentence with ``<e1>``/``<e2>``-tagged nominals."""

from typing import TYPE_CHECKING, cast

from allennlp.common.util import JsonDict
from allennlp.data import Instance
from allennlp.predictors.predictor import Predictor

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.relation.predictors.spanbert_relation_classifier import SpanBertRelationClassifierPredictor

if TYPE_CHECKING:
    from spanbert_lib.relation.dataset_readers.semeval2010 import SemEval2010Task8Reader


@Predictor.register("spanbert_semeval2010_task8")
class SpanBertSemEval2010Task8Predictor(SpanBertRelationClassifierPredictor):
    """
    Predictor for ``spanbert_relation_classifier`` trained with the ``spanbert_semeval2010_task8`` reader.

    Input: ``{"sentence": "The <e1>burst</e1> was caused by <e2>pressure</e2>.", "id": optional}``.
    Output: ``label`` (the most probable directed relation, e.g. ``Cause-Effect(e2,e1)``),
    ``probs`` (in vocabulary order), ``class_probabilities`` (``{label: probability}``),
    ``tokens`` (the wordpieces the model saw), ``logits``.
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        sentence = json_dict.get("sentence")
        if not isinstance(sentence, str):
            raise UserInputError(
                "semeval2010_task8 predictor input needs 'sentence': a string with "
                "<e1>...</e1> and <e2>...</e2> around the two nominals",
                record=None if "id" not in json_dict else str(json_dict["id"]),
            )
        reader = cast("SemEval2010Task8Reader", self._dataset_reader)  # as the class docstring says
        return reader.text_to_instance(sentence=sentence, example_id=json_dict.get("id"))
