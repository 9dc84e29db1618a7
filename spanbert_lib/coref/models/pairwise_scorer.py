"""
The fine antecedent score of Lee et al.: ``s_a(i, j) = FFNN([g_i; g_j; g_i * g_j; phi(i, j)])``
with ``phi`` the pair features of Joshi et al. 2019 (same speaker, genre, segment distance,
bucketed antecedent distance) and, optionally, agreement in gender and number (``agreement``),
each switchable.

The FFNN's first layer is applied part by part: ``W_1 g_i`` and ``W_2 g_j`` once per span,
only ``W_3 (g_i * g_j)`` per pair; the features take few values, so (without feature dropout)
their share is a lookup in a table of every combination's projection. Pairs are scored in
blocks of rows, so without gradients memory is ``O(R * C * H)``, not ``O(K * C * H)``. Without
gradients (inference) the blocks are small enough to stay in the CPU's caches and the FFNN's
hidden size is padded to a multiple of 16 (``aligned_matmul``): the ``K * C`` products through
``W_3`` are then nearly all of the time.

Shapes: `K` kept spans of one document, `C` antecedent slots per kept span, `R` rows (kept
spans) of one block, `D` span embedding size, `H` the FFNN's hidden size, `F` the size of
``phi`` (:meth:`PairFeatures.get_output_dim`).
"""

from dataclasses import dataclass
from typing import List, Optional, Tuple

import torch

from spanbert_lib.coref.models.agreement import NUM_AGREEMENT_VALUES, agreement_values
from spanbert_lib.coref.models.chunking import row_chunks
from spanbert_lib.coref.models.coarse_antecedents import NUM_DISTANCE_BUCKETS, bucket_distance
from spanbert_lib.coref.models.feedforward import FeedForwardScorer

TARGET, ANTECEDENT, PRODUCT, FEATURES = range(4)

# elements of one block's products in gradient-free scoring: small enough to stay in the CPU's caches
INFERENCE_BLOCK = 2**20


@dataclass
class SpanMetadata:
    """
    What the pair features need to know of the kept spans of one document.

    # Parameters

    speakers : `torch.LongTensor`
        `[K]` speaker id of each kept span's first word (only equality matters).
    segments : `torch.LongTensor`
        `[K]` segment of each kept span's first wordpiece.
    genre : `torch.LongTensor`
        `[]` the document's genre id.
    attributes : `torch.Tensor`, optional (default = `None`)
        `[K, A]` agreement distribution of each kept span (``agreement.span_attributes``); needed
        by the agreement feature.
    fixed_classes : `torch.LongTensor`, optional (default = `None`)
        `[K]` agreement class of each kept span that is a third-person pronoun, -1 for the others.
    """

    speakers: torch.Tensor
    segments: torch.Tensor
    genre: torch.Tensor
    attributes: Optional[torch.Tensor] = None
    fixed_classes: Optional[torch.Tensor] = None


