"""
The ``transformer`` argument every model takes, and building a Hugging Face encoder and its tokenizer
from a directory (or hub name, when online).

Every model of this library takes its encoder under the constructor argument ``transformer`` and
exposes the Hugging Face model as the attribute ``transformer`` (the README's "Conventions"). What
the argument holds depends on what the model reads: a :class:`TransformerSpec` for models that build
the Hugging Face model themselves (pre-training, QA), an allennlp ``TextFieldEmbedder`` for models
over text fields (coreference, relation classification), an ``EntityAwareEncoder`` for models over
words and entities (span NER, entity typing, entity-pair relations). Each names the model directory
under ``model_name``.
"""

from typing import Any, Dict, Optional, Tuple, Union

import torch
import transformers
from allennlp.common import FromParams
from allennlp.common.checks import ConfigurationError

from spanbert_lib.common.deprecated_names import warn_once


class TransformerSpec(FromParams):
    """
    Which Hugging Face model a model builds for itself: the ``transformer`` argument of
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


def transformer_spec_argument(
    owner: str, transformer: Optional[Union[TransformerSpec, str]], deprecated: Dict[str, Tuple[str, Any]]
) -> TransformerSpec:
    """
    The ``transformer`` argument of a model that builds its Hugging Face model itself, or the spec
    its deprecated former arguments describe (warning once per argument).

    # Parameters

    owner : `str`
        The registered model name, for messages.
    transformer : `Union[TransformerSpec, str]`, optional
        The value given as ``transformer`` (None: not given).
    deprecated : `Dict[str, Tuple[str, Any]]`
        Former argument name -> ``(TransformerSpec field, value given)``; the field
        ``"model_name"`` must be among them.

    # Raises

    `ConfigurationError`
        Both the new and a former argument were given, or neither.
    """
    given = {old: field_and_value for old, field_and_value in deprecated.items() if field_and_value[1] is not None}
    if transformer is not None:
        if given:
            raise ConfigurationError(
                f"{owner}: give transformer only ({', '.join(given)} are its deprecated former arguments)"
            )
        return TransformerSpec.coerce(transformer)
    if not any(field == "model_name" for field, _ in given.values()):
        raise ConfigurationError(f'{owner}: transformer is required, e.g. {{"model_name": "DIRECTORY"}}')
    for old, (field, _) in given.items():
        warn_once(f"{owner} argument", old, f"transformer.{field}")
    return TransformerSpec(**{field: value for field, value in given.values()})


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

    Every model of this library exposes its encoder as the attribute ``transformer`` (see the
    README's "Conventions"); models that hold it inside an allennlp ``TextFieldEmbedder`` implement
    that attribute with this function, and ``allennlp export-encoder`` falls back to it for models
    of other packages.
    """
    for submodule in module.modules():  # pre-order: outer models come before their parts
        if isinstance(submodule, transformers.PreTrainedModel):
            return submodule
    return None
