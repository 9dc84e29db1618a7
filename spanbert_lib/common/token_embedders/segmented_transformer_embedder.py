"""
The ``segmented_transformer`` token embedder: encodes the segments made by the
``segmented_wordpiece`` indexer independently and returns one vector per document wordpiece.

Shapes: `B` documents, `S` segments, `L` segment length, `P` wordpieces of a document (the
indexer's flattened layout), `H` hidden size.
"""

from typing import Any, Dict, Optional, cast

import torch
from allennlp.modules.token_embedders import PretrainedTransformerEmbedder, TokenEmbedder
from allennlp.nn import util

from spanbert_lib.common.autocast import autocast_dtype_of

DEFAULT_SEGMENTS_PER_PASS = 8


@TokenEmbedder.register("segmented_transformer")
class SegmentedTransformerEmbedder(TokenEmbedder):
    """
    Runs a transformer on every real segment of a batch (padding segments are skipped), each
    segment on its own (no attention across segments), and gathers the states of the
    document's wordpieces into the flattened layout of the ``segmented_wordpiece`` indexer
    (``[CLS]``/``[SEP]``/padding removed), so ``word_starts``/``word_ends`` index the output.

    # Parameters

    model_name : `str`
        The transformer (directory or cached Hugging Face name); same as the indexer's.
    max_segments_per_pass : `int`, optional (default = `8`)
        Encode at most this many segments per transformer call, so that activation memory does not
        grow with the document (on a CPU the speed is the same); None encodes all segments of the batch
        at once, which is what to use on a GPU, where larger calls are much faster. Measured:
        docs/benchmarks.md (``benchmarks/encoder_bf16.py``).
    autocast_dtype : `str`, optional (default = `None`)
        E.g. ``"bfloat16"``: when not training (prediction, validation), run the transformer under
        ``torch.autocast`` with that dtype and return float32 states; training is unaffected. It pays on
        CPUs with bfloat16 matrix units (AMX, AVX512-BF16) and on GPUs (there with
        ``max_segments_per_pass=None``); on other CPUs it can be slower. The states differ slightly from
        float32's. None: float32 throughout. Measured: docs/benchmarks.md.
    train_parameters, last_layer_only, override_weights_file, override_weights_strip_prefix,
    load_weights, gradient_checkpointing, tokenizer_kwargs, transformer_kwargs
        As for allennlp's `pretrained_transformer` embedder (used inside, without folding).
    """

    def __init__(
        self,
        model_name: str,
        *,
        max_segments_per_pass: Optional[int] = DEFAULT_SEGMENTS_PER_PASS,
        autocast_dtype: Optional[str] = None,
        train_parameters: bool = True,
        last_layer_only: bool = True,
        override_weights_file: Optional[str] = None,
        override_weights_strip_prefix: Optional[str] = None,
        load_weights: bool = True,
        gradient_checkpointing: Optional[bool] = None,
        tokenizer_kwargs: Optional[Dict[str, Any]] = None,
        transformer_kwargs: Optional[Dict[str, Any]] = None,
    ) -> None:
        super().__init__()
        if max_segments_per_pass is not None and max_segments_per_pass < 1:
            raise ValueError(f"max_segments_per_pass must be positive, got {max_segments_per_pass}")
        autocast_dtype_of(autocast_dtype)  # a name torch does not know fails here, not at the first prediction
        self.max_segments_per_pass = max_segments_per_pass
        self.autocast_dtype = autocast_dtype
        self.segment_encoder = PretrainedTransformerEmbedder(
            model_name,
            max_length=None,  # type: ignore[arg-type]  # why: allennlp annotates it int, defaults it to None
            train_parameters=train_parameters,
            last_layer_only=last_layer_only,
            override_weights_file=override_weights_file,
            override_weights_strip_prefix=override_weights_strip_prefix,
            load_weights=load_weights,
            gradient_checkpointing=gradient_checkpointing,
            tokenizer_kwargs=tokenizer_kwargs,
            transformer_kwargs=transformer_kwargs,
        )

    def get_output_dim(self) -> int:
        return self.segment_encoder.get_output_dim()

    def encode_segments(self, input_ids: torch.Tensor, segment_mask: torch.Tensor) -> torch.Tensor:
        """
        Encodes each segment on its own; rows whose mask is all False (padding segments) are not
        encoded and get zeros.

        # Parameters

        input_ids : `torch.LongTensor`
            `[B, S, L]` wordpiece ids.
        segment_mask : `torch.BoolTensor`
            `[B, S, L]` real positions.

        # Returns

        `torch.Tensor`
            `[B, S, L, H]` states.
        """
        batch_size, num_segments, length = input_ids.shape
        flat_ids = input_ids.reshape(-1, length)
        flat_mask = segment_mask.reshape(-1, length)
        real = flat_mask.any(dim=-1).nonzero(as_tuple=True)[0]
        states = flat_ids.new_zeros((flat_ids.size(0), length, self.get_output_dim()), dtype=torch.get_default_dtype())
        if real.numel():
            step = self.max_segments_per_pass or real.numel()
            dtype = None if self.training else autocast_dtype_of(self.autocast_dtype)
            with torch.autocast(flat_ids.device.type, dtype=dtype, enabled=dtype is not None):
                chunks = [self.segment_encoder(flat_ids[rows], flat_mask[rows]) for rows in real.split(step)]
            encoded = torch.cat(chunks, dim=0).to(states.dtype)
            states = states.index_copy(0, real, encoded)
        return states.view(batch_size, num_segments, length, states.size(-1))

    def forward(
        self,
        input_ids: torch.Tensor,
        segment_mask: torch.Tensor,
        piece_positions: torch.Tensor,
        mask: torch.Tensor,
        **unused: torch.Tensor,
    ) -> torch.Tensor:
        """
        # Parameters

        input_ids : `torch.LongTensor`
            `[B, S, L]` wordpiece ids per segment.
        segment_mask : `torch.BoolTensor`
            `[B, S, L]` real positions per segment.
        piece_positions : `torch.LongTensor`
            `[B, P]` flat index of each piece in the `[S * L]` layout.
        mask : `torch.BoolTensor`
            `[B, P]` real pieces.
        **unused : `torch.Tensor`
            The indexer's word/sentence/segment maps, accepted and ignored.

        # Returns

        `torch.Tensor`
            `[B, P, H]` wordpiece states, zero at padding pieces.
        """
        batch_size, num_segments, length = input_ids.shape
        states = self.encode_segments(input_ids, segment_mask)
        flat_states = states.view(batch_size, num_segments * length, states.size(-1))
        positions = cast(torch.LongTensor, piece_positions)  # allennlp's annotation; any int64 tensor is taken
        pieces = util.batched_index_select(flat_states, positions)
        return pieces * mask.unsqueeze(-1).to(pieces.dtype)