class PairFeatures(torch.nn.Module):
    """
    ``phi(i, j)``: the concatenation of the enabled embeddings, each of ``feature_size``, in
    this order: same speaker (2 values), genre (``num_genres``), segment distance
    (``seg(i) - seg(j)`` clipped to ``0 .. num_segment_distances - 1``), antecedent distance
    (``i - j`` in kept spans, bucketed as :func:`bucket_distance`) and agreement in gender and
    number (:func:`~.agreement.agreement_values`). Dropout applies to the concatenation.

    # Parameters

    feature_size : `int`
        Size of each feature embedding.
    use_speaker : `bool`, optional (default = `True`)
        Include the same-speaker feature.
    use_genre : `bool`, optional (default = `True`)
        Include the genre feature.
    num_genres : `int`, optional (default = `8`)
        Number of genre ids.
    use_segment_distance : `bool`, optional (default = `True`)
        Include the segment distance feature.
    num_segment_distances : `int`, optional (default = `3`)
        Number of segment distance values (larger distances are clipped to the last).
    use_distance : `bool`, optional (default = `True`)
        Include the bucketed antecedent distance feature.
    use_agreement : `bool`, optional (default = `False`)
        Include the agreement feature (the metadata must then carry ``attributes`` and
        ``fixed_classes``).
    dropout : `float`, optional (default = `0.0`)
        Dropout on the concatenated features.
    """

    def __init__(
        self,
        feature_size: int,
        use_speaker: bool = True,
        use_genre: bool = True,
        num_genres: int = 8,
        use_segment_distance: bool = True,
        num_segment_distances: int = 3,
        use_distance: bool = True,
        use_agreement: bool = False,
        dropout: float = 0.0,
    ) -> None:
        super().__init__()
        if use_genre and num_genres < 1:
            raise ValueError(f"num_genres must be positive, got {num_genres}")
        if use_segment_distance and num_segment_distances < 1:
            raise ValueError(f"num_segment_distances must be positive, got {num_segment_distances}")
        self.speaker_embedding = torch.nn.Embedding(2, feature_size) if use_speaker else None
        self.genre_embedding = torch.nn.Embedding(num_genres, feature_size) if use_genre else None
        self.segment_distance_embedding = (
            torch.nn.Embedding(num_segment_distances, feature_size) if use_segment_distance else None
        )
        self.distance_embedding = torch.nn.Embedding(NUM_DISTANCE_BUCKETS, feature_size) if use_distance else None
        self.agreement_embedding = torch.nn.Embedding(NUM_AGREEMENT_VALUES, feature_size) if use_agreement else None
        self.dropout = torch.nn.Dropout(dropout)
        self.num_genres = num_genres

    def _enabled(self) -> List[torch.nn.Embedding]:
        return [
            embedding
            for embedding in (
                self.speaker_embedding,
                self.genre_embedding,
                self.segment_distance_embedding,
                self.distance_embedding,
                self.agreement_embedding,
            )
            if embedding is not None
        ]

    def get_output_dim(self) -> int:
        return sum(embedding.embedding_dim for embedding in self._enabled())

    def indices(
        self, rows: torch.Tensor, antecedents: torch.Tensor, metadata: SpanMetadata
    ) -> List[Tuple[torch.nn.Embedding, torch.Tensor]]:
        """
        Each enabled feature's embedding and its values, in concatenation order.

        # Parameters

        rows : `torch.LongTensor`
            `[R]` kept-span indices.
        antecedents : `torch.LongTensor`
            `[R, C]` their antecedents.
        metadata : `SpanMetadata`
            Speakers, segments and genre of the kept spans.

        # Returns

        `List[Tuple[torch.nn.Embedding, torch.LongTensor]]`
            The embedding and the value per pair, `[R, C]` (`[]` for the genre, the same for
            all pairs).
        """
        values = []
        if self.speaker_embedding is not None:
            same = metadata.speakers[rows].unsqueeze(1) == metadata.speakers[antecedents]
            values.append((self.speaker_embedding, same.long()))
        if self.genre_embedding is not None:
            values.append((self.genre_embedding, metadata.genre.reshape(())))
        if self.segment_distance_embedding is not None:
            distance = metadata.segments[rows].unsqueeze(1) - metadata.segments[antecedents]
            distance = distance.clamp(0, self.segment_distance_embedding.num_embeddings - 1)
            values.append((self.segment_distance_embedding, distance))
        if self.distance_embedding is not None:
            values.append((self.distance_embedding, bucket_distance(rows.unsqueeze(1) - antecedents)))
        if self.agreement_embedding is not None:
            if metadata.attributes is None or metadata.fixed_classes is None:
                raise ValueError("the agreement pair feature needs the kept spans' attributes and fixed_classes")
            values.append(
                (
                    self.agreement_embedding,
                    agreement_values(metadata.attributes, metadata.fixed_classes, rows, antecedents),
                )
            )
        return values

    def forward(
        self,
        rows: torch.Tensor,
        antecedents: torch.Tensor,
        metadata: SpanMetadata,
    ) -> Optional[torch.Tensor]:
        """
        ``phi`` of each pair, dropout applied.

        # Parameters

        rows : `torch.LongTensor`
            `[R]` kept-span indices.
        antecedents : `torch.LongTensor`
            `[R, C]` their antecedents.
        metadata : `SpanMetadata`
            Speakers, segments and genre of the kept spans.

        # Returns

        `Optional[torch.Tensor]`
            `[R, C, F]`, or None when no feature is enabled.
        """
        parts = [
            embedding(index).expand(*antecedents.shape, -1)
            for embedding, index in self.indices(rows, antecedents, metadata)
        ]
        if not parts:
            return None
        return self.dropout(torch.cat(parts, dim=-1))

    def projected_table(
        self, rows: torch.Tensor, antecedents: torch.Tensor, metadata: SpanMetadata, project
    ) -> Optional[Tuple[torch.Tensor, torch.Tensor]]:
        """
        ``project`` applied to ``phi``, WITHOUT dropout, as a table of every combination of the
        feature values (at most 2 * num_genres * segment distances * 10 * 15 rows) and each pair's row.

        # Parameters

        rows : `torch.LongTensor`
            `[R]` kept-span indices.
        antecedents : `torch.LongTensor`
            `[R, C]` their antecedents.
        metadata : `SpanMetadata`
            Speakers, segments and genre of the kept spans.
        project : `Callable[[torch.Tensor, int], torch.Tensor]`
            ``project(values, offset)``: `[V, E]` embedding rows whose columns start at
            ``offset`` inside ``phi`` -> `[V, H]`.

        # Returns

        `Optional[Tuple[torch.Tensor, torch.LongTensor]]`
            ``(table [V, H], index [R, C])`` with ``project(phi)`` of pair ``(r, c)`` equal to
            ``table[index[r, c]]``, or None when no feature is enabled.
        """
        table: Optional[torch.Tensor] = None
        index: Optional[torch.Tensor] = None  # None exactly when table is
        offset = 0
        for embedding, values in self.indices(rows, antecedents, metadata):
            projected = project(embedding.weight, offset)  # [V, H]
            offset += embedding.embedding_dim
            if table is None or index is None:
                table, index = projected, values
            else:
                table = (table.unsqueeze(1) + projected.unsqueeze(0)).reshape(-1, projected.size(-1))
                index = index * embedding.num_embeddings + values
        if table is None or index is None:
            return None
        return table, index.expand(*antecedents.shape)

    def projected_lookup(
        self, rows: torch.Tensor, antecedents: torch.Tensor, metadata: SpanMetadata, project
    ) -> Optional[torch.Tensor]:
        """
        ``project`` applied to ``phi`` of each pair, WITHOUT dropout (:meth:`projected_table`
        looked up).

        # Returns

        `Optional[torch.Tensor]`
            `[R, C, H]`, or None when no feature is enabled.
        """
        lookup = self.projected_table(rows, antecedents, metadata, project)
        if lookup is None:
            return None
        table, index = lookup
        return table[index]


