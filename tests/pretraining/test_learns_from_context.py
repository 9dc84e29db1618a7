"""
The pre-training model must learn what only the context determines.

Synthetic blocks where every masked word follows from the unmasked words of its block: a
model that sees its input correctly (attention mask, position ids, [MASK] replacement, labels
aligned with the MLM logits, tied decoder) fills [MASK] positions far above the unigram
baseline within a few hundred steps; a model that sees only word frequencies cannot.
"""

import torch
from allennlp.data import Vocabulary

from spanbert_lib.common.transformers_encoder import TransformerSpec
from spanbert_lib.pretraining.masking import IGNORE_INDEX
from spanbert_lib.pretraining.masking.geometric_span import GeometricSpanMasker
from spanbert_lib.pretraining.models import SpanBertPretraining
from tests import TINY_BERT_DIR

NUM_WORDS = 40  # candidate words: the unigram baseline is about 1 / NUM_WORDS
BLOCK_WORDS = 22  # words per block, between [CLS] and [SEP]
STEPS = 300


def _word_ids_of_vocabulary(tokenizer) -> torch.Tensor:
    """NUM_WORDS whole-word vocabulary ids (no specials, no continuation pieces)."""
    ids = [
        index
        for token, index in sorted(tokenizer.get_vocab().items(), key=lambda item: item[1])
        if token.isalpha() and token.islower() and len(token) > 2
    ]
    return torch.tensor(ids[:NUM_WORDS])


def alternating_blocks(words: torch.Tensor, tokenizer, batch_size: int, generator: torch.Generator):
    """
    Blocks ``[CLS] a b a b ... [SEP]`` with two random words a, b per block: a masked word is
    determined by its position's parity and the visible words. Returns ``input_ids`` and
    ``word_ids``, LongTensor[B, L] each.
    """
    pair = words[torch.randint(len(words), (batch_size, 2), generator=generator)]  # [B, 2]
    body = pair[:, torch.arange(BLOCK_WORDS) % 2]  # [B, W]
    cls = torch.full((batch_size, 1), tokenizer.cls_token_id)
    sep = torch.full((batch_size, 1), tokenizer.sep_token_id)
    input_ids = torch.cat([cls, body, sep], dim=1)
    word_ids = torch.cat(
        [
            torch.full((batch_size, 1), -1),
            torch.arange(BLOCK_WORDS).expand(batch_size, -1),
            torch.full((batch_size, 1), -1),
        ],
        dim=1,
    )
    return input_ids, word_ids


def heldout_accuracies(model: SpanBertPretraining, input_ids, word_ids):
    """
    ``(MLM accuracy at the positions replaced by [MASK], SBO accuracy at all masked positions)``
    with the model's fixed evaluation masks.
    """
    model.eval()
    model.get_metrics(reset=True)
    with torch.no_grad():
        model(input_ids, word_ids)
        sbo_accuracy = model.get_metrics(reset=True)["sbo_accuracy"]
        masked = model.masker.mask(
            input_ids,
            word_ids,
            mask_token_id=model.mask_token_id,
            vocab_size=model.vocab_size,
            generator=torch.Generator().manual_seed(model.masking_seed),
        )
        hidden = model.encoder(
            input_ids=masked.input_ids, attention_mask=(input_ids != model.pad_token_id).long()
        ).last_hidden_state
        at_mask = (masked.labels != IGNORE_INDEX) & (masked.input_ids == model.mask_token_id)
        predictions = model.mlm_head(hidden[at_mask]).argmax(-1)
        mlm_accuracy = (predictions == masked.labels[at_mask]).float().mean().item()
    return mlm_accuracy, sbo_accuracy


def test_fills_masked_spans_from_context():
    torch.manual_seed(0)
    model = SpanBertPretraining(
        Vocabulary(),
        TransformerSpec(
            str(TINY_BERT_DIR),
            config={
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "intermediate_size": 128,
                "max_position_embeddings": BLOCK_WORDS + 2,
                "hidden_dropout_prob": 0.0,
                "attention_probs_dropout_prob": 0.0,
            },
        ),
        masker=GeometricSpanMasker(masking_budget=0.15),
        sbo_position_embedding_dim=16,
    )
    words = _word_ids_of_vocabulary(model.tokenizer)
    data = torch.Generator().manual_seed(0)
    heldout = alternating_blocks(words, model.tokenizer, 256, torch.Generator().manual_seed(99))
    mlm_before, sbo_before = heldout_accuracies(model, *heldout)

    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    for _ in range(STEPS):
        model.train()
        loss = model(*alternating_blocks(words, model.tokenizer, 32, data))["loss"]
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    mlm_after, sbo_after = heldout_accuracies(model, *heldout)

    # The unigram baseline is about 1 / NUM_WORDS = 0.025.
    assert mlm_before < 0.1 and sbo_before < 0.1
    assert mlm_after > 0.8, f"MLM accuracy at [MASK] {mlm_after:.3f} after {STEPS} steps (before: {mlm_before:.3f})"
    # The SBO head sees only the span's outside neighbours and the offset, which also determine the word.
    assert sbo_after > 0.5, f"SBO accuracy {sbo_after:.3f} after {STEPS} steps (before: {sbo_before:.3f})"
