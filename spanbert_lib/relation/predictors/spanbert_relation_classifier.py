"""Predicting the relation between two marked entities of a sentence."""

from typing import TYPE_CHECKING, Any, Dict, List, cast

import numpy
from allennlp.common.util import JsonDict, sanitize
from allennlp.data import Instance
from allennlp.data.fields import MetadataField
from allennlp.predictors.predictor import Predictor

from spanbert_lib.relation.predictors.raw_text import tokenize_with_entities

if TYPE_CHECKING:
    from spanbert_lib.relation.dataset_readers.tacred import TacredReader

_TOKEN_KEYS = ("subj_start", "subj_end", "obj_start", "obj_end")


@Predictor.register("spanbert_relation_classifier")
class SpanBertRelationClassifierPredictor(Predictor):
    """
    Predictor for ``spanbert_relation_classifier`` and ``spanbert_entity_pair_relation_classifier``
    (with the ``spanbert_tacred`` reader). Two input forms:

    * TACRED style: ``{"token": [...], "subj_start", "subj_end", "obj_start", "obj_end"
      (inclusive token indices), "subj_type", "obj_type", optional "id"}``; PTB escapes allowed;
    * raw text: ``{"sentence": "...", "subj_char_span": [start, end], "obj_char_span": [start, end]
      (character offsets, end exclusive), "subj_type", "obj_type", optional "id"}``, tokenised with
      spaCy's English rules (:mod:`~spanbert_lib.relation.predictors.raw_text`).

    Output: ``label`` (the most probable relation), ``probs`` (in vocabulary order),
    ``class_probabilities`` (``{relation: probability}``), ``tokens`` (the wordpieces the model
    saw), ``logits``.
    """

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        for key in ("subj_type", "obj_type"):
            if key not in json_dict:
                raise ValueError(f"relation predictor input lacks {key!r}")
        if "token" in json_dict:
            missing = [key for key in _TOKEN_KEYS if key not in json_dict]
            if missing:
                raise ValueError(f"relation predictor input with 'token' lacks {', '.join(missing)}")
            fields = {key: json_dict[key] for key in ("token", *_TOKEN_KEYS)}
        elif "sentence" in json_dict:
            missing = [key for key in ("subj_char_span", "obj_char_span") if key not in json_dict]
            if missing:
                raise ValueError(f"relation predictor input with 'sentence' lacks {', '.join(missing)}")
            fields = tokenize_with_entities(
                json_dict["sentence"], json_dict["subj_char_span"], json_dict["obj_char_span"]
            )
        else:
            raise ValueError("relation predictor input needs either 'token' (TACRED style) or 'sentence' (raw text)")
        reader = cast("TacredReader", self._dataset_reader)  # a spanbert_tacred reader, as the docstring says
        return reader.text_to_instance(
            tokens=fields["token"],
            subj_start=fields["subj_start"],
            subj_end=fields["subj_end"],
            obj_start=fields["obj_start"],
            obj_end=fields["obj_end"],
            subj_type=json_dict["subj_type"],
            obj_type=json_dict["obj_type"],
            example_id=json_dict.get("id"),
        )

    def _with_class_probabilities(self, instance: Instance, output: Dict[str, Any]) -> JsonDict:
        labels = self._model.vocab.get_index_to_token_vocabulary("labels")
        probs = numpy.asarray(output["probs"])
        output["class_probabilities"] = {labels[i]: float(p) for i, p in enumerate(probs)}
        output["tokens"] = cast(MetadataField, instance["metadata"])["wordpieces"]
        return sanitize(output)

    def predict_instance(self, instance: Instance) -> JsonDict:
        self._dataset_reader.apply_token_indexers(instance)
        output = self._model.forward_on_instance(instance)
        return self._with_class_probabilities(instance, output)

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        outputs = self._model.forward_on_instances(instances)
        return [self._with_class_probabilities(i, o) for i, o in zip(instances, outputs)]
