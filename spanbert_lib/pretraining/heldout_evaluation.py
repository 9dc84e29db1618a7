"""
Held-out evaluation of a pre-trained ``spanbert_pretraining`` model with fixed, seeded masks,
against the unigram baseline (predicting the corpus's most frequent wordpiece at every masked
position), and the model's fill-ins of masked spans for reading.

The model is run through its own ``forward`` (with its configured masker), so the figures are the
ones its ``mlm_accuracy`` / ``sbo_accuracy`` metrics would report; forward hooks on the two
prediction heads collect the predictions, and the masks are redrawn beside it from the same seed.

Shapes: `B` blocks in a batch, `L` wordpieces of a block, `N` masked positions (of a block, or of
all blocks together where said).
"""

from collections import Counter
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, cast

import torch
from allennlp.data import Batch, Instance, Vocabulary
from allennlp.data.fields import TensorField

from spanbert_lib.pretraining.masking import IGNORE_INDEX


@dataclass
class MaskedBlock:
    """
    One masked block and what the model predicted at its masked positions.

    # Parameters

    input_ids : `torch.Tensor`
        `[L]` the block's wordpiece ids (no padding).
    positions : `torch.Tensor`
        `[N]` the masked positions.
    targets : `torch.Tensor`
        `[N]` the original ids at those positions.
    mlm_predictions : `torch.Tensor`
        `[N]` the MLM head's predicted ids.
    seen_ids : `torch.Tensor`
        `[N]` the ids the model saw there (``[MASK]``, a random wordpiece or the original, kept).
    sbo_predictions : `torch.Tensor`, optional
        `[N]` the SBO head's predicted ids (None: a model without the SBO head).
    mlm_target_log_probs : `torch.Tensor`, optional
        `[N]` float, the MLM head's log-probability of the original id (needed for perplexities).
    sbo_target_log_probs : `torch.Tensor`, optional
        `[N]` float, the SBO head's log-probability of the original id.
    """

    input_ids: torch.Tensor
    positions: torch.Tensor
    targets: torch.Tensor
    mlm_predictions: torch.Tensor
    seen_ids: torch.Tensor
    sbo_predictions: Optional[torch.Tensor] = None
    mlm_target_log_probs: Optional[torch.Tensor] = None
    sbo_target_log_probs: Optional[torch.Tensor] = None


@dataclass
class HeldoutEvaluation:
    """
    Predictions of one pass per masking seed over the held-out blocks.

    # Parameters

    mask_token_id : `int`
        Id of ``[MASK]``, to tell the positions the model saw masked.
    blocks : `List[MaskedBlock]`, optional (default = `[]`)
        The masked blocks of every pass.
    """

    mask_token_id: int
    blocks: List[MaskedBlock] = field(default_factory=list)

    def _all(self, name: str) -> torch.Tensor:
        values = [getattr(block, name) for block in self.blocks]
        if any(value is None for value in values):
            raise ValueError(f"no {name} in these blocks: the model has no SBO head (sbo_weight 0)")
        return torch.cat(values) if values else torch.zeros(0, dtype=torch.long)

    @property
    def num_predictions(self) -> int:
        """Masked positions over all blocks."""
        return int(self._all("targets").numel())

    def _selected(self, replaced_by_mask: Optional[bool]) -> torch.Tensor:
        """
        Bool `[N]` over all blocks: all target positions, or those the model saw as ``[MASK]``
        (True) / not (False).
        """
        seen = self._all("seen_ids")
        if replaced_by_mask is None:
            return torch.ones_like(seen, dtype=torch.bool)
        return (seen == self.mask_token_id) == replaced_by_mask

    def accuracy(self, head: str, replaced_by_mask: Optional[bool] = None) -> float:
        """
        Share of target positions where a head predicts the original wordpiece.

        # Parameters

        head : `str`
            ``"mlm"`` or ``"sbo"``.
        replaced_by_mask : `bool`, optional (default = `None`)
            True counts only positions the model saw as ``[MASK]`` (not the 10 % of spans kept
            as they are, whose original a model can copy, nor the 10 % replaced by random
            wordpieces); False only the others; None all.

        # Returns

        `float`
            The accuracy (0.0 when no position is selected).
        """
        selected = self._selected(replaced_by_mask)
        correct = self._all(f"{head}_predictions") == self._all("targets")
        return float(correct[selected].float().mean()) if selected.any() else 0.0

    def perplexity(self, head: str, replaced_by_mask: Optional[bool] = None) -> float:
        """
        ``exp`` of a head's mean cross-entropy (nats) on the original wordpieces: unlike accuracy it sees
        the probability given to the right wordpiece when it is not the top one, so it shows learning
        before the top prediction changes. Positions selected as for :meth:`accuracy` (inf when none).
        """
        selected = self._selected(replaced_by_mask)
        log_probs = self._all(f"{head}_target_log_probs")
        return float(torch.exp(-log_probs[selected].mean())) if selected.any() else float("inf")

    def unigram_perplexity(self, log_probs: torch.Tensor, replaced_by_mask: Optional[bool] = None) -> float:
        """
        Perplexity of predicting the same distribution everywhere (``log_probs`` `[V]`, e.g. from
        :func:`wordpiece_log_probabilities`), positions selected as for :meth:`accuracy`.
        """
        selected = self._selected(replaced_by_mask)
        targets = self._all("targets")[selected]
        return float(torch.exp(-log_probs[targets].mean())) if selected.any() else float("inf")

    def constant_accuracy(self, token_id: int, replaced_by_mask: Optional[bool] = None) -> float:
        """
        Accuracy of predicting one id everywhere (the unigram baseline for the most frequent id).

        # Parameters

        token_id : `int`
            The id predicted.
        replaced_by_mask : `bool`, optional (default = `None`)
            Which positions count, as for :meth:`accuracy`.

        # Returns

        `float`
            The accuracy (0.0 when no position is selected).
        """
        selected = self._selected(replaced_by_mask)
        return float((self._all("targets")[selected] == token_id).float().mean()) if selected.any() else 0.0


