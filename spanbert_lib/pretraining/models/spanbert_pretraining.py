"""The SpanBERT pre-training model: MLM + span boundary objective (+ optional NSP)."""

import logging
from typing import Dict, Optional, cast

import torch
from allennlp.common.checks import ConfigurationError
from allennlp.data import Vocabulary
from allennlp.models import Model
from allennlp.training.metrics import Average, CategoricalAccuracy

from spanbert_lib.common.modules import MaskedLanguageModelHead, SpanBoundaryHead, TiedVocabularyDecoder
from spanbert_lib.common.modules.entity_aware import (
    ENTITY_MASK,
    ENTITY_PAD,
    NUM_SPECIAL_ENTITIES,
    EntityAwareTransformer,
    EntityPredictionHead,
    EntityVocabulary,
)
from spanbert_lib.common.transformers_encoder import TransformerSpec, load_encoder_and_tokenizer
from spanbert_lib.pretraining.masking import IGNORE_INDEX, Masker

logger = logging.getLogger(__name__)


class _TokenPredictionMetrics:
    """Accuracy and perplexity (exp of the mean token cross-entropy) of one prediction head."""

    def __init__(self) -> None:
        self.accuracy = CategoricalAccuracy()
        self.mean_loss = Average()

    def __call__(self, logits: torch.Tensor, targets: torch.Tensor, loss: torch.Tensor) -> None:
        self.accuracy(logits.detach(), targets)
        self.mean_loss(loss.detach())

    def get(self, prefix: str, reset: bool) -> Dict[str, float]:
        mean_loss = self.mean_loss.get_metric(reset)
        return {
            f"{prefix}_accuracy": self.accuracy.get_metric(reset),
            f"{prefix}_perplexity": float(torch.tensor(mean_loss).exp()),
        }


