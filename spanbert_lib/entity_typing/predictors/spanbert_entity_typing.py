"""The ``spanbert_entity_typing`` predictor: the types of a mention given by character offsets."""

from typing import Any, Dict, List, cast

from allennlp.common.util import JsonDict, sanitize
from allennlp.data import Instance
from allennlp.data.fields import MetadataField, TextField
from allennlp.predictors.predictor import Predictor


@Predictor.register("spanbert_entity_typing")
class SpanBertEntityTypingPredictor(Predictor):
    """
    Predictor for ``spanbert_entity_typing`` with the ``spanbert_open_entity`` reader.

    Input: ``{"sentence": "...", "start": int, "end": int}``: the mention is
    ``sentence[start:end]`` (character offsets, end exclusive, as in the LUKE Open Entity files).

    Output: ``mention`` (its text), ``types`` (the predicted types, logit above the model's
    threshold, most probable first), ``probabilities`` (``{type: probability}`` for every type,
    most probable first) and ``tokens`` (the wordpieces the model saw).
    """

    def predict(self, sentence: str, start: int, end: int) -> JsonDict:
        """
        The types of the mention ``sentence[start:end]``.

        # Parameters

        sentence : `str`
            The sentence.
        start : `int`
            First character of the mention.
        end : `int`
            One past its last character.

        # Returns

        `JsonDict`
            ``mention``, ``types``, ``probabilities`` and ``tokens`` (see the class docstring).
        """
        return self.predict_json({"sentence": sentence, "start": start, "end": end})

    def _json_to_instance(self, json_dict: JsonDict) -> Instance:
        missing = [key for key in ("sentence", "start", "end") if key not in json_dict]
        if missing:
            raise ValueError(
                f"entity_typing predictor input lacks {', '.join(missing)} (give 'sentence' and the "
                "mention's character offsets 'start', 'end', end exclusive)"
            )
        return self._dataset_reader.text_to_instance(json_dict["sentence"], json_dict["start"], json_dict["end"])

    def _result(self, instance: Instance, output: Dict[str, Any]) -> JsonDict:
        names = self._model.vocab.get_index_to_token_vocabulary(getattr(self._model, "_label_namespace", "labels"))
        probs = [float(p) for p in output["probs"]]
        order = sorted(range(len(probs)), key=lambda i: -probs[i])
        predicted = output["predicted"]
        metadata = cast(MetadataField, instance["metadata"])
        return sanitize(
            {
                "mention": metadata["mention"],
                "types": [names[i] for i in order if predicted[i]],
                "probabilities": {names[i]: probs[i] for i in order},
                "tokens": [token.text for token in cast(TextField, instance["tokens"]).tokens],
            }
        )

    def predict_instance(self, instance: Instance) -> JsonDict:
        return self.predict_batch_instance([instance])[0]

    def predict_batch_instance(self, instances: List[Instance]) -> List[JsonDict]:
        for instance in instances:
            self._dataset_reader.apply_token_indexers(instance)
        outputs = self._model.forward_on_instances(instances)
        return [self._result(instance, output) for instance, output in zip(instances, outputs)]
