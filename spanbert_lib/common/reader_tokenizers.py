"""
The tokenizer set-up every transformer reader shares: a fast tokenizer (its character offsets and
word ids align words with wordpieces) and the wordpiece budget ``max_seq_length`` leaves beside
the special tokens.
"""

from dataclasses import dataclass
from typing import Any, Dict, Optional, cast

import transformers
from allennlp.common.checks import ConfigurationError
from allennlp.data.tokenizers import PretrainedTransformerTokenizer


@dataclass(frozen=True)
class ReaderTokenizer:
    """
    The tokenizers of a reader and the room they leave.

    # Parameters

    tokenizer : `PretrainedTransformerTokenizer`
        allennlp's tokenizer (special tokens, ``single_sequence_start_tokens``, ...).
    hf_tokenizer : `transformers.PreTrainedTokenizerFast`
        The Hugging Face tokenizer inside it.
    budget : `int`
        Wordpieces of text that fit in ``max_seq_length`` beside the special tokens of one sequence.
    """

    tokenizer: PretrainedTransformerTokenizer
    hf_tokenizer: transformers.PreTrainedTokenizerFast
    budget: int


def reader_tokenizer(
    reader_name: str,
    model_name: str,
    max_seq_length: int,
    tokenizer_kwargs: Optional[Dict[str, Any]] = None,
    needs_unknown_token: bool = False,
) -> ReaderTokenizer:
    """
    Loads the fast tokenizer of ``model_name`` for a reader and checks what the reader relies on.

    # Parameters

    reader_name : `str`
        Named in errors (e.g. ``"SpanNerConllReader"``).
    model_name : `str`
        Model directory or hub name with the tokenizer files.
    max_seq_length : `int`
        Wordpieces per instance, special tokens included.
    tokenizer_kwargs : `Dict[str, Any]`, optional (default = `None`)
        Passed to ``AutoTokenizer.from_pretrained``.
    needs_unknown_token : `bool`, optional (default = `False`)
        Refuse a tokenizer without an unknown token (readers that map unknown words to it).

    # Returns

    `ReaderTokenizer`
        The tokenizers and the wordpiece budget beside the special tokens.

    # Raises

    `ConfigurationError`
        The tokenizer is not fast, has no unknown token when one is needed, or ``max_seq_length``
        leaves no room for text.
    """
    tokenizer = PretrainedTransformerTokenizer(model_name, tokenizer_kwargs=tokenizer_kwargs)
    hf_tokenizer = tokenizer.tokenizer
    if not hf_tokenizer.is_fast:
        raise ConfigurationError(
            f"{reader_name}: {model_name} has no fast tokenizer (tokenizer.json); word-to-wordpiece alignment needs one"
        )
    if needs_unknown_token and hf_tokenizer.unk_token is None:
        raise ConfigurationError(f"{reader_name}: the tokenizer of {model_name} has no unknown token")
    num_special = tokenizer.num_special_tokens_for_sequence()
    if max_seq_length <= num_special:
        raise ConfigurationError(
            f"{reader_name}: max_seq_length {max_seq_length} leaves no room next to the {num_special} special tokens"
        )
    fast_tokenizer = cast(transformers.PreTrainedTokenizerFast, hf_tokenizer)  # is_fast, checked above
    return ReaderTokenizer(tokenizer, fast_tokenizer, max_seq_length - num_special)
