import numpy as np
import pytest
import torch
from allennlp.common import Params

from spanbert_lib.pretraining.masking import (
    REPLACE_KEEP,
    REPLACE_MASK,
    REPLACE_RANDOM,
    GeometricSpanMasker,
    Masker,
    PhraseMasker,
    SubwordMasker,
    WholeWordMasker,
)
from tests.pretraining.masking.invariants import assert_valid_masking, span_is_whole_words
from tests.pretraining.masking.synthetic import MASK, VOCAB_SIZE, make_blocks


def mask(masker, input_ids, word_ids, seed=0, **kwargs):
    return masker.mask(
        input_ids,
        word_ids,
        mask_token_id=MASK,
        vocab_size=VOCAB_SIZE,
        generator=torch.Generator().manual_seed(seed),
        **kwargs,
    )


def masked_fraction(output, word_ids):
    return output.masked_positions.sum().item() / (word_ids >= 0).sum().item()


@pytest.fixture(scope="module")
def blocks():
    # Phrases of 2-4 words cover about a quarter of the tokens.
    return make_blocks(300, seed=21, phrase_start_probability=0.12, phrase_min_words=2)


def test_subword_masks_individual_pieces_with_per_token_decisions(blocks):
    input_ids, word_ids, _ = blocks
    output = mask(SubwordMasker(), input_ids, word_ids)
    assert_valid_masking(output, input_ids, word_ids, MASK, VOCAB_SIZE)
    assert (output.spans[:, 1] == output.spans[:, 2]).all() and (output.span_num_words == 1).all()
    # Exactly floor or ceil of 15 % per sequence.
    budget = 0.15 * (word_ids >= 0).sum(dim=1)
    per_sequence = output.masked_positions.sum(dim=1)
    assert ((per_sequence == budget.floor()) | (per_sequence == budget.ceil())).all()
    assert abs(masked_fraction(output, word_ids) - 0.15) < 0.002
    decisions = output.span_replacement
    fractions = [(decisions == code).float().mean().item() for code in (REPLACE_MASK, REPLACE_RANDOM, REPLACE_KEEP)]
    np.testing.assert_allclose(fractions, [0.8, 0.1, 0.1], atol=0.015)
    # Pieces are chosen regardless of word boundaries: continuation pieces get masked too.
    words = word_ids.numpy()
    continuation = [words[b, s - 1] == words[b, s] for b, s, _ in output.spans.tolist()]
    share_of_continuations = ((words[:, 1:] == words[:, :-1]) & (words[:, 1:] >= 0)).sum() / (words >= 0).sum()
    assert abs(np.mean(continuation) - share_of_continuations) < 0.02


def test_whole_word_masks_single_whole_words(blocks):
    input_ids, word_ids, _ = blocks
    output = mask(WholeWordMasker(), input_ids, word_ids)
    assert_valid_masking(output, input_ids, word_ids, MASK, VOCAB_SIZE)
    words = word_ids.numpy()
    assert all(span_is_whole_words(words, *span) for span in output.spans.tolist())
    assert (output.span_num_words == 1).all()
    assert abs(masked_fraction(output, word_ids) - 0.15) < 0.005
    budget = 0.15 * (word_ids >= 0).sum(dim=1)
    assert ((output.masked_positions.sum(dim=1) - budget).abs() < 3).all()  # words have <= 3 pieces


def phrase_runs(phrase_ids: np.ndarray):
    """{(row, first, last)} of every phrase, by a plain scan."""
    runs = set()
    for row, labels in enumerate(phrase_ids.tolist()):
        position = 0
        while position < len(labels):
            if labels[position] >= 0:
                end = position
                while end + 1 < len(labels) and labels[end + 1] == labels[position]:
                    end += 1
                runs.add((row, position, end))
                position = end + 1
            else:
                position += 1
    return runs


@pytest.mark.parametrize("name", ["named_entity", "noun_phrase"])
def test_phrase_masking_spends_half_the_budget_on_whole_phrases(blocks, name):
    input_ids, word_ids, phrase_ids = blocks
    output = mask(Masker.by_name(name)(), input_ids, word_ids, phrase_ids=phrase_ids)
    assert_valid_masking(output, input_ids, word_ids, MASK, VOCAB_SIZE)
    assert abs(masked_fraction(output, word_ids) - 0.15) < 0.005
    phrases = phrase_runs(phrase_ids.numpy())
    words = word_ids.numpy()
    spans = [tuple(span) for span in output.spans.tolist()]
    # Phrases have >= 2 words here, so multi-word spans are phrases and the rest single words.
    phrase_tokens = 0
    for span, num_words in zip(spans, output.span_num_words.tolist()):
        assert span_is_whole_words(words, *span)
        if num_words > 1:
            assert span in phrases
            phrase_tokens += span[2] - span[1] + 1
    assert abs(phrase_tokens / output.masked_positions.sum().item() - 0.5) < 0.03
    assert (output.span_num_words == 1).sum() > 0


