"""spanbert_relation_classifier on SemEval-2010 Task 8 (tiny BERT): trains, saves, loads, reports the official score."""

import pytest
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch

from spanbert_lib.relation.metrics import semeval2010_official_score
from tests import REPO_ROOT, TINY_BERT_DIR

CONFIG = REPO_ROOT / "fixtures" / "configs" / "relation" / "tiny_semeval2010_classifier.jsonnet"
DATA = str(REPO_ROOT / "fixtures" / "relation" / "semeval2010_sample.txt")
POOLER = {
    "encoder.token_embedder_tokens.transformer_model.pooler.dense.weight",
    "encoder.token_embedder_tokens.transformer_model.pooler.dense.bias",
}


class TestSemEval2010Classifier(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(CONFIG, DATA)

    def test_trains_saves_and_loads(self):
        self.ensure_model_can_train_save_and_load(self.param_file, gradients_to_ignore=POOLER)

    def test_metrics_are_the_official_score_of_the_predicted_labels(self):
        model = self.model
        model.eval()
        batch = Batch(self.instances)
        batch.index_instances(self.vocab)
        tensors = batch.as_tensor_dict()
        output = model.make_output_human_readable(model(**tensors))
        gold = [self.vocab.get_token_from_index(i, "labels") for i in tensors["label"].tolist()]
        metrics = model.get_metrics(reset=True)
        assert set(metrics) == {"precision", "recall", "f1", "accuracy", "macro_precision", "macro_recall", "macro_f1"}
        expected = semeval2010_official_score(gold, output["label"])
        assert {k: metrics[k] for k in expected} == pytest.approx(expected)
        # the TACRED-style micro scores treat Other as the negative label
        correct = sum(g == p != "Other" for g, p in zip(gold, output["label"]))
        guessed = sum(p != "Other" for p in output["label"])
        assert metrics["precision"] == pytest.approx(correct / guessed if guessed else 1.0)


def test_minilm_cpu_config_trains_with_the_tiny_encoder(tmp_path):
    import json

    from allennlp.commands.train import train_model_from_file

    config = REPO_ROOT / "training_configs" / "relation" / "semeval2010_minilm_cpu.jsonnet"
    tiny = str(TINY_BERT_DIR)
    overrides = json.dumps(
        {
            "dataset_reader.model_name": tiny,
            "model.encoder.token_embedders.tokens.model_name": tiny,
            "train_data_path": DATA + "#ids=1-8",
            "validation_data_path": DATA + "#ids=9-12",
        }
    )
    model = train_model_from_file(str(config), str(tmp_path), overrides=overrides)
    assert model.vocab.get_vocab_size("labels") == 19  # every directed label, seen in training or not
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert 0.0 <= metrics["best_validation_macro_f1"] <= 1.0