def most_frequent_wordpiece(instances: Iterable[Instance], special_ids: Sequence[int]) -> int:
    """
    The most frequent wordpiece of some instances (training text).

    # Parameters

    instances : `Iterable[Instance]`
        Instances with an ``input_ids`` field.
    special_ids : `Sequence[int]`
        Ids not counted.

    # Returns

    `int`
        The most frequent id.
    """
    counts: Counter = Counter()
    for instance in instances:
        counts.update(cast(TensorField, instance["input_ids"]).tensor.tolist())
    for special in special_ids:
        counts.pop(special, None)
    if not counts:
        raise ValueError("no wordpiece to count: the instances hold only special tokens")
    return counts.most_common(1)[0][0]


def wordpiece_log_probabilities(
    instances: Iterable[Instance], special_ids: Sequence[int], vocab_size: int
) -> torch.Tensor:
    """
    `[V]` log-probabilities of the unigram model of the blocks' wordpieces (special ids left out), with
    add-one smoothing so that a wordpiece the training text never has keeps a finite cost.
    """
    counts = torch.ones(vocab_size, dtype=torch.float64)
    special = set(special_ids)
    for instance in instances:
        ids = [i for i in cast(TensorField, instance["input_ids"]).tensor.tolist() if i not in special]
        counts += torch.bincount(torch.tensor(ids, dtype=torch.long), minlength=vocab_size).to(counts)
    return (counts / counts.sum()).log().float()


def evaluate_heldout(
    model, instances: Sequence[Instance], seeds: Sequence[int] = (0,), batch_size: int = 32
) -> HeldoutEvaluation:
    """
    Masks every block once per seed (the model's masker, the model's evaluation masking with
    ``masking_seed = seed``) and records the MLM and SBO predictions at the masked positions, on the
    model's device (the blocks' figures are kept on the CPU).

    # Parameters

    model : `SpanBertPretraining`
        The model; without an SBO head (``sbo_weight`` 0) only the MLM figures are recorded.
    instances : `Sequence[Instance]`
        The held-out blocks.
    seeds : `Sequence[int]`, optional (default = `(0,)`)
        One pass per masking seed.
    batch_size : `int`, optional (default = `32`)
        Blocks per forward pass.

    # Returns

    `HeldoutEvaluation`
        The masked blocks of every pass.
    """
    captured: Dict[str, torch.Tensor] = {}
    hooks = [model.mlm_head.register_forward_hook(lambda module, args, output: captured.__setitem__("mlm", output))]
    if model.sbo_decoder is not None:
        hooks.append(
            model.sbo_decoder.register_forward_hook(lambda module, args, output: captured.__setitem__("sbo", output))
        )
    device = next(model.parameters()).device
    original_seed, was_training = model.masking_seed, model.training
    model.eval()
    evaluation = HeldoutEvaluation(model.mask_token_id)
    vocabulary = Vocabulary()
    try:
        with torch.no_grad():
            for seed in seeds:
                model.masking_seed = seed
                for start in range(0, len(instances), batch_size):
                    batch = Batch(list(instances[start : start + batch_size]))
                    batch.index_instances(vocabulary)
                    tensors = cast(Dict[str, torch.Tensor], batch.as_tensor_dict())  # TensorFields only
                    tensors = {name: tensor.to(device) for name, tensor in tensors.items()}
                    evaluation.blocks.extend(_masked_blocks(model, tensors, seed, captured))
    finally:
        for hook in hooks:
            hook.remove()
        model.masking_seed = original_seed
        model.train(was_training)
    return evaluation


