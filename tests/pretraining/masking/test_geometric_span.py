import numpy as np
import pytest
import torch

from spanbert_lib.pretraining.masking import REPLACE_KEEP, REPLACE_MASK, REPLACE_RANDOM, GeometricSpanMasker
from tests.pretraining.masking.invariants import assert_valid_masking, span_is_whole_words
from tests.pretraining.masking.synthetic import CLS, MASK, SEP, VOCAB_SIZE, make_blocks

# Chi-square critical value, 9 degrees of freedom (10 lengths), p = 0.001.
CHI2_9DOF_P001 = 27.877


def clipped_geometric_by_definition(p=0.2, max_length=10):
    """SpanBERT's length distribution: Geo(p) restricted to 1..max_length and renormalised."""
    weights = [p * (1 - p) ** (length - 1) for length in range(1, max_length + 1)]
    return [w / sum(weights) for w in weights]


PMF = clipped_geometric_by_definition()
EXPECTED_MEAN = sum(length * p for length, p in zip(range(1, 11), PMF))


def mask(masker, input_ids, word_ids, seed=0, **kwargs):
    return masker.mask(
        input_ids,
        word_ids,
        mask_token_id=MASK,
        vocab_size=VOCAB_SIZE,
        generator=torch.Generator().manual_seed(seed),
        **kwargs,
    )


@pytest.fixture(scope="module")
def blocks():
    return make_blocks(400, seed=11)


@pytest.fixture(scope="module")
def masked(blocks):
    input_ids, word_ids, _ = blocks
    return mask(GeometricSpanMasker(), input_ids, word_ids, seed=5)


def test_length_distribution_definition_gives_the_papers_mean():
    assert round(EXPECTED_MEAN, 1) == 3.8
    np.testing.assert_allclose(GeometricSpanMasker().length_pmf.numpy(), PMF, rtol=1e-12)


def test_length_sampler_follows_the_clipped_geometric():
    samples = GeometricSpanMasker().sample_lengths(
        torch.rand(200_000, generator=torch.Generator().manual_seed(3), dtype=torch.float64).numpy()
    )
    counts = np.bincount(samples, minlength=11)
    assert counts[0] == 0 and counts.shape[0] == 11
    expected = np.array(PMF) * samples.shape[0]
    assert ((counts[1:] - expected) ** 2 / expected).sum() < CHI2_9DOF_P001


def test_outputs_are_consistent(blocks, masked):
    input_ids, word_ids, _ = blocks
    assert_valid_masking(masked, input_ids, word_ids, MASK, VOCAB_SIZE)


def test_masked_fraction_is_the_budget(blocks, masked):
    _, word_ids, _ = blocks
    fraction = masked.masked_positions.sum().item() / (word_ids >= 0).sum().item()
    assert abs(fraction - 0.15) < 0.005


def test_each_sequence_ends_within_one_span_of_its_budget(blocks, masked):
    # The stop decision is random (so that lengths stay unbiased): a sequence may stop short
    # of, or overshoot, its budget by less than the longest possible span (10 words of at most
    # 3 pieces here), and is typically much closer.
    _, word_ids, _ = blocks
    deviation = masked.masked_positions.sum(dim=1) - 0.15 * (word_ids >= 0).sum(dim=1)
    assert (deviation.abs() < 30).all()
    assert deviation.abs().mean() < 6


def test_span_lengths_follow_the_clipped_geometric(masked):
    lengths = masked.span_num_words.numpy()
    assert len(lengths) > 4000
    assert abs(lengths.mean() - EXPECTED_MEAN) < 0.15
    assert abs(lengths.mean() - 3.8) < 0.15
    counts = np.bincount(lengths, minlength=11)
    assert counts.shape[0] == 11 and counts[0] == 0
    expected = np.array(PMF) * len(lengths)
    assert ((counts[1:] - expected) ** 2 / expected).sum() < CHI2_9DOF_P001


def test_spans_are_whole_words_starting_at_word_starts(blocks, masked):
    _, word_ids, _ = blocks
    words = word_ids.numpy()
    assert all(span_is_whole_words(words, *span) for span in masked.spans.tolist())
    assert (word_ids[masked.masked_positions] >= 0).all()


def test_replacement_is_decided_per_span_about_80_10_10(blocks, masked):
    input_ids, _, _ = blocks
    decisions = masked.span_replacement
    fractions = [(decisions == code).float().mean().item() for code in (REPLACE_MASK, REPLACE_RANDOM, REPLACE_KEEP)]
    np.testing.assert_allclose(fractions, [0.8, 0.1, 0.1], atol=0.025)
    # Random spans really get random tokens (each its own), not the original or [MASK].
    spans = masked.spans[decisions == REPLACE_RANDOM]
    replaced = torch.cat([masked.input_ids[b, s : e + 1] for b, s, e in spans.tolist()])
    originals = torch.cat([input_ids[b, s : e + 1] for b, s, e in spans.tolist()])
    assert (replaced == originals).float().mean() < 0.01
    assert (replaced == MASK).float().mean() < 0.01
    assert replaced.unique().numel() > 0.9 * replaced.numel()


