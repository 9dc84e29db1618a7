"""Building a Hugging Face encoder and its tokenizer from a directory (or hub name, when online)."""
from typing import Any, Dict, Optional, Tuple

import torch
import transformers


def load_encoder_and_tokenizer(
    model_name: str, config: Optional[Dict[str, Any]] = None
) -> Tuple[transformers.PreTrainedModel, transformers.PreTrainedTokenizerBase]:
    """
    Returns ``(encoder, tokenizer)`` for the tokenizer files in ``model_name``.

    config=None: ``AutoModel.from_pretrained(model_name)`` - pretrained weights.
    config=dict: a freshly initialised encoder; the dict gives the configuration
    (``model_type`` defaults to "bert"; ``vocab_size`` and ``pad_token_id`` default to the
    tokenizer's) - for pre-training from scratch, when ``model_name`` may hold only tokenizer files.
    """
    tokenizer = transformers.AutoTokenizer.from_pretrained(model_name)
    if config is None:
        return transformers.AutoModel.from_pretrained(model_name), tokenizer
    settings = dict(config)
    model_type = settings.pop("model_type", "bert")
    settings.setdefault("vocab_size", len(tokenizer))
    settings.setdefault("pad_token_id", tokenizer.pad_token_id)
    if settings["vocab_size"] < len(tokenizer):
        raise ValueError(f"config vocab_size {settings['vocab_size']} is smaller than the tokenizer of "
                         f"{model_name} ({len(tokenizer)} entries)")
    encoder_config = transformers.AutoConfig.for_model(model_type, **settings)
    return transformers.AutoModel.from_config(encoder_config), tokenizer


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
