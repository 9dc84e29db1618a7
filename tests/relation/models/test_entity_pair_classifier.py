"""LUKE-style entity_pair_relation_classifier: trains/saves/loads, logits by hand, works with the tacred predictor."""

import copy
import json

import pytest
import torch
import transformers
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import DatasetReader, Vocabulary
from allennlp.models import Model
from allennlp.predictors import Predictor

from spanbert_lib.common.modules.entity_aware import ENTITY_HEAD, ENTITY_TAIL
from spanbert_lib.relation.dataset_readers.tacred_schema import TACRED_RELATIONS
from tests import REPO_ROOT, TINY_BERT_DIR
from tests.entity_model_testing import LAST_LAYER_WORD_QUERIES, EntityModelTestCase, tensors_of

CONFIG = REPO_ROOT / "fixtures" / "configs" / "relation" / "tiny_entity_pair_classifier.jsonnet"
DATA = REPO_ROOT / "fixtures" / "relation" / "tacred_fixture.json"
LARGE_CONFIG = REPO_ROOT / "training_configs" / "relation" / "tacred_luke_spanbert_large.jsonnet"


class TestEntityPairRelationClassifier(EntityModelTestCase):
    CONFIG, DATA = CONFIG, DATA

    def test_entities_with_entity_aware_attention(self):
        model, _ = self.ensure_model_can_train_save_and_load(
            self.param_file, gradients_to_ignore=LAST_LAYER_WORD_QUERIES
        )
        assert model.classifier.in_features == 2 * 32

    def test_entities_with_plain_attention(self):
        # one query matrix shared by words and entities: every parameter gets a gradient
        self.ensure_model_can_train_save_and_load(
            self.param_file, overrides='{"model.encoder.entity_aware_attention": false}'
        )

    def test_without_entities(self):
        ignore = {
            name
            for name, _ in self.model.named_parameters()
            if name.startswith(("encoder.entity_embeddings.", "encoder.self_attentions."))
        }
        model, _ = self.ensure_model_can_train_save_and_load(
            self.param_file, overrides='{"model.use_entities": false}', gradients_to_ignore=ignore
        )
        assert model.classifier.in_features == 2 * 2 * 32

    def test_logits_are_the_head_and_tail_entity_states(self):
        model = self.build()
        tensors = tensors_of(self.instances[:4], self.vocab)
        output = model(**tensors)
        tokens = tensors["tokens"]["tokens"]
        mentions = torch.stack([tensors["subject_span"], tensors["object_span"]], dim=1)
        _, entities = model.encoder(
            tokens["token_ids"],
            tokens["mask"],
            tokens["type_ids"],
            entity_ids=torch.tensor([[ENTITY_HEAD, ENTITY_TAIL]] * 4),
            entity_spans=mentions,
        )
        expected = model.classifier(torch.cat([entities[:, 0], entities[:, 1]], dim=-1))
        torch.testing.assert_close(output["logits"], expected)
        torch.testing.assert_close(output["probs"], torch.softmax(expected, dim=-1))
        torch.testing.assert_close(output["loss"], torch.nn.functional.cross_entropy(expected, tensors["label"]))
        # "plain" scheme: the subject span is "Agnes Thornbury"'s own wordpieces, right after [CLS]
        words = self.instances[0]["metadata"]["wordpieces"]
        assert tensors["subject_span"][0].tolist() == [1, 13] and words[1] == "A" and words[14] == "was"
        assert set(model.get_metrics()) == {"precision", "recall", "f1", "accuracy"}

    def test_without_entities_the_features_are_the_mention_boundaries(self):
        model = self.build(use_entities=False)
        tensors = tensors_of(self.instances[:4], self.vocab)
        output = model(**tensors)
        tokens = tensors["tokens"]["tokens"]
        states = (
            transformers.AutoModel.from_pretrained(str(TINY_BERT_DIR))
            .eval()(
                input_ids=tokens["token_ids"], attention_mask=tokens["mask"].long(), token_type_ids=tokens["type_ids"]
            )
            .last_hidden_state
        )
        rows = torch.arange(4)
        subject, obj = tensors["subject_span"], tensors["object_span"]
        features = torch.cat(
            [
                states[rows, subject[:, 0]],
                states[rows, subject[:, 1]],
                states[rows, obj[:, 0]],
                states[rows, obj[:, 1]],
            ],
            dim=-1,
        )
        torch.testing.assert_close(output["logits"], model.classifier(features), atol=1e-5, rtol=1e-4)

    def test_the_tacred_predictor_works_with_it(self):
        model = self.build()
        reader = DatasetReader.from_params(Params.from_file(str(CONFIG))["dataset_reader"])
        predictor = Predictor.by_name("spanbert_relation_classifier")(model, reader)
        tokens_input = {
            "token": ["Agnes", "Thornbury", "was", "born", "in", "Tarrowby", "-LRB-", "Yorkshire", "-RRB-"],
            "subj_start": 0,
            "subj_end": 1,
            "obj_start": 5,
            "obj_end": 5,
            "subj_type": "PERSON",
            "obj_type": "CITY",
        }
        raw_input = {
            "sentence": "Agnes Thornbury was born in Tarrowby (Yorkshire)",
            "subj_char_span": [0, 15],
            "obj_char_span": [28, 36],
            "subj_type": "PERSON",
            "obj_type": "CITY",
        }
        from_tokens, from_text = predictor.predict_batch_json([tokens_input, raw_input])
        labels = self.vocab.get_index_to_token_vocabulary("labels")
        assert not any(piece.startswith("[SUBJ") or piece.startswith("[OBJ") for piece in from_tokens["tokens"])
        assert from_tokens["tokens"] == from_text["tokens"] and from_tokens["tokens"][:3] == ["[CLS]", "A", "##g"]
        assert from_text["probs"] == pytest.approx(from_tokens["probs"], abs=1e-5)
        best = max(range(len(labels)), key=lambda i: from_tokens["probs"][i])
        assert from_tokens["label"] == labels[best] == from_text["label"]
        assert sum(from_tokens["class_probabilities"].values()) == pytest.approx(1.0, abs=1e-5)
        assert model.default_predictor == "spanbert_relation_classifier"

    def test_marker_tokens_are_a_clear_error(self):
        # the reader's default entity_marker_aware indexer is fine with the plain scheme: no marker ids occur
        params = Params.from_file(str(CONFIG), params_overrides='{"dataset_reader.token_indexers": null}')
        reader = DatasetReader.from_params(params["dataset_reader"])
        instances = list(reader.read(str(DATA)))[:2]
        tensors = tensors_of(instances, self.vocab)
        assert torch.equal(
            tensors["tokens"]["tokens"]["token_ids"],
            tensors_of(self.instances[:2], self.vocab)["tokens"]["tokens"]["token_ids"],
        )
        self.build()(**tensors)
        params = Params.from_file(
            str(CONFIG),
            params_overrides=json.dumps(
                {"dataset_reader.entity_scheme": "entity_mask", "dataset_reader.token_indexers": None}
            ),
        )
        reader = DatasetReader.from_params(params["dataset_reader"])
        instances = list(reader.read(str(DATA)))[:2]
        with pytest.raises(ConfigurationError, match="marker tokens\\? Use the tacred reader with entity_scheme"):
            self.build()(**tensors_of(instances, self.vocab))

    def test_configuration_errors(self):
        params = Params.from_file(str(CONFIG))["model"].as_dict()
        vocab = Vocabulary()
        vocab.add_tokens_to_namespace(["per:title"], "labels")
        with pytest.raises(ConfigurationError, match="1 label\\(s\\) in vocabulary"):
            Model.from_params(vocab=vocab, params=Params(copy.deepcopy(params)))
        vocab.add_tokens_to_namespace(["org:founded"], "labels")
        with pytest.raises(ConfigurationError, match="'no_relation' is not in vocabulary"):
            Model.from_params(vocab=vocab, params=Params(copy.deepcopy(params)))


def test_large_config_follows_luke():
    params = Params.from_file(str(LARGE_CONFIG)).as_dict()
    reader = params["dataset_reader"]
    assert reader["entity_scheme"] == "plain" and reader["token_indexers"]["tokens"]["type"] == "pretrained_transformer"
    assert tuple(params["vocabulary"]["tokens_to_add"]["labels"]) == TACRED_RELATIONS
    assert params["model"]["type"] == "spanbert_entity_pair_relation_classifier"
    assert params["model"]["encoder"]["entity_aware_attention"] is True
    trainer = params["trainer"]
    assert trainer["optimizer"]["lr"] == 1e-5 and trainer["num_epochs"] == 5
    assert params["data_loader"]["batch_size"] == 32
    # 68,124 / 32 -> 2,129 steps a epoch; 6 % of 10,645 steps warm up
    assert trainer["learning_rate_scheduler"] == {"type": "linear_with_warmup", "warmup_steps": 638}
