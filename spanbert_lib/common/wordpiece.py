"""
BERT-style WordPiece tokenizers built with HF ``tokenizers``.

Both functions save a tokenizer directory (``tokenizer.json``, ``vocab.txt``,
``tokenizer_config.json``, ``special_tokens_map.json``) that
``transformers.AutoTokenizer.from_pretrained(directory)`` loads as a fast BERT tokenizer.
SpanBERT uses a cased vocabulary, so ``lowercase`` defaults to False.
"""

import os
from pathlib import Path
from typing import Iterable, List, Optional, Sequence, Union

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def _bert_pipeline(model: models.Model, lowercase: bool) -> Tokenizer:
    tokenizer = Tokenizer(model)
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=lowercase, lowercase=lowercase
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    return tokenizer


def _save(
    tokenizer: Tokenizer, output_dir, lowercase: bool, extra_special_tokens: Sequence[str], model_max_length: int
):
    from transformers import BertTokenizerFast

    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    fast = BertTokenizerFast(
        tokenizer_object=tokenizer,
        do_lower_case=lowercase,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        additional_special_tokens=list(extra_special_tokens),
        model_max_length=model_max_length,
    )
    Path(output_dir).mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(str(output_dir))
    return fast


def train_wordpiece_tokenizer(
    texts: Iterable[str],
    output_dir: Union[str, os.PathLike],
    vocab_size: int = 28996,
    lowercase: bool = False,
    min_frequency: int = 2,
    extra_special_tokens: Optional[List[str]] = None,
    model_max_length: int = 512,
):
    """
    Trains a WordPiece vocabulary and saves a fast BERT tokenizer.

    The ``tokenizers`` trainer breaks frequency ties in no fixed order, so two runs may differ in
    the last few entries; use :func:`wordpiece_tokenizer_from_vocab` where exact reproducibility
    matters.

    # Parameters

    texts : `Iterable[str]`
        The training text, e.g. lines or documents.
    output_dir : `Union[str, os.PathLike]`
        The directory the tokenizer is saved to (created if needed).
    vocab_size : `int`, optional (default = `28996`)
        An upper bound on the vocabulary size, special tokens included: a small corpus yields
        fewer entries.
    lowercase : `bool`, optional (default = `False`)
        Lowercase and strip accents (an uncased vocabulary).
    min_frequency : `int`, optional (default = `2`)
        Minimum pair frequency for a merge.
    extra_special_tokens : `List[str]`, optional (default = `None`)
        Special tokens added after :data:`SPECIAL_TOKENS`.
    model_max_length : `int`, optional (default = `512`)
        The tokenizer's ``model_max_length``.

    # Returns

    `BertTokenizerFast`
        The saved tokenizer.
    """
    special_tokens = SPECIAL_TOKENS + list(extra_special_tokens or [])
    tokenizer = _bert_pipeline(models.WordPiece(unk_token="[UNK]"), lowercase)
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=special_tokens,
        continuing_subword_prefix="##",
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    return _save(tokenizer, output_dir, lowercase, extra_special_tokens or [], model_max_length)


def wordpiece_tokenizer_from_vocab(
    vocab: Sequence[str],
    output_dir: Union[str, os.PathLike],
    lowercase: bool = False,
    extra_special_tokens: Optional[List[str]] = None,
    model_max_length: int = 512,
):
    """
    Saves a fast BERT tokenizer whose vocabulary is exactly ``SPECIAL_TOKENS``, then
    ``extra_special_tokens``, then ``vocab`` (duplicates dropped, order kept).

    # Parameters

    vocab : `Sequence[str]`
        The wordpieces (``##`` marks a continuation).
    output_dir : `Union[str, os.PathLike]`
        The directory the tokenizer is saved to (created if needed).
    lowercase : `bool`, optional (default = `False`)
        Lowercase and strip accents (an uncased vocabulary).
    extra_special_tokens : `List[str]`, optional (default = `None`)
        Special tokens placed after :data:`SPECIAL_TOKENS`.
    model_max_length : `int`, optional (default = `512`)
        The tokenizer's ``model_max_length``.

    # Returns

    `BertTokenizerFast`
        The saved tokenizer.
    """
    entries = list(dict.fromkeys([*SPECIAL_TOKENS, *(extra_special_tokens or []), *vocab]))
    model = models.WordPiece({token: index for index, token in enumerate(entries)}, unk_token="[UNK]")
    tokenizer = _bert_pipeline(model, lowercase)
    return _save(tokenizer, output_dir, lowercase, extra_special_tokens or [], model_max_length)