def _masked_blocks(
    model, tensors: Dict[str, torch.Tensor], seed: int, captured: Dict[str, torch.Tensor]
) -> List[MaskedBlock]:
    captured.clear()
    model(**tensors)
    # The model's evaluation generator is re-seeded with `masking_seed` for every batch, so the
    # same seed redraws exactly the masks the forward pass used.
    generator = torch.Generator(device=tensors["input_ids"].device).manual_seed(seed)
    masked = model.masker.mask(
        tensors["input_ids"],
        tensors["word_ids"],
        mask_token_id=model.mask_token_id,
        vocab_size=model.vocab_size,
        phrase_ids=tensors.get("phrase_ids"),
        generator=generator,
    )
    heads = [head for head in ("mlm", "sbo") if head in captured]
    masked_labels = masked.labels.cpu()
    targets_at = masked_labels != IGNORE_INDEX  # [B, L]
    num_targets = int(targets_at.sum())
    if num_targets == 0:
        return []
    if any(captured[head].size(0) != num_targets for head in heads):
        raise RuntimeError(
            "the redrawn masks differ from the model's: is the masker deterministic given its generator?"
        )
    all_targets = masked_labels[targets_at]  # [N], in the heads' order (row-major)
    predictions = {head: captured[head].argmax(-1).cpu() for head in heads}  # [N] each
    log_probs = {
        head: captured[head].float().log_softmax(-1).cpu().gather(1, all_targets[:, None]).squeeze(1)  # [N]
        for head in heads
    }
    input_ids, seen = tensors["input_ids"].cpu(), masked.input_ids.cpu()
    rows_of_targets = targets_at.sum(dim=1).tolist()
    lengths = (input_ids != model.pad_token_id).sum(dim=1).tolist()
    blocks, first = [], 0
    for row, (count, length) in enumerate(zip(rows_of_targets, lengths)):
        positions = targets_at[row].nonzero(as_tuple=True)[0]
        part = slice(first, first + count)
        blocks.append(
            MaskedBlock(
                input_ids=input_ids[row, :length],
                positions=positions,
                targets=masked_labels[row, positions],
                mlm_predictions=predictions["mlm"][part],
                seen_ids=seen[row, positions],
                sbo_predictions=predictions["sbo"][part] if "sbo" in predictions else None,
                mlm_target_log_probs=log_probs["mlm"][part],
                sbo_target_log_probs=log_probs["sbo"][part] if "sbo" in log_probs else None,
            )
        )
        first += count
    return blocks


def format_fill_ins(block: MaskedBlock, tokenizer, max_words: int = 60, head: str = "mlm") -> str:
    """
    The block as text in whole words, each masked span written ``[original words -> the model's words]``.

    Words are the original wordpieces glued at their ``##`` continuations; a span covers every word
    with a masked wordpiece. The model's words are its predicted wordpieces there (the original
    ones at unmasked pieces of a partly masked word), glued the same way: a ``##`` piece it predicts
    continues its previous piece, any other piece starts a new word.

    # Parameters

    block : `MaskedBlock`
        The block.
    tokenizer : `PreTrainedTokenizer`
        Turns ids into wordpieces (``convert_ids_to_tokens``).
    max_words : `int`, optional (default = `60`)
        Longer blocks are cut to about this many words around the first span.
    head : `str`, optional (default = `"mlm"`)
        Whose predictions: ``"mlm"`` or ``"sbo"``.

    # Returns

    `str`
        The text.
    """
    tokens = tokenizer.convert_ids_to_tokens(block.input_ids.tolist())
    predictions = getattr(block, f"{head}_predictions").tolist()
    predicted = dict(zip(block.positions.tolist(), tokenizer.convert_ids_to_tokens(predictions)))
    words = _words(tokens[1:-1], first_position=1)  # without [CLS] and [SEP]
    pieces: List[str] = []
    index = 0
    while index < len(words):
        if not any(position in predicted for position in words[index]):
            pieces.append(_join_pieces([tokens[position] for position in words[index]]))
            index += 1
            continue
        end = index
        while end + 1 < len(words) and any(position in predicted for position in words[end + 1]):
            end += 1
        positions = [position for word in words[index : end + 1] for position in word]
        gold = _join_pieces([tokens[position] for position in positions])
        guess = _join_pieces([predicted.get(position, tokens[position]) for position in positions])
        pieces.append(f"[{gold} -> {guess}]")
        index = end + 1
    text = " ".join(pieces).split(" ")
    if len(text) > max_words:
        first_span = next((i for i, word in enumerate(text) if word.startswith("[")), 0)
        start = max(0, min(first_span - max_words // 4, len(text) - max_words))
        text = (["..."] if start else []) + text[start : start + max_words] + ["..."]
    return " ".join(text)


def _words(tokens: Sequence[str], first_position: int) -> List[List[int]]:
    """The positions of each word: a wordpiece and the ``##`` continuations after it."""
    words: List[List[int]] = []
    for offset, token in enumerate(tokens):
        if token.startswith("##") and words:
            words[-1].append(first_position + offset)
        else:
            words.append([first_position + offset])
    return words


def _join_pieces(pieces: Sequence[str]) -> str:
    """Wordpieces to text: ``##`` continuations are glued to the previous piece (a leading one loses its ``##``)."""
    text = ""
    for piece in pieces:
        if piece.startswith("##"):
            text += piece[2:]
        else:
            text += " " + piece if text else piece
    return text
