"""The entity_typing predictor: a sentence and character offsets in, types with probabilities out."""

import pytest
import torch
from allennlp.common import Params
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.predictors import Predictor

from tests import REPO_ROOT

CONFIG = REPO_ROOT / "fixtures" / "configs" / "entity_typing" / "entity_typing_tiny.jsonnet"
DATA = REPO_ROOT / "fixtures" / "entity_typing" / "open_entity_luke.json"


@pytest.fixture(scope="module")
def predictor():
    params = Params.from_file(str(CONFIG))
    reader = DatasetReader.from_params(params["dataset_reader"])
    vocab = Vocabulary.from_instances(reader.read(str(DATA)))
    model = Model.from_params(vocab=vocab, params=params["model"])
    model.eval()
    return Predictor.by_name("spanbert_entity_typing")(model, reader)


def test_types_and_probabilities_of_a_mention(predictor):
    model = predictor._model
    names = model.vocab.get_index_to_token_vocabulary("labels")
    with torch.no_grad():  # person 0.88, city 0.73, everything else below 0.5
        model.classifier.weight.zero_()
        model.classifier.bias.fill_(-1.0)
        model.classifier.bias[model.vocab.get_token_index("person", "labels")] = 2.0
        model.classifier.bias[model.vocab.get_token_index("city", "labels")] = 1.0
    sentence = "Yesterday Anna Karenina visited Moscow ."
    result = predictor.predict(sentence, 10, 23)
    assert result["mention"] == "Anna Karenina"
    assert result["types"] == ["person", "city"]
    probabilities = result["probabilities"]
    assert list(probabilities)[:2] == ["person", "city"] and set(probabilities) == set(names.values())
    assert probabilities["person"] == pytest.approx(torch.sigmoid(torch.tensor(2.0)).item())
    assert probabilities["group"] == pytest.approx(torch.sigmoid(torch.tensor(-1.0)).item())
    assert result["tokens"][0] == "[CLS]" and result["tokens"][-1] == "[SEP]"
    batch = predictor.predict_batch_json(
        [{"sentence": sentence, "start": 32, "end": 38}, {"sentence": "Moscow is cold .", "start": 0, "end": 6}]
    )
    assert [item["mention"] for item in batch] == ["Moscow", "Moscow"]


def test_the_untrained_model_runs_and_input_errors(predictor):
    result = predictor.predict_json({"sentence": "The river boat left Boston .", "start": 20, "end": 26})
    assert result["mention"] == "Boston"
    assert all(0.0 < p < 1.0 for p in result["probabilities"].values())
    with pytest.raises(ValueError, match="lacks start, end"):
        predictor.predict_json({"sentence": "Boston ."})
