"""The relation classifier trains, saves and loads in both pooling modes; its pieces are checked by hand."""

import copy

import pytest
import torch
import transformers
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, Vocabulary
from allennlp.models import Model

from spanbert_lib.relation.entity_markers import entity_marker_tokens, marker_description
from spanbert_lib.relation.models import EntityMarkerAwareEmbedder
from tests import REPO_ROOT, TINY_BERT_DIR

CONFIG = REPO_ROOT / "fixtures" / "configs" / "relation" / "tiny_relation_classifier.jsonnet"
DATA = REPO_ROOT / "fixtures" / "relation" / "tacred_fixture.json"
POOLER = {
    "encoder.token_embedder_tokens.transformer_model.pooler.dense.weight",
    "encoder.token_embedder_tokens.transformer_model.pooler.dense.bias",
}


class TestSpanBertRelationClassifier(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(CONFIG, DATA)

    def test_cls_pooling_trains_saves_and_loads(self):
        self.ensure_model_can_train_save_and_load(self.param_file, gradients_to_ignore=POOLER)

    def test_entity_start_pooling_trains_saves_and_loads(self):
        model, _ = self.ensure_model_can_train_save_and_load(
            self.param_file, gradients_to_ignore=POOLER, overrides='{"model.pooling": "entity_start"}'
        )
        assert model._classifier.in_features == 2 * 32

    def test_entity_start_classifies_the_marker_states(self):
        overrides = '{"model.pooling": "entity_start", "model.dropout": 0.0}'
        params = Params.from_file(str(CONFIG), params_overrides=overrides)
        model = Model.from_params(vocab=self.vocab, params=params["model"])
        model.eval()
        batch = Batch(self.instances[:3])
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        output = model(**tensors)
        encoded = model.encoder(tensors["tokens"])
        for row in range(3):
            subject, obj = tensors["subject_span"][row, 0], tensors["object_span"][row, 0]
            features = torch.cat([encoded[row, subject], encoded[row, obj]])
            expected = model._classifier(features)
            torch.testing.assert_close(output["logits"][row], expected)
            torch.testing.assert_close(output["probs"][row], torch.softmax(expected, dim=-1))
        # the first fixture sentence: [CLS] [SUBJ-PERSON] ... so the subject state is at position 1
        assert tensors["subject_span"][0].tolist() == [1, 1]

    def test_metrics_and_readable_output(self):
        model = self.model
        model.eval()
        batch = Batch(self.instances)
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        output = model.make_output_human_readable(model(**tensors))
        labels = self.vocab.get_index_to_token_vocabulary("labels")
        predicted = output["probs"].argmax(-1).tolist()
        assert output["label"] == [labels[i] for i in predicted]
        gold = [labels[i] for i in tensors["label"].tolist()]
        metrics = model.get_metrics(reset=True)
        assert set(metrics) == {"precision", "recall", "f1", "accuracy"}
        correct = sum(g == p != "no_relation" for g, p in zip(gold, output["label"]))
        guessed = sum(p != "no_relation" for p in output["label"])
        assert metrics["accuracy"] == pytest.approx(sum(g == p for g, p in zip(gold, output["label"])) / 10)
        assert metrics["precision"] == pytest.approx(correct / guessed if guessed else 1.0)
        expected_loss = torch.nn.functional.cross_entropy(output["logits"], tensors["label"])
        torch.testing.assert_close(output["loss"], expected_loss)

    def test_configuration_errors(self):
        params = Params.from_file(str(CONFIG))["model"].as_dict()
        fresh = lambda **changes: Params(copy.deepcopy(dict(params, **changes)))  # noqa: E731
        plain = fresh(
            encoder={
                "token_embedders": {"tokens": {"type": "pretrained_transformer", "model_name": str(TINY_BERT_DIR)}}
            }
        )
        with pytest.raises(ConfigurationError, match="needs an 'entity_marker_aware' token embedder"):
            Model.from_params(vocab=self.vocab, params=plain)
        with pytest.raises(ConfigurationError, match="unknown pooling 'mean'"):
            Model.from_params(vocab=self.vocab, params=fresh(pooling="mean"))
        vocab = Vocabulary()
        vocab.add_tokens_to_namespace(["per:title", "org:founded"], "labels")
        with pytest.raises(ConfigurationError, match="'no_relation' is not in vocabulary"):
            Model.from_params(vocab=vocab, params=fresh())


def test_marker_rows_are_added_and_initialised_from_descriptions():
    original = transformers.AutoModel.from_pretrained(str(TINY_BERT_DIR)).get_input_embeddings().weight.detach()
    plain_tokenizer = transformers.AutoTokenizer.from_pretrained(str(TINY_BERT_DIR))
    embedder = EntityMarkerAwareEmbedder(str(TINY_BERT_DIR))
    weight = embedder.transformer_model.get_input_embeddings().weight.detach()
    markers = entity_marker_tokens()
    assert weight.shape == (519 + len(markers), 32)
    assert embedder.marker_ids == list(range(519, 519 + len(markers)))
    torch.testing.assert_close(weight[:519], original)  # pretrained rows untouched
    assert marker_description("[/OBJ-STATE_OR_PROVINCE]") == ["end", "object", "state", "or", "province"]
    for marker in ("[SUBJ-PERSON]", "[/OBJ-STATE_OR_PROVINCE]"):
        words = marker_description(marker)
        ids = plain_tokenizer(words, is_split_into_words=True, add_special_tokens=False)["input_ids"]
        torch.testing.assert_close(weight[519 + markers.index(marker)], original[ids].mean(0))
    # distinct roles and types get distinct starting points
    assert not torch.allclose(weight[519 + markers.index("[SUBJ-PERSON]")], weight[519 + markers.index("[OBJ-PERSON]")])

    mean_init = EntityMarkerAwareEmbedder(str(TINY_BERT_DIR), marker_initialisation="mean")
    mean_weight = mean_init.transformer_model.get_input_embeddings().weight.detach()
    torch.testing.assert_close(mean_weight[519:], original.mean(0).expand(len(markers), 32))
    with pytest.raises(ConfigurationError, match="unknown marker_initialisation 'zeros'"):
        EntityMarkerAwareEmbedder(str(TINY_BERT_DIR), marker_initialisation="zeros")
