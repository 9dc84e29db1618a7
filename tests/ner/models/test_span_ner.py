"""The span_ner model: trains/saves/loads in every mode; its logits, chunking, sampling and decoding by hand."""

import copy
import json
import math

import pytest
import torch
import transformers
from allennlp.common import Params
from allennlp.common.checks import ConfigurationError
from allennlp.common.testing import ModelTestCase
from allennlp.data import Vocabulary
from allennlp.models import Model

from spanbert_lib.common.modules.entity_aware import ENTITY_MASK
from spanbert_lib.ner.models.spanbert_span_ner import overlaps_marked_spans
from tests import REPO_ROOT, TINY_BERT_DIR
from tests.entity_model_testing import build_model, tensors_of

CONFIG = REPO_ROOT / "fixtures" / "configs" / "ner" / "span_ner_tiny.jsonnet"
CONLL = REPO_ROOT / "fixtures" / "ner" / "conll2003_iob2.txt"
LITBANK = REPO_ROOT / "fixtures" / "ner" / "litbank"
LITBANK_OVERRIDES = {
    "dataset_reader.type": "spanbert_span_ner_litbank",
    "dataset_reader.max_span_width": 8,
    "train_data_path": str(LITBANK),
    "validation_data_path": str(LITBANK),
    "model.decoding": "nested",
}


def entity_parameters(model: Model) -> set:
    """The encoder's entity-only parameters (no gradient when the model uses no entities)."""
    return {
        name
        for name, _ in model.named_parameters()
        if name.startswith("encoder.entity_embeddings.") or name.startswith("encoder.self_attentions.")
    }


CANDIDATES_PER_ROW = (18, 26, 26, 6)
"""Candidate spans of the fixture's first four sentences."""


def assert_outside_shift(shift, mask, outside: int, shift_for_candidates) -> None:
    """``shift`` ``[B, S, K]`` (logits minus a reference model's) is ``shift_for_candidates(S_row)`` on the "O"
    logit of every real span of each row (``mask`` ``[B, S]``) and 0 on every other logit."""
    for row, candidates in enumerate(CANDIDATES_PER_ROW):
        assert int(mask[row].sum()) == candidates
        expected = torch.zeros_like(shift[row, mask[row]])
        expected[:, outside] = shift_for_candidates(candidates)
        torch.testing.assert_close(shift[row, mask[row]], expected, atol=1e-5, rtol=0)


def assert_same_in_training(model, reference, tensors) -> None:
    """In training mode (same negative sample) ``model`` gives ``reference``'s logits: the shift is prediction-only."""
    model.train(), reference.train()
    torch.manual_seed(5)
    training = model(**tensors)["logits"]
    torch.manual_seed(5)
    torch.testing.assert_close(training, reference(**tensors)["logits"])


