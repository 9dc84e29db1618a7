"""The SpanBERT pre-training model: training, save/load, ablations, masking behaviour, export."""

import json

import pytest
import torch
from allennlp.common import Params
from allennlp.common.testing import ModelTestCase
from allennlp.data import Batch, DatasetReader, Vocabulary
from allennlp.models import Model

from spanbert_lib.common.transformers_encoder import TransformerSpec
from spanbert_lib.pretraining.models import SpanBertPretraining
from tests import REPO_ROOT

CONFIG = REPO_ROOT / "fixtures" / "configs" / "pretraining" / "spanbert_tiny.jsonnet"
CORPUS = REPO_ROOT / "fixtures" / "corpus" / "miscellany.txt"


def overridden_config(tmp_path, overrides: dict) -> str:
    params = Params.from_file(str(CONFIG)).as_dict()
    for dotted, value in overrides.items():
        target = params
        *parents, leaf = dotted.split(".")
        for key in parents:
            target = target[key]
        target[leaf] = value
    path = tmp_path / "config.json"
    path.write_text(json.dumps(params))
    return str(path)


class TestSpanBertPretraining(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(str(CONFIG), str(CORPUS))

    def test_train_save_and_load(self):
        self.ensure_model_can_train_save_and_load(self.param_file)

    def test_span_masking_only_ablation(self, tmp_path):
        config = overridden_config(tmp_path, {"model.sbo_weight": 0.0})
        self.ensure_model_can_train_save_and_load(config)

    def test_bi_sequence_nsp_baseline(self, tmp_path):
        config = overridden_config(
            tmp_path,
            {
                "dataset_reader": {
                    "type": "spanbert_nsp_corpus",
                    "model_name": "fixtures/tiny_bert",
                    "max_sequence_length": 64,
                    "sentence_splitter": "line",
                },
                "model.nsp_weight": 1.0,
            },
        )
        self.ensure_model_can_train_save_and_load(config)

    def test_subword_masking_ablation(self, tmp_path):
        config = overridden_config(tmp_path, {"model.masker": {"type": "subword"}})
        self.ensure_model_can_train_save_and_load(config)

    def test_masked_entity_prediction(self, tmp_path):
        entities = "fixtures/entities/miscellany_entities.txt"
        corpus = tmp_path / "corpus.txt"  # a fifth of the corpus: spaCy annotation is the slow part
        corpus.write_text(CORPUS.read_text(encoding="utf-8")[:9000], encoding="utf-8")
        config = overridden_config(
            tmp_path,
            {
                "train_data_path": str(corpus),
                "validation_data_path": str(corpus),
                "dataset_reader.phrase_annotation": "named_entity",
                "dataset_reader.entity_vocabulary": entities,
                "model.entity_mlm_weight": 1.0,
                "model.entity_vocabulary": entities,
                "model.entity_embedding_dim": 8,
                "model.entity_masking_probability": 0.5,
            },
        )
        model, _ = self.ensure_model_can_train_save_and_load(config)
        assert model.entity_encoder.transformer is model.encoder  # one set of word weights, exported as before
        assert model.entity_head.entity_embeddings is model.entity_encoder.entity_embeddings.entity_embeddings
        batch = Batch(list(DatasetReader.from_params(Params.from_file(config)["dataset_reader"]).read(corpus))[:16])
        batch.index_instances(model.vocab)
        tensors = batch.as_tensor_dict()
        assert (tensors["entity_ids"] >= 6).any()  # entities of the vocabulary are in the batch
        model.train()
        output = model(**tensors)
        mlm_only = output["mlm_loss"] + output["sbo_loss"]
        assert torch.allclose(output["loss"], mlm_only + output["entity_mlm_loss"])
        assert 0 < model.get_metrics(reset=True)["entity_mlm_perplexity"] < float("inf")
        with pytest.raises(ValueError, match="needs `entity_ids` and `entity_spans`"):
            model(input_ids=tensors["input_ids"], word_ids=tensors["word_ids"])

    def test_output_embeddings_are_tied(self):
        embedding = self.model.encoder.get_input_embeddings().weight
        assert self.model.mlm_head.decoder.embedding.weight is embedding
        assert self.model.sbo_decoder.embedding.weight is embedding

    def test_masks_are_fresh_in_training_and_fixed_in_evaluation(self):
        tensors = Batch(self.instances[:4]).as_tensor_dict()
        self.model.train()
        first, second = (self.model(**tensors)["mlm_loss"].item() for _ in range(2))
        assert first != second  # new masks every time a batch is seen (dynamic masking)
        self.model.eval()
        with torch.no_grad():
            first, second = (self.model(**tensors)["mlm_loss"].item() for _ in range(2))
        assert first == second

    def test_loss_is_weighted_sum(self):
        tensors = Batch(self.instances[:4]).as_tensor_dict()
        self.model.eval()
        self.model.mlm_weight, self.model.sbo_weight = 0.5, 2.0
        with torch.no_grad():
            output = self.model(**tensors)
        assert output["loss"].item() == pytest.approx(
            0.5 * output["mlm_loss"].item() + 2.0 * output["sbo_loss"].item(), rel=1e-6
        )
        metrics = self.model.get_metrics(reset=True)
        assert set(metrics) == {"mlm_accuracy", "mlm_perplexity", "sbo_accuracy", "sbo_perplexity"}
        assert 0.0 <= metrics["sbo_accuracy"] <= 1.0 and metrics["mlm_perplexity"] > 1.0

    def test_nsp_without_labels_is_a_clear_error(self, tmp_path):
        model = SpanBertPretraining(
            Vocabulary(),
            TransformerSpec(
                "fixtures/tiny_bert",
                config={"hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32},
            ),
            nsp_weight=1.0,
        )
        tensors = Batch(self.instances[:2]).as_tensor_dict()
        with pytest.raises(ValueError, match="spanbert_nsp_corpus"):
            model(**tensors)

    def test_pooler_is_frozen_without_nsp(self):
        assert not any(p.requires_grad for p in self.model.encoder.pooler.parameters())


def test_pretrained_encoder_is_loaded(tiny_bert_dir):
    """encoder.config absent -> the weights of the HF directory are used as they are."""
    from transformers import AutoModel

    model = Model.from_params(
        vocab=Vocabulary(),
        params=Params({"type": "spanbert_pretraining", "encoder": {"model_name": str(tiny_bert_dir)}}),
    )
    reference = AutoModel.from_pretrained(str(tiny_bert_dir))
    assert torch.equal(model.encoder.embeddings.word_embeddings.weight, reference.embeddings.word_embeddings.weight)