@Model.register("spanbert_pretraining")
class SpanBertPretraining(Model):
    """
    Pre-trains a BERT-family encoder as in SpanBERT (Joshi et al. 2020): the batch is masked
    on the fly by ``masker`` (fresh masks every time a batch is seen, i.e. every epoch), and the
    loss is ``mlm_weight * MLM + sbo_weight * SBO (+ nsp_weight * NSP)``. Both token heads
    decode through the encoder's input embedding matrix (tied output embeddings).

    Inputs (from ``spanbert_pretraining_corpus``): ``input_ids`` LongTensor[B, L], ``word_ids``
    LongTensor[B, L] (-1 at specials/padding), optional ``phrase_ids`` LongTensor[B, L], optional
    ``entity_ids`` LongTensor[B, E] and ``entity_spans`` LongTensor[B, E, 2] (inclusive positions).

    # Parameters

    vocab : `Vocabulary`
        Unused (the encoder brings its own wordpiece vocabulary).
    encoder : `TransformerSpec`
        Which encoder (kept as ``self.encoder``, the Hugging Face model): ``model_name`` is the
        directory (or hub name) with the tokenizer files, and the pretrained weights unless
        ``config`` is given; ``config`` builds a freshly initialised encoder with this configuration
        (e.g. ``{"hidden_size": 768, "num_hidden_layers": 12, ...}``; ``model_type`` defaults to bert).
    freeze_encoder : `bool`, optional (default = `False`)
        Train the heads only: the encoder (and with it the word embeddings the heads decode through)
        gets ``requires_grad=False`` and stays in evaluation mode (no dropout), so its weights are
        exactly those loaded. The baseline that shows what adapting the encoder buys.
    masker : `Masker`, optional (default = `geometric_span`)
        Draws the masked spans of every batch.
    mlm_weight : `float`, optional (default = `1.0`)
        Weight of the masked-LM loss.
    sbo_weight : `float`, optional (default = `1.0`)
        Weight of the span boundary objective; 0 disables it (the paper's "span masking only").
    nsp_weight : `float`, optional (default = `0.0`)
        > 0 adds BERT's next sentence prediction (the bi-sequence baseline); the reader must then
        provide ``segment_ids`` and ``next_sentence_label`` (``spanbert_nsp_corpus``).
    sbo_position_embedding_dim : `int`, optional (default = `200`)
        Size of the SBO head's relative position embeddings.
    sbo_max_span_width : `int`, optional (default = `32`)
        Longest span (in wordpieces) the SBO head has a position embedding for.
    masking_seed : `int`, optional (default = `13`)
        Seed of the masking generator (offset by the distributed rank); evaluation uses a
        generator re-seeded with it for every batch, so validation masks are fixed.
    entity_mlm_weight : `float`, optional (default = `0.0`)
        > 0 adds LUKE's masked entity prediction (Yamada et al. 2020): the encoder reads the
        reader's named entities as entity tokens beside the words (an ``EntityAwareTransformer``
        around the same HF encoder), ``entity_masking_probability`` of the entities with a
        vocabulary id are replaced by ``[MASK]`` and predicted by an ``EntityPredictionHead`` tied
        to the entity embeddings; the loss adds ``entity_mlm_weight * entity MLM``.
        ``export-encoder`` exports the word encoder; the entity weights stay in the archive.
    entity_vocabulary : `str`, optional (default = `None`)
        The entity names file (the same as the reader's); needed when ``entity_mlm_weight > 0``.
    entity_masking_probability : `float`, optional (default = `0.15`)
    entity_embedding_dim : `int`, optional (default = `256`)
    entity_aware_attention : `bool`, optional (default = `True`)
        Settings of the entity-aware encoder used for ``entity_mlm_weight > 0``.
    """

    def __init__(
        self,
        vocab: Vocabulary,
        encoder: TransformerSpec,
        freeze_encoder: bool = False,
        masker: Optional[Masker] = None,
        mlm_weight: float = 1.0,
        sbo_weight: float = 1.0,
        nsp_weight: float = 0.0,
        sbo_position_embedding_dim: int = 200,
        sbo_max_span_width: int = 32,
        masking_seed: int = 13,
        entity_mlm_weight: float = 0.0,
        entity_vocabulary: Optional[str] = None,
        entity_masking_probability: float = 0.15,
        entity_embedding_dim: int = 256,
        entity_aware_attention: bool = True,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        spec = TransformerSpec.coerce(encoder)
        self.encoder, tokenizer = load_encoder_and_tokenizer(
            spec.model_name, spec.config, **spec.from_pretrained_kwargs
        )
        self._tokenizer = tokenizer
        self.freeze_encoder = freeze_encoder
        if freeze_encoder:
            self.encoder.requires_grad_(False)
            self.encoder.eval()
        self.masker = masker or Masker.by_name(Masker.default_implementation)()
        self.mask_token_id = tokenizer.mask_token_id
        self.pad_token_id = tokenizer.pad_token_id
        # transformers annotates it as any Module; a BERT-style model's is an Embedding
        embeddings = cast(torch.nn.Embedding, self.encoder.get_input_embeddings())
        self.vocab_size = embeddings.num_embeddings
        hidden_size = embeddings.embedding_dim
        layer_norm_eps = getattr(self.encoder.config, "layer_norm_eps", 1e-12)

        self.mlm_weight, self.sbo_weight, self.nsp_weight = mlm_weight, sbo_weight, nsp_weight
        self.mlm_head = MaskedLanguageModelHead(embeddings, layer_norm_eps=layer_norm_eps)
        self.sbo_head: Optional[SpanBoundaryHead] = None
        self.sbo_decoder: Optional[TiedVocabularyDecoder] = None  # None exactly when sbo_head is
        if sbo_weight > 0:
            self.sbo_head = SpanBoundaryHead(
                hidden_size, sbo_position_embedding_dim, sbo_max_span_width, layer_norm_eps=layer_norm_eps
            )
            self.sbo_decoder = TiedVocabularyDecoder(embeddings)
        self.nsp_classifier = torch.nn.Linear(hidden_size, 2) if nsp_weight > 0 else None
        if self.nsp_classifier is None and getattr(self.encoder, "pooler", None) is not None:
            # Unused without NSP: frozen, so that DDP does not wait for its gradients
            # (the weights are kept and exported unchanged).
            self.encoder.pooler.requires_grad_(False)

        self.entity_mlm_weight = entity_mlm_weight
        self.entity_masking_probability = entity_masking_probability
        self.entity_encoder: Optional[EntityAwareTransformer] = None
        self.entity_head: Optional[EntityPredictionHead] = None  # None exactly when entity_encoder is
        if entity_mlm_weight > 0:
            if entity_vocabulary is None:
                raise ConfigurationError(
                    "entity_mlm_weight > 0 needs entity_vocabulary (the entity names file the reader uses)"
                )
            self.entity_encoder = EntityAwareTransformer.wrapping(
                self.encoder,
                len(EntityVocabulary.from_file(entity_vocabulary)),
                entity_embedding_dim,
                entity_aware_attention,
            )
            self.entity_head = EntityPredictionHead(self.entity_encoder.entity_embeddings, layer_norm_eps)
        self._entity_metrics = _TokenPredictionMetrics()

        self.masking_seed = masking_seed
        self._generators: Dict[str, torch.Generator] = {}
        self._mlm_metrics = _TokenPredictionMetrics()
        self._sbo_metrics = _TokenPredictionMetrics()
        self._nsp_accuracy = CategoricalAccuracy()

    @property
    def tokenizer(self):
        return self._tokenizer

    def train(self, mode: bool = True) -> "SpanBertPretraining":
        super().train(mode)
        if self.freeze_encoder:
            self.encoder.eval()  # a frozen encoder gives the heads the states it gives at prediction time
        return self

    def _generator(self, device: torch.device) -> torch.Generator:
        key = f"{device}:{'train' if self.training else 'eval'}"
        generator = self._generators.get(key)
        if generator is None:
            generator = torch.Generator(device=device)
            rank = torch.distributed.get_rank() if torch.distributed.is_initialized() else 0
            generator.manual_seed(self.masking_seed + 1000003 * rank)
            self._generators[key] = generator
        if not self.training:
            generator.manual_seed(self.masking_seed)
        return generator

    def random_state_dict(self) -> Dict[str, torch.Tensor]:
        """The masking generators' states (saved in checkpoints, so that a resumed run masks as the original)."""
        return {key: generator.get_state() for key, generator in self._generators.items()}

    def load_random_state_dict(self, state: Dict[str, torch.Tensor]) -> None:
        for key, generator_state in state.items():
            if key not in self._generators:
                device = key.rsplit(":", 1)[0]  # keys are "{device}:{train|eval}"
                self._generators[key] = torch.Generator(device=device)
            self._generators[key].set_state(generator_state)

    def forward(
        self,
        input_ids: torch.Tensor,
        word_ids: torch.Tensor,
        phrase_ids: Optional[torch.Tensor] = None,
        segment_ids: Optional[torch.Tensor] = None,
        next_sentence_label: Optional[torch.Tensor] = None,
        entity_ids: Optional[torch.Tensor] = None,
        entity_spans: Optional[torch.Tensor] = None,
    ) -> Dict[str, torch.Tensor]:
        """
        Returns ``loss`` (scalar) and the separate ``mlm_loss``/``sbo_loss``/``nsp_loss``/``entity_mlm_loss``.
        """
        generator = self._generator(input_ids.device)
        masked = self.masker.mask(
            input_ids,
            word_ids,
            mask_token_id=self.mask_token_id,
            vocab_size=self.vocab_size,
            phrase_ids=phrase_ids,
            generator=generator,
        )
        attention_mask = input_ids != self.pad_token_id
        output: Dict[str, torch.Tensor] = {}
        if self.entity_encoder is None:
            encoded = self.encoder(
                input_ids=masked.input_ids, attention_mask=attention_mask.long(), token_type_ids=segment_ids
            )
            hidden = encoded.last_hidden_state  # [B, L, H]
        else:
            if entity_ids is None or entity_spans is None:
                raise ValueError(
                    "entity_mlm_weight > 0 needs `entity_ids` and `entity_spans` from the reader "
                    "(spanbert_pretraining_corpus with entity_vocabulary and "
                    "phrase_annotation='named_entity')"
                )
            encoded = None
            hidden, entity_loss = self._entity_mlm(
                masked.input_ids, attention_mask, segment_ids, entity_ids, entity_spans, generator
            )
            output["entity_mlm_loss"] = entity_loss

        targets_at = masked.labels != IGNORE_INDEX  # [B, L]
        batch_index, position = targets_at.nonzero(as_tuple=True)  # [N] each
        targets = masked.labels[batch_index, position]  # [N]
        target_hidden = hidden[batch_index, position]  # [N, H]
        output["num_masked_tokens"] = targets.new_tensor(targets.numel())

        mlm_logits = self.mlm_head(target_hidden)  # [N, V]
        mlm_loss = torch.nn.functional.cross_entropy(mlm_logits, targets) if targets.numel() else hidden.sum() * 0
        output["mlm_loss"] = mlm_loss
        loss = self.mlm_weight * mlm_loss
        if targets.numel():
            self._mlm_metrics(mlm_logits, targets, mlm_loss)

        if self.sbo_head is not None and self.sbo_decoder is not None:
            span_starts = masked.span_starts[batch_index, position].unsqueeze(0)  # [1, N]
            span_ends = masked.span_ends[batch_index, position].unsqueeze(0)
            # Flatten the batch: gather boundaries from each target's own sequence.
            flat_hidden = hidden.reshape(1, -1, hidden.size(-1))
            offset = (batch_index * hidden.size(1)).unsqueeze(0)
            sbo_hidden = self.sbo_head(
                flat_hidden, span_starts + offset, span_ends + offset, position.unsqueeze(0) + offset
            ).squeeze(0)  # [N, H]
            sbo_logits = self.sbo_decoder(sbo_hidden)
            sbo_loss = torch.nn.functional.cross_entropy(sbo_logits, targets) if targets.numel() else hidden.sum() * 0
            output["sbo_loss"] = sbo_loss
            loss = loss + self.sbo_weight * sbo_loss
            if targets.numel():
                self._sbo_metrics(sbo_logits, targets, sbo_loss)

        if self.nsp_classifier is not None:
            if next_sentence_label is None:
                raise ValueError(
                    "nsp_weight > 0 needs `next_sentence_label` from the reader "
                    "(use the `spanbert_nsp_corpus` dataset reader)"
                )
            pooled = encoded.pooler_output if getattr(encoded, "pooler_output", None) is not None else hidden[:, 0]
            nsp_logits = self.nsp_classifier(pooled)
            nsp_loss = torch.nn.functional.cross_entropy(nsp_logits, next_sentence_label.view(-1))
            output["nsp_loss"] = nsp_loss
            loss = loss + self.nsp_weight * nsp_loss
            self._nsp_accuracy(nsp_logits.detach(), next_sentence_label.view(-1))
        if "entity_mlm_loss" in output:
            loss = loss + self.entity_mlm_weight * output["entity_mlm_loss"]
        output["loss"] = loss
        return output

    def _entity_mlm(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        segment_ids: Optional[torch.Tensor],
        entity_ids: torch.Tensor,
        entity_spans: torch.Tensor,
        generator: torch.Generator,
    ):
        """
        Masks ``entity_masking_probability`` of the entities that have a vocabulary id (ids from
        ``NUM_SPECIAL_ENTITIES``), encodes words and entities together and returns
        ``(word_states [B, L, H], entity MLM loss)``.
        """
        assert self.entity_encoder is not None and self.entity_head is not None  # forward checked it
        entity_mask = entity_ids != ENTITY_PAD  # [B, E]
        draws = torch.rand(entity_ids.shape, generator=generator, device=entity_ids.device)
        chosen = (draws < self.entity_masking_probability) & (entity_ids >= NUM_SPECIAL_ENTITIES)
        hidden, entity_states = self.entity_encoder(
            input_ids,
            attention_mask,
            segment_ids,
            entity_ids.masked_fill(chosen, ENTITY_MASK),
            entity_spans,
            entity_mask,
        )
        logits, loss = self.entity_head.loss(entity_states, entity_ids, chosen)
        if logits.size(0):
            self._entity_metrics(logits, entity_ids[chosen], loss)
        return hidden, loss

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = self._mlm_metrics.get("mlm", reset)
        if self.sbo_head is not None:
            metrics.update(self._sbo_metrics.get("sbo", reset))
        if self.nsp_classifier is not None:
            metrics["nsp_accuracy"] = self._nsp_accuracy.get_metric(reset)
        if self.entity_head is not None:
            metrics.update(self._entity_metrics.get("entity_mlm", reset))
        return metrics