class TestSpanNer(ModelTestCase):
    def setup_method(self):
        super().setup_method()
        self.set_up_model(CONFIG, CONLL)

    def build(self, **changes) -> Model:
        torch.manual_seed(0)
        return build_model(CONFIG, self.vocab, **changes)

    # --- train, save, load ------------------------------------------------------------------

    def test_entities_with_entity_aware_attention(self):
        model, _ = self.ensure_model_can_train_save_and_load(self.param_file)
        assert model.encoder.entity_aware_attention and model.use_entities
        assert model.classifier.in_features == 3 * 32  # [x_first; x_last; entity]

    def test_entities_with_plain_attention(self):
        model, _ = self.ensure_model_can_train_save_and_load(
            self.param_file, overrides='{"model.encoder.entity_aware_attention": false}'
        )
        assert not model.encoder.entity_aware_attention

    def test_without_entities(self):
        model, _ = self.ensure_model_can_train_save_and_load(
            self.param_file,
            overrides='{"model.use_entities": false}',
            gradients_to_ignore=entity_parameters(self.model),
        )
        assert model.classifier.in_features == 2 * 32

    def test_nested_litbank_with_sampled_negatives(self):
        overrides = dict(LITBANK_OVERRIDES, **{"model.negative_spans_per_instance": 3})
        model, _ = self.ensure_model_can_train_save_and_load(self.param_file, overrides=json.dumps(overrides))
        assert model.negative_spans_per_instance == 3

    # --- the computation by hand ------------------------------------------------------------

    def test_logits_of_one_pass_are_the_classified_span_features(self):
        model = self.build(max_entities_per_pass=64)
        instance = self.instances[1]  # 26 spans: one pass
        tensors = tensors_of([instance], self.vocab)
        output = model(**tensors)
        tokens = tensors["tokens"]["tokens"]
        spans = tensors["spans"][0]  # [S, 2]
        entity_ids = torch.full((1, len(spans)), ENTITY_MASK)
        words, entities = model.encoder(
            tokens["token_ids"],
            tokens["mask"],
            tokens["type_ids"],
            entity_ids=entity_ids,
            entity_spans=spans.unsqueeze(0),
        )
        features = torch.cat([words[0, spans[:, 0]], words[0, spans[:, 1]], entities[0]], dim=-1)
        torch.testing.assert_close(output["logits"][0], model.classifier(features))
        torch.testing.assert_close(output["probs"][0], torch.softmax(model.classifier(features), dim=-1))

    def test_each_pass_holds_its_own_spans_and_words(self):
        model = self.build(max_entities_per_pass=8)
        instance = self.instances[1]  # 26 spans, 8 a pass -> 4 passes of ceil(26 / 4) = 7: 7, 7, 7, 5
        tensors = tensors_of([instance], self.vocab)
        logits = model(**tensors)["logits"][0]
        tokens = tensors["tokens"]["tokens"]
        spans = tensors["spans"][0]
        for first, last in ((0, 7), (7, 14), (14, 21), (21, 26)):
            part = spans[first:last].unsqueeze(0)
            words, entities = model.encoder(
                tokens["token_ids"],
                tokens["mask"],
                tokens["type_ids"],
                entity_ids=torch.full(part.shape[:2], ENTITY_MASK),
                entity_spans=part,
            )
            features = torch.cat([words[0, part[0, :, 0]], words[0, part[0, :, 1]], entities[0]], dim=-1)
            torch.testing.assert_close(logits[first:last], model.classifier(features))
        # a pass of different spans changes the words' states, so splitting differently changes the logits
        one_pass = self.build(max_entities_per_pass=64)(**tensors)["logits"][0]
        assert not torch.allclose(one_pass, logits, atol=1e-4)

    def test_padding_and_other_instances_do_not_change_the_logits(self):
        for use_entities in (True, False):
            model = self.build(max_entities_per_pass=8, use_entities=use_entities)
            instances = self.instances[:4]  # 18, 26, 26 and 6 spans, sentences of different lengths
            batched = model(**tensors_of(instances, self.vocab))
            for row, instance in enumerate(instances):
                alone = model(**tensors_of([instance], self.vocab))
                count = len(instance["spans"])
                torch.testing.assert_close(batched["logits"][row, :count], alone["logits"][0], atol=1e-5, rtol=1e-4)
                assert batched["span_mask"][row].sum() == count
                assert batched["entities"][row] == alone["entities"][0]

    def test_without_entities_the_features_are_the_plain_encoder_states(self):
        model = self.build(use_entities=False)
        tensors = tensors_of(self.instances[:3], self.vocab)
        output = model(**tensors)
        tokens = tensors["tokens"]["tokens"]
        plain = transformers.AutoModel.from_pretrained(str(TINY_BERT_DIR)).eval()
        states = plain(
            input_ids=tokens["token_ids"], attention_mask=tokens["mask"].long(), token_type_ids=tokens["type_ids"]
        ).last_hidden_state
        for row in range(3):
            count = int(output["span_mask"][row].sum())
            spans = tensors["spans"][row, :count]
            features = torch.cat([states[row, spans[:, 0]], states[row, spans[:, 1]]], dim=-1)
            torch.testing.assert_close(output["logits"][row, :count], model.classifier(features), atol=1e-5, rtol=1e-4)

    def test_loss_is_cross_entropy_over_real_spans(self):
        model = self.build()
        tensors = tensors_of(self.instances[:4], self.vocab)
        output = model(**tensors)
        mask = output["span_mask"]
        expected = torch.nn.functional.cross_entropy(output["logits"][mask], tensors["span_labels"][mask])
        torch.testing.assert_close(output["loss"], expected)
        assert int(mask.sum()) == 18 + 26 + 26 + 6

    # --- sampling, decoding, metrics --------------------------------------------------------

    def test_training_samples_gold_spans_and_some_negatives(self):
        model = self.build(negative_spans_per_instance=2)
        outside, per = self.vocab.get_token_index("O", "labels"), self.vocab.get_token_index("PER", "labels")
        spans = torch.tensor([[[1, 1], [1, 2], [2, 2], [2, 3], [3, 3]], [[1, 1], [1, 2], [2, 2], [-1, -1], [-1, -1]]])
        labels = torch.tensor([[outside, per, outside, outside, per], [outside, outside, outside, 0, 0]])
        torch.manual_seed(3)
        new_spans, new_labels = model.sample_training_spans(spans, labels)
        # instance 0: both PER spans + 2 of its 3 negatives, in the original order; instance 1: 2 negatives
        assert new_spans.shape == (2, 4, 2)
        kept = [[tuple(s) for s in row if s[0] >= 0] for row in new_spans.tolist()]
        assert len(kept[0]) == 4 and (1, 2) in kept[0] and (3, 3) in kept[0]
        assert kept[0] == sorted(kept[0]) and set(kept[0]) <= {(1, 1), (1, 2), (2, 2), (2, 3), (3, 3)}
        assert len(kept[1]) == 2 and set(kept[1]) <= {(1, 1), (1, 2), (2, 2)} and new_spans[1, 2:].eq(-1).all()
        for row, original in ((0, 0), (1, 1)):
            lookup = {tuple(s): int(label) for s, label in zip(spans[original].tolist(), labels[original])}
            assert [lookup[s] for s in kept[row]] == new_labels[row, : len(kept[row])].tolist()
        # in training mode the loss covers only the sample and no F1 is computed; eval mode scores every span
        model.train()
        tensors = tensors_of(self.instances[:2], self.vocab)
        output = model(**tensors)
        gold_spans = int((tensors["span_labels"] != outside).sum())
        assert int(output["span_mask"].sum()) == gold_spans + 2 * 2 and "entities" not in output
        model.eval()
        assert int(model(**tensors)["span_mask"].sum()) == 18 + 26

    def test_hard_negatives_are_the_non_entity_spans_overlapping_a_gold_one(self):
        outside, per = self.vocab.get_token_index("O", "labels"), self.vocab.get_token_index("PER", "labels")
        # instance 0: gold (2, 3); (1, 2), (3, 5), (2, 2) overlap it, (4, 5), (6, 6) do not; instance 1: no gold
        spans = torch.tensor(
            [[[1, 2], [2, 3], [3, 5], [4, 5], [2, 2], [6, 6]], [[1, 1], [2, 3], [-1, -1], *[[-1, -1]] * 3]]
        )
        labels = torch.tensor([[outside, per, outside, outside, outside, outside], [outside, outside, 0, 0, 0, 0]])
        gold = spans[..., 0].ge(0) & labels.ne(outside)
        assert overlaps_marked_spans(spans, gold).tolist() == [
            [True, True, True, False, True, False],
            [False] * 6,
        ]
        model = self.build(negative_spans_per_instance=1, hard_negative_spans_per_instance=2)
        for seed in range(5):
            torch.manual_seed(seed)
            new_spans, new_labels = model.sample_training_spans(spans, labels)
            kept = [[tuple(s) for s in row if s[0] >= 0] for row in new_spans.tolist()]
            hard, easy = {(1, 2), (3, 5), (2, 2)}, {(4, 5), (6, 6)}
            assert (2, 3) in kept[0] and len(kept[0]) == 4  # the gold span, 2 of the 3 hard ones, 1 other
            assert len(set(kept[0]) & hard) == 2 and len(set(kept[0]) & easy) == 1
            assert len(kept[1]) == 1  # no gold, so no hard negatives: one random negative

    def test_the_sampled_prior_correction_shifts_only_the_non_entity_logit_outside_training(self):
        """log(S / n) on the "O" logit of every span of an instance with S candidates (n negatives kept per
        instance in training); none with S <= n, none in training, none without the option."""
        corrected = self.build(negative_spans_per_instance=2, correct_sampled_prior=True).eval()
        plain = self.build(negative_spans_per_instance=2).eval()
        tensors = tensors_of(self.instances[:4], self.vocab)
        outside = self.vocab.get_token_index("O", "labels")
        shifted, unshifted = corrected(**tensors), plain(**tensors)
        mask = unshifted["span_mask"]
        shift = shifted["logits"] - unshifted["logits"]  # [B, S, K]
        assert_outside_shift(shift, mask, outside, lambda candidates: math.log(candidates / 2))
        assert (shifted["probs"][..., outside] >= unshifted["probs"][..., outside] - 1e-6)[mask].all()
        one_span = tensors_of(self.instances[:4], self.vocab)
        one_span["spans"][:, 2:] = -1  # 2 candidates each: S / n = 1, nothing to correct
        torch.testing.assert_close(corrected(**one_span)["logits"], plain(**one_span)["logits"])
        assert_same_in_training(corrected, plain, tensors)

    def test_the_outside_bias_adds_to_the_non_entity_logit_outside_training_only(self):
        """outside_logit_bias on the "O" logit of every real span, on top of the sampled prior correction; nothing in
        training."""
        tensors = tensors_of(self.instances[:4], self.vocab)
        outside = self.vocab.get_token_index("O", "labels")
        plain = self.build(negative_spans_per_instance=2).eval()
        for changes, candidates_shift in (
            ({}, lambda s: -0.5),
            ({"correct_sampled_prior": True}, lambda s: -0.5 + math.log(s / 2)),
        ):
            biased = self.build(negative_spans_per_instance=2, outside_logit_bias=-0.5, **changes).eval()
            shift = biased(**tensors)["logits"] - plain(**tensors)["logits"]
            mask = plain(**tensors)["span_mask"]
            assert_outside_shift(shift, mask, outside, candidates_shift)
        assert_same_in_training(biased, plain, tensors)

    def test_decode_flat_and_nested_by_hand(self):
        labels = self.vocab.get_token_to_index_vocabulary("labels")
        metadata = [{"word_spans": [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]}]
        predicted = torch.tensor(
            [[labels["O"], labels["PER"], labels["O"], labels["LOC"], labels["LOC"], labels["O"], 0]]
        )  # the last one is padding
        scores = torch.tensor([[0.9, 0.9, 0.6, 0.7, 0.8, 0.99, 0.99]])
        flat = self.build(decoding="flat").decode(metadata, predicted, scores)
        # (0,1) PER 0.9 first; (1,2) LOC 0.8 and (1,1) LOC 0.7 overlap it
        assert flat == ([[(0, 1, "PER")]], [[pytest.approx(0.9)]])
        nested = self.build(decoding="nested").decode(metadata, predicted, scores)
        # (1,2) crosses (0,1) and is dropped; (1,1) nests inside it and is kept
        assert nested == ([[(0, 1, "PER"), (1, 1, "LOC")]], [[pytest.approx(0.9), pytest.approx(0.7)]])

    def oracle(self, model: Model, tensors, prefer_wide: bool = False) -> Model:
        """
        Makes the model predict each span's gold label (features = one-hot gold times 10, identity
        classifier); ``prefer_wide``: wider spans get larger logits (10 + wordpiece width / 10).
        """
        num_labels = self.vocab.get_vocab_size("labels")
        scale = torch.full(tensors["span_labels"].shape, 10.0)
        if prefer_wide:
            scale = scale + (tensors["spans"][..., 1] - tensors["spans"][..., 0]).float() / 10
        one_hot = torch.nn.functional.one_hot(tensors["span_labels"], num_labels).float() * scale.unsqueeze(-1)
        features = torch.nn.functional.pad(one_hot, (0, model.classifier.in_features - num_labels))
        model.span_features = lambda tokens, spans: features
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.weight[:, :num_labels] = torch.eye(num_labels)
            model.classifier.bias.zero_()
        return model

    def test_gold_predictions_decode_to_the_gold_entities(self):
        model = self.build()
        tensors = tensors_of(self.instances, self.vocab)
        output = self.oracle(model, tensors)(**tensors)
        gold = [instance["metadata"]["gold_entities"] for instance in self.instances]
        assert output["entities"] == [[tuple(entity) for entity in sentence] for sentence in gold]
        assert all(
            score == pytest.approx(torch.softmax(torch.tensor([10.0] + [0.0] * 4), 0)[0].item())
            for sentence in output["entity_scores"]
            for score in sentence
        )
        metrics = model.get_metrics()
        entities = float(sum(len(sentence) for sentence in gold))
        assert metrics == {"precision": 1.0, "recall": 1.0, "f1": 1.0, "predicted_entities": entities}
        per_label = model.get_metrics(reset=True)
        assert per_label["f1-PER"] == 1.0 and per_label["f1-LOC"] == 1.0
        assert per_label["predicted_entities"] == entities
        assert model.get_metrics() == {"precision": 0.0, "recall": 0.0, "f1": 0.0, "predicted_entities": 0.0}

    def test_nested_gold_needs_nested_decoding(self):
        params = Params.from_file(str(CONFIG), params_overrides=json.dumps(LITBANK_OVERRIDES))
        from allennlp.data import DatasetReader

        reader = DatasetReader.from_params(params["dataset_reader"])
        instances = list(reader.read(str(LITBANK)))
        vocab = Vocabulary.from_instances(instances)
        gold = [instance["metadata"]["gold_entities"] for instance in instances]
        # the fixture: "The teacher of the school in London" PER (0-6) holds FAC (3-6) holds GPE (6);
        # "Paris" is GPE in layer 1 and LOC in layer 2: the first layer's label is kept
        assert gold[0] == [(0, 6, "PER"), (3, 6, "FAC"), (6, 6, "GPE")]
        results = {}
        for decoding in ("nested", "flat"):
            params_model = params["model"].duplicate()
            params_model["decoding"] = decoding
            model = Model.from_params(vocab=vocab, params=params_model)
            model.eval()
            tensors = tensors_of(instances, vocab)
            output = self.oracle_for(model, tensors, vocab)(**tensors)  # wider spans score higher
            results[decoding] = (output["entities"], model.get_metrics(reset=True))
        assert results["nested"][0] == gold and results["nested"][1]["f1"] == 1.0
        # flat decoding keeps only the highest-scoring (here: the widest) of overlapping entities: 7 of 13
        assert results["flat"][0] == [
            [(0, 6, "PER")],
            [(0, 0, "PER"), (2, 2, "GPE")],
            [(1, 6, "LOC")],
            [(0, 0, "PER"), (2, 4, "VEH")],
            [(0, 3, "PER")],
        ]
        assert results["flat"][1]["recall"] == pytest.approx(7 / 13) and results["flat"][1]["precision"] == 1.0

    def oracle_for(self, model, tensors, vocab):
        saved, self.vocab = self.vocab, vocab
        try:
            return self.oracle(model, tensors, prefer_wide=True)
        finally:
            self.vocab = saved

    def test_human_readable_output(self):
        model = self.build()
        tensors = tensors_of(self.instances[:2], self.vocab)
        output = model.make_output_human_readable(self.oracle(model, tensors)(**tensors))
        assert output["words"][0] == ["Alice", "visited", "Paris", "on", "Monday", "."]
        assert output["entities"][0] == [(0, 0, "PER"), (2, 2, "LOC")]
        assert output["entity_texts"][0] == ["Alice", "Paris"]
        assert output["entity_texts"][1] == ["Peter Grace", "Emma", "Frank"]

    def test_configuration_errors(self):
        params = Params.from_file(str(CONFIG))["model"].as_dict()
        fresh = lambda **changes: Params(copy.deepcopy(dict(params, **changes)))  # noqa: E731
        with pytest.raises(ConfigurationError, match="unknown decoding 'greedy'"):
            Model.from_params(vocab=self.vocab, params=fresh(decoding="greedy"))
        with pytest.raises(ConfigurationError, match="max_entities_per_pass must be positive"):
            Model.from_params(vocab=self.vocab, params=fresh(max_entities_per_pass=0))
        with pytest.raises(ConfigurationError, match="negative_spans_per_instance must be >= 0"):
            Model.from_params(vocab=self.vocab, params=fresh(negative_spans_per_instance=-1))
        with pytest.raises(ConfigurationError, match="hard_negative_spans_per_instance must be >= 0"):
            Model.from_params(vocab=self.vocab, params=fresh(hard_negative_spans_per_instance=-1))
        with pytest.raises(ConfigurationError, match="hard_negative_spans_per_instance needs negative_spans"):
            Model.from_params(
                vocab=self.vocab, params=fresh(negative_spans_per_instance=None, hard_negative_spans_per_instance=4)
            )
        vocab = Vocabulary()
        vocab.add_tokens_to_namespace(["PER", "LOC"], "labels")
        with pytest.raises(ConfigurationError, match="non-entity label 'O' is not in vocabulary"):
            Model.from_params(vocab=vocab, params=fresh())

    def test_span_extractor_is_configurable(self):
        model = self.build(span_extractor={"type": "span_boundary", "boundaries": "both"})
        assert model.span_extractor.get_output_dim() == 4 * 32 and model.classifier.in_features == 5 * 32
        tensors = tensors_of(self.instances[:2], self.vocab)
        assert model(**tensors)["logits"].shape == (2, 26, 5)