def test_same_seed_same_masks_and_fresh_masks_on_each_call(blocks):
    input_ids, word_ids, _ = blocks
    input_ids, word_ids = input_ids[:32], word_ids[:32]
    masker = GeometricSpanMasker()
    first, again = mask(masker, input_ids, word_ids, seed=7), mask(masker, input_ids, word_ids, seed=7)
    for name in ("input_ids", "labels", "span_starts", "span_ends", "spans", "span_replacement", "span_num_words"):
        assert torch.equal(getattr(first, name), getattr(again, name)), name
    generator = torch.Generator().manual_seed(7)
    call_1 = masker.mask(input_ids, word_ids, mask_token_id=MASK, vocab_size=VOCAB_SIZE, generator=generator)
    call_2 = masker.mask(input_ids, word_ids, mask_token_id=MASK, vocab_size=VOCAB_SIZE, generator=generator)
    assert torch.equal(call_1.labels, first.labels)
    assert not torch.equal(call_1.masked_positions, call_2.masked_positions)
    assert not torch.equal(first.masked_positions, mask(masker, input_ids, word_ids, seed=8).masked_positions)


def test_inputs_are_not_modified(blocks):
    input_ids, word_ids, _ = blocks
    before = input_ids[:8].clone(), word_ids[:8].clone()
    mask(GeometricSpanMasker(), input_ids[:8], word_ids[:8])
    assert torch.equal(input_ids[:8], before[0]) and torch.equal(word_ids[:8], before[1])


def test_short_and_empty_sequences_do_not_hang_or_crash():
    content = [0, 1, 2, 3, 5, 8, 40, 510]
    input_ids, word_ids, _ = make_blocks(len(content), seed=2, content_lengths=content)
    output = mask(GeometricSpanMasker(), input_ids, word_ids)
    assert_valid_masking(output, input_ids, word_ids, MASK, VOCAB_SIZE)
    assert not output.masked_positions[0].any()
    assert output.masked_positions[-1].sum() > 40

    nothing_maskable = mask(GeometricSpanMasker(), input_ids[:1], word_ids[:1])
    assert nothing_maskable.spans.shape == (0, 3) and not nothing_maskable.masked_positions.any()
    assert torch.equal(nothing_maskable.input_ids, input_ids[:1])
    no_rows = mask(GeometricSpanMasker(), input_ids[:0], word_ids[:0])
    assert no_rows.input_ids.shape == (0, 512) and no_rows.spans.shape == (0, 3)


def test_one_word_sequences_are_masked_with_the_budget_probability():
    # With a single 1-piece word a sequence masks it or not; the stopping rule is exact here.
    input_ids, word_ids, _ = make_blocks(4000, length=3, seed=4, content_lengths=[1] * 4000)
    output = mask(GeometricSpanMasker(), input_ids, word_ids)
    assert abs(output.masked_positions.float().sum().item() / 4000 - 0.15) < 0.02


def test_spans_do_not_cross_special_tokens_inside_a_block():
    # [CLS] segment A [SEP] segment B [SEP]: word_ids is -1 at the middle [SEP].
    input_ids, word_ids, _ = make_blocks(200, length=64, seed=6)
    input_ids[:, 30], word_ids[:, 30] = SEP, -1
    output = mask(GeometricSpanMasker(masking_budget=0.4), input_ids, word_ids)
    assert_valid_masking(output, input_ids, word_ids, MASK, VOCAB_SIZE)
    spans = output.spans
    assert ((spans[:, 2] < 30) | (spans[:, 1] > 30)).all()
    assert ((spans[:, 2] == 29) | (spans[:, 2] == 62)).any()  # spans still reach segment ends


def test_constructor_knobs():
    input_ids, word_ids, _ = make_blocks(100, seed=8)
    maskable = (word_ids >= 0).sum().item()
    single_words = mask(GeometricSpanMasker(max_span_length=1), input_ids, word_ids)
    assert (single_words.span_num_words == 1).all()
    assert (mask(GeometricSpanMasker(geometric_p=1.0), input_ids, word_ids).span_num_words == 1).all()
    longer = mask(GeometricSpanMasker(min_span_length=3, max_span_length=3), input_ids, word_ids)
    assert (longer.span_num_words == 3).all()
    heavy = mask(GeometricSpanMasker(masking_budget=0.3), input_ids, word_ids)
    assert abs(heavy.masked_positions.sum().item() / maskable - 0.3) < 0.01
    all_masks = mask(GeometricSpanMasker(mask_probability=1.0, random_probability=0.0), input_ids, word_ids)
    assert (all_masks.input_ids[all_masks.masked_positions] == MASK).all()
    all_kept = mask(GeometricSpanMasker(mask_probability=0.0, random_probability=0.0), input_ids, word_ids)
    assert torch.equal(all_kept.input_ids, input_ids) and all_kept.masked_positions.any()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"geometric_p": 0.0},
        {"geometric_p": 1.5},
        {"max_span_length": 0},
        {"min_span_length": 4, "max_span_length": 3},
        {"masking_budget": 1.5},
        {"mask_probability": 0.8, "random_probability": 0.3},
        {"random_probability": -0.1},
        {"max_start_attempts": 0},
    ],
)
def test_bad_settings_are_rejected(kwargs):
    with pytest.raises(ValueError):
        GeometricSpanMasker(**kwargs)


def test_bad_inputs_are_rejected():
    input_ids, word_ids, _ = make_blocks(2, length=16, seed=0)
    masker = GeometricSpanMasker()
    with pytest.raises(ValueError, match="word_ids has shape"):
        mask(masker, input_ids, word_ids[:, :10])
    with pytest.raises(ValueError, match=r"\[batch, length\]"):
        mask(masker, input_ids[0], word_ids[0])
    with pytest.raises(ValueError, match="integer"):
        mask(masker, input_ids, word_ids.float())
    with pytest.raises(ValueError, match="mask_token_id"):
        masker.mask(input_ids, word_ids, mask_token_id=VOCAB_SIZE, vocab_size=VOCAB_SIZE)
    assert CLS not in (MASK, SEP)
