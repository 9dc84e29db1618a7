"""
The ``entity_aware_transformer`` encoder: a pretrained BERT-family model that reads entities as
tokens beside the words (LUKE, Yamada et al. 2020).

Shapes: `B` batch, `L` wordpieces, `E` entities per example, `H` hidden size.

Inputs (``forward``), all batch-first:

- ``token_ids`` `[B, L]` long, ``mask`` `[B, L]` bool, ``type_ids`` `[B, L]` long (optional):
  the wordpieces as for the plain HF model (``[CLS] ... [SEP]``); the encoder does not tokenise.
- ``entity_ids`` `[B, E]` long: ids of ``entity_vocabulary`` (``ENTITY_MASK`` = 2 etc., real
  entities from 6).
- ``entity_spans`` `[B, E, 2]` long: the mention of each entity as INCLUSIVE positions into
  ``token_ids`` (so the first wordpiece after ``[CLS]`` is 1); an entity's position embedding is
  the mean of the word position embeddings over its span.
- ``entity_mask`` `[B, E]` bool: real entities (default: ``entity_ids != ENTITY_PAD``); padded
  entities may hold anything and change no output.

Outputs: ``(word_states [B, L, H], entity_states [B, E, H])``; ``entity_states`` is None when no
``entity_ids`` are given, and zero at padded entities. Without entities the word states are those
of the plain HF model (same weights, same computation).

How a task model uses it:

- span NER / entity typing: one ``ENTITY_MASK`` entity per candidate span (``entity_spans`` = the
  span); classify ``entity_states`` (concatenated, in LUKE's NER, with the span's boundary word states).
- relation classification: entities ``[ENTITY_HEAD, ENTITY_TAIL]`` at the two mentions; classify
  ``cat(entity_states[:, 0], entity_states[:, 1])``.
- entity-MLM pre-training: real entity ids, some replaced by ``ENTITY_MASK``; predict them with
  ``EntityPredictionHead(encoder.entity_embeddings)``.

Architecture: the HF model's embeddings embed the words; ``EntityEmbeddings`` the entities; then
our own loop over the HF layers runs, for each layer, ``EntityAwareSelfAttention`` (keys/values of
the pretrained layer over ``[words; entities]``, four query matrices) followed by the layer's own
``attention.output`` (projection, dropout, residual, LayerNorm) and FFN (``intermediate``,
``output``), applied to words and entities alike, so the pretrained weights are used unchanged.
Supported: models whose layers are BERT/RoBERTa-style (``encoder.layer[i].attention.self.{query,
key,value}``, ``attention.output``, ``intermediate``, ``output``) with absolute position embeddings
(BERT, RoBERTa, MiniLM, SpanBERT, ...). The pooler is dropped.

Parameter names: ``transformer.*`` (the HF model's own names), ``entity_embeddings.*``,
``self_attentions.{i}.{word_to_entity,entity_to_word,entity_to_entity}_query.*``.
"""

from typing import Optional, Protocol, Sequence, Tuple, cast

import torch
import transformers
from allennlp.common import Registrable

from spanbert_lib.common.modules.entity_aware.entity_aware_attention import (
    BertStyleSelfAttention,
    EntityAwareSelfAttention,
)
from spanbert_lib.common.modules.entity_aware.entity_embeddings import EntityEmbeddings
from spanbert_lib.common.modules.entity_aware.entity_vocabulary import ENTITY_PAD, NUM_SPECIAL_ENTITIES


class EntityAwareEncoder(torch.nn.Module, Registrable):
    """
    Base class of encoders that contextualise words and entities together:
    ``forward(token_ids, mask, type_ids=None, entity_ids=None, entity_spans=None, entity_mask=None)
    -> (word_states [B, L, H], entity_states [B, E, H] or None)``.
    """

    default_implementation = "entity_aware_transformer"

    def get_output_dim(self) -> int:
        raise NotImplementedError


class _BertStyleEmbeddings(Protocol):
    position_embeddings: torch.nn.Embedding


class _BertStyleAttention(Protocol):
    self: BertStyleSelfAttention
    output: torch.nn.Module  # (context, layer input) -> attended


class _BertStyleLayer(Protocol):
    """What the encoder runs of an HF layer (:func:`_check_layers` checks that a model's layers have it)."""

    attention: _BertStyleAttention
    intermediate: torch.nn.Module
    output: torch.nn.Module  # (intermediate, attended) -> the layer's output


