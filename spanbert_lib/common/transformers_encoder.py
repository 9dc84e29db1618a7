"""
The ``encoder`` argument every model takes, the one accessor for the Hugging Face model inside it
(:func:`huggingface_encoder`), and building a Hugging Face encoder and its tokenizer from a directory
(or hub name, when online).

Every model of this library takes its encoder under the constructor argument ``encoder`` and keeps
it in the attribute ``encoder``, so the names of all encoder parameters start with ``encoder.``
(one optimizer parameter-group regex fits every model: ``training_configs/common/optimizer.libsonnet``).
What the argument holds depends on what the model reads:

* a :class:`TransformerSpec` for models that build the Hugging Face model themselves
  (``spanbert_pretraining``, ``spanbert_qa``): ``model.encoder`` is the ``transformers.PreTrainedModel``;
* an allennlp ``TextFieldEmbedder`` for models over text fields (``spanbert_coref``,
  ``spanbert_relation_classifier``);
* an ``EntityAwareEncoder`` for models over words and entities (``spanbert_span_ner``,
  ``spanbert_entity_typing``, ``spanbert_entity_pair_relation_classifier``).

Each names the model directory under ``model_name``. :func:`huggingface_encoder` returns the Hugging
Face model inside any of them (what ``allennlp export-encoder`` writes).
"""

from typing import Any, Dict, Optional, Tuple, Union

import torch
import transformers
from allennlp.common import FromParams
from allennlp.common.checks import ConfigurationError


class TransformerSpec(FromParams):
    """
    Which Hugging Face model a model builds for itself: the ``encoder`` argument of
    ``spanbert_pretraining`` and ``spanbert_qa``, e.g. ``{"model_name": "pretrained/all-MiniLM-L6-v2"}``.

    # Parameters

    model_name : `str`
        Directory (or hub name, when online) with the tokenizer files and, unless `config` is
        given, the weights.
    config : `Dict[str, Any]`, optional (default = `None`)
        Build a freshly initialised model with this configuration instead of loading weights
        (pre-training from scratch): ``model_type`` defaults to "bert", ``vocab_size`` and
        ``pad_token_id`` to the tokenizer's. Only ``spanbert_pretraining`` accepts it.
    from_pretrained_kwargs : `Dict[str, Any]`, optional (default = `None`)
        Passed to ``from_pretrained`` (or ``from_config``), e.g. ``{"attn_implementation": "eager"}``.
    """

    def __init__(
        self,
        model_name: str,
        config: Optional[Dict[str, Any]] = None,
        from_pretrained_kwargs: Optional[Dict[str, Any]] = None,
    ) -> None:
        self.model_name = model_name
        self.config = config
        self.from_pretrained_kwargs = dict(from_pretrained_kwargs or {})

    @classmethod
    def coerce(cls, value: Union["TransformerSpec", str]) -> "TransformerSpec":
        """``value`` as a spec; a plain string (from Python code) is its ``model_name``."""
        return cls(value) if isinstance(value, str) else value


def load_encoder_and_tokenizer(
    model_name: str, config: Optional[Dict[str, Any]] = None, **from_pretrained_kwargs: Any
) -> Tuple[transformers.PreTrainedModel, transformers.PreTrainedTokenizerBase]:
    """
    Returns ``(encoder, tokenizer)`` for the tokenizer files in ``model_name``.

    config=None: ``AutoModel.from_pretrained(model_name)`` - pretrained weights.
    config=dict: a freshly initialised encoder; the dict gives the configuration
    (``model_type`` defaults to "bert"; ``vocab_size`` and ``pad_token_id`` default to the
    tokenizer's) - for pre-training from scratch, when ``model_name`` may hold only tokenizer files.
    ``from_pretrained_kwargs`` go to ``from_pretrained`` / ``from_config``.
    """
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_name)
    if config is None:
        return transformers.AutoModel.from_pretrained(model_name, **from_pretrained_kwargs), tokenizer
    settings = dict(config)
    settings.setdefault("vocab_size", len(tokenizer))
    settings.setdefault("pad_token_id", tokenizer.pad_token_id)
    if settings["vocab_size"] < len(tokenizer):
        raise ValueError(
            f"config vocab_size {settings['vocab_size']} is smaller than the tokenizer of "
            f"{model_name} ({len(tokenizer)} entries)"
        )
    return transformers.AutoModel.from_config(config_from_settings(settings), **from_pretrained_kwargs), tokenizer


def config_from_settings(settings: Dict[str, Any]) -> transformers.PretrainedConfig:
    """The Hugging Face configuration a ``TransformerSpec.config`` dict describes (``model_type``
    defaults to "bert"; everything else goes to the configuration class as it is)."""
    settings = dict(settings)
    return transformers.AutoConfig.for_model(settings.pop("model_type", "bert"), **settings)


def find_transformer(module: torch.nn.Module) -> Optional[transformers.PreTrainedModel]:
    """
    The outermost Hugging Face model inside ``module`` (``module`` itself if it is one), or None.

    # Parameters

    module : `torch.nn.Module`
        Any module.

    # Returns

    `Optional[transformers.PreTrainedModel]`
        The first ``PreTrainedModel`` of ``module.modules()`` (pre-order, so an outer model comes
        before its parts), or None.
    """
    for submodule in module.modules():
        if isinstance(submodule, transformers.PreTrainedModel):
            return submodule
    return None


def huggingface_encoder(model: torch.nn.Module) -> transformers.PreTrainedModel:
    """
    The Hugging Face model inside a model's ``encoder`` attribute: what ``allennlp export-encoder``
    writes, and the one way to reach it whatever the kind of encoder (module docstring).

    # Parameters

    model : `torch.nn.Module`
        A model of this library (any module with an ``encoder`` attribute).

    # Returns

    `transformers.PreTrainedModel`
        The outermost ``PreTrainedModel`` inside ``model.encoder`` (``model.encoder`` itself for
        ``spanbert_pretraining`` and ``spanbert_qa``).

    # Raises

    `ConfigurationError`
        ``model`` has no ``encoder`` module, or there is no Hugging Face model inside it.
    """
    encoder = getattr(model, "encoder", None)
    if not isinstance(encoder, torch.nn.Module):
        raise ConfigurationError(f"{type(model).__name__} has no encoder module (the attribute `encoder`)")
    found = find_transformer(encoder)
    if found is None:
        raise ConfigurationError(
            f"{type(model).__name__} holds no Hugging Face model inside its encoder ({type(encoder).__name__})"
        )
    return found
