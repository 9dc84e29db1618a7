"""The entity_typing model: trains/saves/loads with and without entities; logits, loss and metric by hand."""

import copy

import pytest
import torch
import transformers
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models import Model

from spanbert_lib.common.modules.entity_aware import ENTITY_MASK
from tests import REPO_ROOT, TINY_BERT_DIR
from tests.entity_model_testing import LAST_LAYER_WORD_QUERIES, EntityModelTestCase, tensors_of

CONFIG = REPO_ROOT / "fixtures" / "configs" / "entity_typing" / "entity_typing_tiny.jsonnet"
DATA = REPO_ROOT / "fixtures" / "entity_typing" / "open_entity_luke.json"
LARGE_CONFIG = REPO_ROOT / "training_configs" / "entity_typing" / "open_entity_spanbert_large.jsonnet"


class TestEntityTyping(EntityModelTestCase):
    CONFIG, DATA = CONFIG, DATA

    def test_entities_with_entity_aware_attention(self):
        model, _ = self.ensure_model_can_train_save_and_load(
            self.param_file, gradients_to_ignore=LAST_LAYER_WORD_QUERIES
        )
        assert model.classifier.in_features == 32

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
        assert model.classifier.in_features == 2 * 32

    def test_logits_loss_and_metric_by_hand(self):
        model = self.build()
        tensors = tensors_of(self.instances[:5], self.vocab)
        output = model(**tensors)
        tokens = tensors["tokens"]["tokens"]
        mention = tensors["mention_span"].unsqueeze(1)
        _, entities = model.encoder(
            tokens["token_ids"],
            tokens["mask"],
            tokens["type_ids"],
            entity_ids=torch.full((5, 1), ENTITY_MASK),
            entity_spans=mention,
        )
        expected = model.classifier(entities[:, 0])
        torch.testing.assert_close(output["logits"], expected)
        torch.testing.assert_close(output["probs"], torch.sigmoid(expected))
        assert torch.equal(output["predicted"], expected > 0)
        labels = tensors["labels"].float()
        bce = -(labels * torch.log(torch.sigmoid(expected)) + (1 - labels) * torch.log(1 - torch.sigmoid(expected)))
        torch.testing.assert_close(output["loss"], bce.mean())
        predicted, gold = output["predicted"], tensors["labels"].bool()
        correct = int((predicted & gold).sum())
        metrics = model.get_metrics(reset=True)
        assert metrics["precision"] == pytest.approx(correct / int(predicted.sum()) if predicted.any() else 0.0)
        assert metrics["recall"] == pytest.approx(correct / int(gold.sum()))
        # the first fixture mention is "Alice" at the start of the sentence: wordpieces right after [CLS]
        assert tensors["mention_span"][0, 0] == 1

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
        span = tensors["mention_span"]
        features = torch.cat([states[rows, span[:, 0]], states[rows, span[:, 1]]], dim=-1)
        torch.testing.assert_close(output["logits"], model.classifier(features), atol=1e-5, rtol=1e-4)

    def test_threshold_and_readable_types(self):
        model = self.build()
        tensors = tensors_of(self.instances[:3], self.vocab)
        names = self.vocab.get_index_to_token_vocabulary("labels")
        bias = torch.linspace(-1.0, 1.0, len(names))  # logits = bias for every example
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.copy_(bias)
        for threshold in (0.0, 0.5):
            model.threshold = threshold
            output = model.make_output_human_readable(model(**tensors))
            expected = [names[i] for i in reversed(range(len(names))) if bias[i] > threshold]  # most probable first
            assert output["types"] == [expected] * 3
            assert 0 < len(expected) < len(names)

    def test_configuration_errors(self):
        params = Params.from_file(str(CONFIG))["model"].as_dict()
        with pytest.raises(ConfigurationError, match="no labels in vocabulary namespace 'labels'"):
            Model.from_params(vocab=Vocabulary(), params=Params(copy.deepcopy(params)))


def test_large_config_follows_luke():
    params = Params.from_file(str(LARGE_CONFIG)).as_dict()
    assert params["model"]["type"] == "spanbert_entity_typing" and params["model"]["use_entities"]
    assert params["model"]["encoder"]["entity_aware_attention"] is True
    assert len(params["vocabulary"]["tokens_to_add"]["labels"]) == 9
    trainer = params["trainer"]
    assert trainer["optimizer"]["lr"] == 1e-5 and trainer["optimizer"]["betas"] == [0.9, 0.98]
    assert trainer["num_epochs"] == 2 and params["data_loader"]["batch_size"] == 4
    # 1,998 examples / 4 = 500 steps a epoch; 6 % of 1,000 steps warm up
    assert trainer["learning_rate_scheduler"] == {"type": "linear_with_warmup", "warmup_steps": 60}