class PairwiseScorer(torch.nn.Module):
    """
    ``s_a(i, j)`` for each kept span and its top antecedents.

    # Parameters

    span_dim : `int`
        Size `D` of a span embedding.
    features : `PairFeatures`
        The pair features ``phi``.
    hidden_dim : `int`
        Hidden units `H` of the FFNN.
    depth : `int`, optional (default = `1`)
        Hidden layers of the FFNN.
    dropout : `float`, optional (default = `0.0`)
        Dropout after each hidden layer.

    Attribute :attr:`product_dtype` (None: the span embeddings' dtype): the dtype of the
    gradient-free pass's per-pair products ``W_3 (g_i * g_j)`` (the model's ``pair_product_dtype``).
    """

    def __init__(
        self, span_dim: int, features: PairFeatures, hidden_dim: int, depth: int = 1, dropout: float = 0.0
    ) -> None:
        super().__init__()
        self.features = features
        self.scorer = FeedForwardScorer(
            [span_dim, span_dim, span_dim, features.get_output_dim()], hidden_dim, depth, dropout
        )
        self.product_dtype: Optional[torch.dtype] = None

    def _feature_term(self, rows, antecedents, metadata) -> Optional[torch.Tensor]:
        """The features' share of the first layer, `[R, C, H]` (None without features)."""
        if self.training and self.features.dropout.p > 0:
            features = self.features(rows, antecedents, metadata)  # per-pair dropout
            return None if features is None else self.scorer.part_projection(features, FEATURES)
        return self.features.projected_lookup(
            rows, antecedents, metadata, lambda values, offset: self.scorer.part_projection(values, FEATURES, offset)
        )

    def forward(
        self,
        span_embeddings: torch.Tensor,
        antecedents: torch.Tensor,
        metadata: SpanMetadata,
        budget: int = 2**23,
    ) -> torch.Tensor:
        """
        Fine scores of each kept span's antecedents. Rows are processed in blocks of about
        ``budget / (C * (D + 2 * H))`` rows.

        # Parameters

        span_embeddings : `torch.Tensor`
            `[K, D]` kept span embeddings.
        antecedents : `torch.LongTensor`
            `[K, C]` each kept span's antecedents, as indices into the kept spans.
        metadata : `SpanMetadata`
            Speakers, segments and genre of the kept spans.
        budget : `int`, optional (default = `2 ** 23`)
            About how many elements one block's intermediate tensors may hold.

        # Returns

        `torch.Tensor`
            `[K, C]` scores, also at masked slots: mask them afterwards.
        """
        num_spans, slots = antecedents.shape
        scorer = self.scorer
        if num_spans == 0 or slots == 0:
            return span_embeddings.new_zeros((num_spans, slots))
        if not torch.is_grad_enabled() and not self.training:
            # The fast path sets its own precision (``product_dtype``) and sums in place, where autocast's
            # casts (float16 under ``trainer.use_amp``) would meet float32 weights: it runs in the weights' dtype.
            with torch.autocast(span_embeddings.device.type, enabled=False):
                weights_dtype = scorer.first_layer.weight.dtype
                return self._inference(span_embeddings.to(weights_dtype), antecedents, metadata, budget)
        in_place = not torch.is_grad_enabled()
        targets = scorer.part_projection(span_embeddings, TARGET)  # [K, H]
        antecedent_terms = scorer.part_projection(span_embeddings, ANTECEDENT)  # [K, H]
        per_row = slots * (span_embeddings.size(1) + 2 * scorer.hidden_dim)
        blocks = []
        for chunk in row_chunks(num_spans, per_row, budget):
            rows = torch.arange(chunk.start, chunk.stop, device=antecedents.device)
            block_antecedents = antecedents[chunk]  # [R, C]
            products = span_embeddings[block_antecedents]  # [R, C, D]
            if in_place:
                products.mul_(span_embeddings[chunk].unsqueeze(1))
            else:
                products = products * span_embeddings[chunk].unsqueeze(1)
            pre_activation = scorer.part_projection(products, PRODUCT)  # [R, C, H]
            del products
            terms = [
                targets[chunk].unsqueeze(1),
                antecedent_terms[block_antecedents],
                self._feature_term(rows, block_antecedents, metadata),
            ]
            for term in terms:
                if term is None:
                    continue
                if in_place:
                    pre_activation += term
                else:
                    pre_activation = pre_activation + term
            blocks.append(scorer.from_first_layer(pre_activation, in_place=in_place))
        return torch.cat(blocks, dim=0)

    def _inference(
        self, span_embeddings: torch.Tensor, antecedents: torch.Tensor, metadata: SpanMetadata, budget: int
    ) -> torch.Tensor:
        """
        :meth:`forward` without gradients or dropout: the same scores, faster. The FFNN's hidden
        size is padded to a multiple of 16 (:class:`~.feedforward.AlignedScorer`); the three
        per-span and per-feature terms are summed into one `[R * C, H']` buffer (gathered with
        ``index_select``, bias folded into the target term) that the product term's matrix
        product then adds to in place (``addmm_``); blocks hold at most :data:`INFERENCE_BLOCK`
        elements so that they stay in the CPU's caches. With :attr:`product_dtype` (e.g. bfloat16)
        the products and their matrix product run in that dtype, the sum stays in float32.
        """
        num_spans, slots = antecedents.shape
        dim = span_embeddings.size(1)
        scorer = self.scorer.aligned()
        hidden = scorer.hidden_dim
        targets = scorer.part_projection(span_embeddings, TARGET).add_(scorer.first_bias)  # [K, H'], bias in
        antecedent_terms = scorer.part_projection(span_embeddings, ANTECEDENT)  # [K, H']
        start = self.scorer._bounds[PRODUCT]
        product_weight = scorer.first_weight[:, start : start + dim].t()  # [D, H']
        low_precision = self.product_dtype is not None and self.product_dtype != span_embeddings.dtype
        factors = span_embeddings.to(self.product_dtype) if low_precision else span_embeddings
        if low_precision:
            product_weight = product_weight.to(self.product_dtype).contiguous()
        features = self.features.projected_table(
            torch.arange(num_spans, device=antecedents.device),
            antecedents,
            metadata,
            lambda values, offset: scorer.part_projection(values, FEATURES, offset),
        )
        scores = span_embeddings.new_empty((num_spans, slots))
        for chunk in row_chunks(num_spans, slots * (dim + hidden), min(budget, INFERENCE_BLOCK)):
            rows = chunk.stop - chunk.start
            flat = antecedents[chunk].reshape(-1)  # [R * C]
            products = factors.index_select(0, flat).view(rows, slots, dim)
            products.mul_(factors[chunk].unsqueeze(1))
            pre_activation = antecedent_terms.index_select(0, flat).view(rows, slots, hidden)
            pre_activation += targets[chunk].unsqueeze(1)
            if features is not None:
                table, index = features
                pre_activation += table.index_select(0, index[chunk].reshape(-1)).view(rows, slots, hidden)
            pre_activation = pre_activation.view(-1, hidden)
            if low_precision:  # the product in the low dtype (accumulated in float32 by the kernel), added in float32
                pre_activation += products.view(-1, dim).mm(product_weight)
            else:
                pre_activation.addmm_(products.view(-1, dim), product_weight)
            del products
            scores[chunk] = scorer.from_first_layer(pre_activation, with_bias=True).view(rows, slots)
        return scores