def _check_layers(model: transformers.PreTrainedModel, model_name: str) -> Sequence[_BertStyleLayer]:
    layers = getattr(getattr(model, "encoder", None), "layer", None)
    problem = None
    if layers is None or getattr(model, "embeddings", None) is None:
        problem = "it has no `embeddings` and `encoder.layer` modules"
    else:
        for name in (
            "attention.self.query",
            "attention.self.key",
            "attention.self.value",
            "attention.output",
            "intermediate",
            "output",
        ):
            try:
                layers[0].get_submodule(name)
            except AttributeError:
                problem = f"its layers have no `{name}`"
                break
    if problem is None and getattr(model.config, "position_embedding_type", "absolute") != "absolute":
        problem = f"position_embedding_type is {model.config.position_embedding_type!r}, not 'absolute'"
    if problem is None and getattr(model.embeddings, "position_embeddings", None) is None:
        problem = "it has no absolute `embeddings.position_embeddings`"
    if problem is not None:
        raise ValueError(
            f"entity_aware_transformer needs a BERT/RoBERTa-style model, but {model_name} "
            f"(model_type {model.config.model_type!r}) does not fit: {problem}"
        )
    return cast(Sequence[_BertStyleLayer], layers)  # checked above


@EntityAwareEncoder.register("entity_aware_transformer")
class EntityAwareTransformer(EntityAwareEncoder):
    """
    # Parameters

    model_name : `str`
        Local directory (or cached hub name) of the HF model.
    entity_vocab_size : `int`, optional (default = `NUM_SPECIAL_ENTITIES`)
        ``len(EntityVocabulary)``; the default holds the six special entities only.
    entity_embedding_dim : `int`, optional (default = `256`)
        ``D_e`` of the decomposed entity embedding (see ``entity_embeddings``).
    entity_aware_attention : `bool`, optional (default = `True`)
        Four query matrices per layer; False: the ordinary attention over ``[words; entities]``.
    train_parameters : `bool`, optional (default = `True`)
        False freezes the pretrained HF weights (including the position/type embeddings the
        entity embeddings share); the new parameters (entity embeddings, extra queries) still train.
    load_weights : `bool`, optional (default = `True`)
        False builds the model from its config with random weights (tests, or configs whose
        weights come from a model archive); the extra queries still copy the (random) queries.
    """

    def __init__(
        self,
        model_name: str,
        entity_vocab_size: int = NUM_SPECIAL_ENTITIES,
        entity_embedding_dim: int = 256,
        entity_aware_attention: bool = True,
        train_parameters: bool = True,
        load_weights: bool = True,
    ) -> None:
        super().__init__()
        if load_weights:
            transformer = transformers.AutoModel.from_pretrained(model_name)
        else:
            transformer = transformers.AutoModel.from_config(transformers.AutoConfig.from_pretrained(model_name))
        if getattr(transformer, "pooler", None) is not None:
            transformer.pooler = None
        self._build(transformer, model_name, entity_vocab_size, entity_embedding_dim, entity_aware_attention)
        if not train_parameters:
            for parameter in transformer.parameters():
                parameter.requires_grad_(False)

    @classmethod
    def wrapping(
        cls,
        transformer: transformers.PreTrainedModel,
        entity_vocab_size: int = NUM_SPECIAL_ENTITIES,
        entity_embedding_dim: int = 256,
        entity_aware_attention: bool = True,
    ) -> "EntityAwareTransformer":
        """
        An encoder around an existing HF model (shared, not copied; its pooler is kept but unused),
        e.g. the pre-training model's encoder, so that ``export-encoder`` still exports it whole.

        # Parameters

        transformer : `transformers.PreTrainedModel`
            The HF model to wrap.
        entity_vocab_size : `int`, optional (default = `NUM_SPECIAL_ENTITIES`)
            As the constructor's.
        entity_embedding_dim : `int`, optional (default = `256`)
            As the constructor's.
        entity_aware_attention : `bool`, optional (default = `True`)
            As the constructor's.

        # Returns

        `EntityAwareTransformer`
            The new encoder.
        """
        encoder = cls.__new__(cls)
        EntityAwareEncoder.__init__(encoder)
        encoder._build(
            transformer,
            getattr(transformer.config, "name_or_path", "") or "<in-memory model>",
            entity_vocab_size,
            entity_embedding_dim,
            entity_aware_attention,
        )
        return encoder

    def _build(
        self,
        transformer: transformers.PreTrainedModel,
        model_name: str,
        entity_vocab_size: int,
        entity_embedding_dim: int,
        entity_aware_attention: bool,
    ) -> None:
        layers = _check_layers(transformer, model_name)
        self.transformer = transformer
        self.model_name = model_name
        self.entity_aware_attention = entity_aware_attention
        config = transformer.config
        embeddings = cast(_BertStyleEmbeddings, transformer.embeddings)  # _check_layers checked it
        padding_idx = getattr(embeddings, "padding_idx", None)  # RoBERTa-style position numbering
        self.entity_embeddings = EntityEmbeddings(
            entity_vocab_size,
            embeddings.position_embeddings,
            getattr(embeddings, "token_type_embeddings", None),
            entity_embedding_dim=entity_embedding_dim,
            position_offset=0 if padding_idx is None else padding_idx + 1,
            layer_norm_eps=getattr(config, "layer_norm_eps", 1e-12),
            dropout=getattr(config, "hidden_dropout_prob", 0.1),
            initializer_range=getattr(config, "initializer_range", 0.02),
        )
        word_layer_norm = getattr(embeddings, "LayerNorm", None)
        if isinstance(word_layer_norm, torch.nn.LayerNorm):
            self.entity_embeddings.layer_norm.load_state_dict(word_layer_norm.state_dict())
        self.self_attentions = torch.nn.ModuleList(
            EntityAwareSelfAttention(layer.attention.self, entity_aware=entity_aware_attention) for layer in layers
        )

    @property
    def layers(self) -> torch.nn.ModuleList:
        encoder = cast(torch.nn.Module, self.transformer.encoder)  # _check_layers checked encoder.layer
        return cast(torch.nn.ModuleList, encoder.layer)

    @property
    def word_embeddings(self) -> torch.nn.Embedding:
        """The HF model's word embedding matrix (e.g. to tie an MLM decoder)."""
        # transformers annotates it as any Module; a BERT-style model's is an Embedding (see _check_layers)
        return cast(torch.nn.Embedding, self.transformer.get_input_embeddings())

    @property
    def entity_vocab_size(self) -> int:
        return self.entity_embeddings.entity_vocab_size

    def get_output_dim(self) -> int:
        return self.transformer.config.hidden_size

    def forward(
        self,
        token_ids: torch.Tensor,
        mask: Optional[torch.Tensor] = None,
        type_ids: Optional[torch.Tensor] = None,
        entity_ids: Optional[torch.Tensor] = None,
        entity_spans: Optional[torch.Tensor] = None,
        entity_mask: Optional[torch.Tensor] = None,
    ) -> Tuple[torch.Tensor, Optional[torch.Tensor]]:
        """
        Contextualises the words and entities together (module docstring).

        # Parameters

        token_ids : `torch.LongTensor`
            `[B, L]` wordpiece ids.
        mask : `torch.BoolTensor`, optional (default = `None`)
            `[B, L]` real wordpieces; None: all real.
        type_ids : `torch.LongTensor`, optional (default = `None`)
            `[B, L]` token type ids; None: zeros.
        entity_ids : `torch.LongTensor`, optional (default = `None`)
            `[B, E]` entity ids; None: no entities.
        entity_spans : `torch.LongTensor`, optional (default = `None`)
            `[B, E, 2]` inclusive wordpiece positions of each entity's mention.
        entity_mask : `torch.BoolTensor`, optional (default = `None`)
            `[B, E]` real entities; None: ``entity_ids != ENTITY_PAD``.

        # Returns

        `Tuple[torch.FloatTensor, Optional[torch.FloatTensor]]`
            ``(word_states [B, L, H], entity_states [B, E, H] or None)``.
        """
        batch_size, num_words = token_ids.shape
        word_mask = token_ids.new_ones((batch_size, num_words), dtype=torch.bool) if mask is None else mask.bool()
        embeddings = cast(torch.nn.Module, self.transformer.embeddings)  # _check_layers checked it
        hidden = embeddings(input_ids=token_ids, token_type_ids=type_ids)  # [B, L, H]
        num_entities = 0
        key_mask = word_mask
        if entity_ids is not None:
            num_entities = entity_ids.size(1)
            if entity_mask is None:
                entity_mask = entity_ids != ENTITY_PAD
            entity_mask = entity_mask.bool()
        if num_entities:
            if entity_spans is None:
                raise ValueError("entity_ids need entity_spans (LongTensor[B, E, 2], inclusive wordpiece positions)")
            assert entity_mask is not None  # set above, as there are entity_ids
            entities = self.entity_embeddings(entity_ids, entity_spans, entity_mask, num_words)  # [B, E, H]
            hidden = torch.cat([hidden, entities.to(hidden.dtype)], dim=1)
            key_mask = torch.cat([word_mask, entity_mask], dim=1)
        # None when nothing is padded: lets scaled_dot_product_attention skip the mask
        attention_mask: Optional[torch.Tensor] = None if bool(key_mask.all()) else key_mask

        for module, self_attention in zip(self.layers, self.self_attentions):
            layer = cast(_BertStyleLayer, module)  # _check_layers checked it
            context = self_attention(layer.attention.self, hidden, num_words, attention_mask)
            attended = layer.attention.output(context, hidden)
            hidden = layer.output(layer.intermediate(attended), attended)

        word_states = hidden[:, :num_words]
        if entity_ids is None:
            return word_states, None
        assert entity_mask is not None  # set above, as there are entity_ids
        entity_states = hidden[:, num_words:] * entity_mask.unsqueeze(-1).to(hidden.dtype)
        return word_states, entity_states