def test_entity_fraction_one_masks_whole_phrases_and_words_only_fill_the_remainder(blocks):
    input_ids, word_ids, phrase_ids = blocks
    output = mask(PhraseMasker(entity_fraction=1.0), input_ids, word_ids, phrase_ids=phrase_ids)
    phrases = phrase_runs(phrase_ids.numpy())
    in_phrase_spans = [(e - s + 1) for b, s, e in output.spans.tolist() if (b, s, e) in phrases]
    # Words only top up what the last phrase of a sequence left short of the budget.
    assert sum(in_phrase_spans) / output.masked_positions.sum().item() > 0.95
    assert abs(masked_fraction(output, word_ids) - 0.15) < 0.005


def test_phrase_masking_falls_back_to_words_without_phrases(blocks):
    input_ids, word_ids, _ = blocks
    no_phrases = torch.full_like(word_ids, -1)
    output = mask(PhraseMasker(), input_ids, word_ids, phrase_ids=no_phrases)
    assert_valid_masking(output, input_ids, word_ids, MASK, VOCAB_SIZE)
    assert (output.span_num_words == 1).all()
    assert abs(masked_fraction(output, word_ids) - 0.15) < 0.005


def test_phrase_masking_input_errors(blocks):
    input_ids, word_ids, phrase_ids = (tensor[:2] for tensor in blocks)
    with pytest.raises(ValueError, match="needs phrase_ids"):
        mask(PhraseMasker(), input_ids, word_ids)
    split = torch.full_like(word_ids, -1)
    first_multi_piece = int(((word_ids[1, 1:] == word_ids[1, :-1]) & (word_ids[1, 1:] >= 0)).nonzero()[0]) + 1
    split[1, first_multi_piece] = 3  # only the second piece of a word
    with pytest.raises(ValueError, match="phrase_ids of sequence 1: .* does not cover whole words"):
        mask(PhraseMasker(), input_ids, word_ids, phrase_ids=split)


def test_short_and_empty_sequences_for_every_scheme():
    content = [0, 1, 2, 5, 510]
    input_ids, word_ids, phrase_ids = make_blocks(
        len(content), seed=3, content_lengths=content, phrase_start_probability=0.3
    )
    for masker in (SubwordMasker(), WholeWordMasker(), PhraseMasker(), GeometricSpanMasker()):
        output = mask(masker, input_ids, word_ids, phrase_ids=phrase_ids)
        assert_valid_masking(output, input_ids, word_ids, MASK, VOCAB_SIZE)
        assert not output.masked_positions[0].any()
        empty = mask(masker, input_ids[:0], word_ids[:0], phrase_ids=phrase_ids[:0])
        assert empty.spans.shape == (0, 3)


@pytest.mark.parametrize("masker_class", [SubwordMasker, WholeWordMasker, PhraseMasker])
def test_ablations_are_reproducible(blocks, masker_class):
    input_ids, word_ids, phrase_ids = (tensor[:20] for tensor in blocks)
    first = mask(masker_class(), input_ids, word_ids, seed=4, phrase_ids=phrase_ids)
    again = mask(masker_class(), input_ids, word_ids, seed=4, phrase_ids=phrase_ids)
    other = mask(masker_class(), input_ids, word_ids, seed=5, phrase_ids=phrase_ids)
    assert torch.equal(first.input_ids, again.input_ids) and torch.equal(first.spans, again.spans)
    assert not torch.equal(first.labels, other.labels)


@pytest.mark.parametrize(
    "config, expected_class, attributes",
    [
        ({}, GeometricSpanMasker, {"geometric_p": 0.2, "max_span_length": 10, "masking_budget": 0.15}),
        (
            {
                "type": "geometric_span",
                "geometric_p": 0.3,
                "max_span_length": 5,
                "masking_budget": 0.2,
                "mask_probability": 0.7,
                "random_probability": 0.2,
            },
            GeometricSpanMasker,
            {
                "geometric_p": 0.3,
                "max_span_length": 5,
                "masking_budget": 0.2,
                "mask_probability": 0.7,
                "random_probability": 0.2,
            },
        ),
        ({"type": "subword", "masking_budget": 0.2}, SubwordMasker, {"masking_budget": 0.2}),
        ({"type": "whole_word", "random_probability": 0.0}, WholeWordMasker, {"random_probability": 0.0}),
        ({"type": "named_entity", "entity_fraction": 0.25}, PhraseMasker, {"entity_fraction": 0.25}),
        ({"type": "noun_phrase"}, PhraseMasker, {"entity_fraction": 0.5, "requires_phrase_ids": True}),
    ],
)
def test_construct_from_params(config, expected_class, attributes):
    masker = Masker.from_params(Params(config))
    assert type(masker) is expected_class
    for name, value in attributes.items():
        assert getattr(masker, name) == value


def test_registered_names():
    assert set(Masker.list_available()) >= {"geometric_span", "subword", "whole_word", "named_entity", "noun_phrase"}
    assert Masker.default_implementation == "geometric_span"
    assert not GeometricSpanMasker.requires_phrase_ids and PhraseMasker.requires_phrase_ids
