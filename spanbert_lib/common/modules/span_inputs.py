"""
Two helpers for span models over one wordpiece ``TextField``: its tensors as the arguments an
encoder takes, and a span extractor built for the encoder's output size (the library's
``span_boundary`` extractor unless a config gives another).
"""

from typing import Optional, Tuple

import torch
from allennlp.common import Lazy
from allennlp.data import TextFieldTensors
from allennlp.modules.span_extractors import SpanExtractor
from allennlp.nn import util

from spanbert_lib.common.modules.span_boundary import SpanBoundarySpanExtractor


def wordpiece_inputs(tokens: TextFieldTensors) -> Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]:
    """
    The tensors of a one-indexer wordpiece ``TextField``.

    # Parameters

    tokens : `TextFieldTensors`
        From a ``pretrained_transformer`` (or compatible) indexer.

    # Returns

    `Tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor]]`
        ``token_ids`` `[B, L]`, ``mask`` `[B, L]` (bool) and ``type_ids`` `[B, L]` (None when the
        indexer gives none).
    """
    token_ids = util.get_token_ids_from_text_field_tensors(tokens)
    mask = util.get_text_field_mask(tokens)
    type_ids = next(iter(tokens.values())).get("type_ids")
    return token_ids, mask, type_ids


def default_span_extractor(input_dim: int, span_extractor: Optional[Lazy[SpanExtractor]] = None) -> SpanExtractor:
    """
    ``span_extractor`` built with ``input_dim``, or the library's ``span_boundary`` extractor with
    ``boundaries="inside"`` (``[x(s); x(e)]``) when none is given.

    # Parameters

    input_dim : `int`
        The size `H` of the states the spans are read from.
    span_extractor : `Lazy[SpanExtractor]`, optional (default = `None`)
        A config's extractor, still missing its ``input_dim``.
    """
    if span_extractor is None:
        return SpanBoundarySpanExtractor(input_dim, boundaries="inside")
    return span_extractor.construct(input_dim=input_dim)
