"""
The ``spanbert_coref`` model: the higher-order coarse-to-fine coreference model of Lee et al.
(2018) on a BERT-family encoder applied to independent segments (Joshi et al. 2019, "BERT for
Coreference Resolution", independent variant), as used in the SpanBERT paper (section 4.1).

Per document:

1. the encoder embeds each segment on its own (the ``segmented_transformer`` token embedder
   behind a ``segmented_wordpiece`` indexer); wordpiece states in document order ``(P, H)``;
2. all candidate spans (word offsets from the ``spanbert_coref`` reader) get a mention score
   ``s_m`` without gradient, chunk by chunk (:meth:`MentionScorer.score_candidates`);
3. the ``top_span_ratio * num_words`` best non-crossing spans are kept (``k``), their
   representations ``g`` and mention scores recomputed with gradient (with ``min_mention_score``,
   prediction keeps only those scoring above it: the spans the model takes for mentions);
4. coarse scores ``s_c`` choose ``max_top_antecedents`` antecedents per kept span (``c``);
5. fine scores ``s_a`` (pair FFNN with speaker/genre/segment-distance/distance features and,
   with ``use_agreement``, agreement in gender and number: :mod:`.agreement`) and
   ``coref_depth - 1`` gated refinements of ``g``; the final score of a pair is
   ``s_c + s_a``, the dummy antecedent's 0 (``fine_scoring: false``: ``s_c`` alone, one round -
   the single bilinear antecedent score of F-coref / LingMess, without the per-pair FFNN that
   costs most of the time after the encoder);
6. loss: marginal log-likelihood of the gold antecedents; prediction: best antecedent per span,
   clusters by transitivity (word offsets).

With ``singletons: true`` (LitBank, which annotates mentions that corefer with nothing) the mention
scores of the kept spans are also trained as mention/non-mention logits (binary cross-entropy,
``mention_loss_weight``), and a kept span with a mention score above ``singleton_threshold`` that
links to nothing and that nothing links to is output as a cluster of one mention. Without it
(OntoNotes, default) only clusters of two or more mentions are predicted, as in Lee et al.

Nothing of size ``(num_candidates, num_candidates)`` or ``(k, k)`` is built; without
gradients memory is linear in the document length (blocks bounded by ``memory_budget``).

Parameter names: the encoder's start with ``encoder.``, everything else is task-specific (give
it its own learning rate with the parameter groups of ``training_configs/common/optimizer.libsonnet``).
"""

import logging
import math
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, cast

import torch
import torch.nn.functional as F
from allennlp.common.checks import ConfigurationError
from allennlp.data import TextFieldTensors, Vocabulary
from allennlp.models.model import Model
from allennlp.modules import TextFieldEmbedder
from allennlp.nn import InitializerApplicator, util
from allennlp.training.metrics import Average

from spanbert_lib.common.autocast import autocast_dtype_of
from spanbert_lib.common.span_types import Span
from spanbert_lib.coref.metrics import ConllCorefScores
from spanbert_lib.coref.models.agreement import (
    AgreementHead,
    agreement_loss,
    cluster_agreement_targets,
    fixed_span_classes,
    span_attributes,
    word_agreement_classes,
)
from spanbert_lib.coref.models.antecedent_loss import antecedent_labels, marginal_log_likelihood_loss
from spanbert_lib.coref.models.cluster_decoding import clusters_from_antecedents, predicted_antecedents
from spanbert_lib.coref.models.coarse_antecedents import CoarseAntecedentScorer, TopAntecedents
from spanbert_lib.coref.models.higher_order import GatedSpanRefiner, with_dummy
from spanbert_lib.coref.models.mention_scorer import MentionScorer
from spanbert_lib.coref.models.pairwise_scorer import PairFeatures, PairwiseScorer, SpanMetadata
from spanbert_lib.coref.models.pruning import prune_non_crossing
from spanbert_lib.coref.models.span_embedder import SpanEmbedder

logger = logging.getLogger(__name__)

WORD_MAP_KEYS = ("word_starts", "word_ends", "word_mask", "piece_segment_ids")


@dataclass
class DocumentOutput:
    """What :meth:`SpanBertCoreference._document` returns for one document (``k`` kept spans,
    ``c`` antecedent slots)."""

    top_spans: torch.Tensor  # (k, 2) word offsets
    antecedents: torch.Tensor  # (k, c) indices into top_spans
    slots: torch.Tensor  # (k,) chosen slot, -1 for none
    antecedent_spans: torch.Tensor  # (k,) chosen kept span, -1 for none
    mention_scores: torch.Tensor  # (k,) mention score (logit) of each kept span
    loss: Optional[torch.Tensor]
    gold_kept: int  # gold mentions among the kept spans
    gold_total: int  # gold mentions among the candidates


@Model.register("spanbert_coref")
class SpanBertCoreference(Model):
    """
    # Parameters

    vocab : `Vocabulary`
        Unused (the encoder brings its own wordpiece vocabulary).
    encoder : `TextFieldEmbedder`
        Embeds the reader's `text` field to wordpiece states `[B, P, H]` (batch, wordpieces,
        hidden); its indexer must be `segmented_wordpiece` (its word <-> wordpiece maps are read
        from the text tensors). Use a `segmented_transformer` token embedder:
        `{"token_embedders": {"tokens": {"type": "segmented_transformer", "model_name": DIRECTORY}}}`.
    max_span_width : `int`, optional (default = `30`)
        The reader's; widths are embedded up to it.
    feature_size : `int`, optional (default = `20`)
        Size of every width / distance / speaker / genre embedding.
    ffnn_size : `int`, optional (default = `3000`)
    ffnn_depth : `int`, optional (default = `1`)
        Hidden size and number of hidden layers of the mention, width-prior and pair scorers.
    dropout : `float`, optional (default = `0.3`)
        On FFNN hidden layers, feature embeddings and the coarse bilinear term (Joshi et al.'s
        `dropout_rate`).
    top_span_ratio : `float`, optional (default = `0.4`)
        Spans kept per word.
    max_top_antecedents : `int`, optional (default = `50`)
        Antecedents per kept span after coarse pruning.
    coref_depth : `int`, optional (default = `2`)
        Rounds of antecedent scoring (depth - 1 gated refinements).
    fine_scoring : `bool`, optional (default = `True`)
        Add the pair FFNN's fine score ``s_a`` to the coarse score. False: the antecedent score is the
        coarse score alone (mention scores + bilinear term + distance prior, as F-coref's), which
        needs ``coref_depth: 1`` (the refinements are driven by the fine scores) and leaves the pair
        features unused. Inference then skips the ``k * c`` products through the FFNN.
    pair_product_dtype : `str`, optional (default = `None`)
        E.g. ``"bfloat16"``: when not training (prediction, validation), the ``k * c`` per-pair
        products through the pair FFNN (``W_3 (g_i * g_j)``, most of the fine scoring's time) are
        computed in that dtype and added to the rest of the scores in float32: faster fine scoring on
        CPUs with bfloat16 matrix units (AMX) and on GPUs (docs/coref.md). Pair it with the
        encoder's ``autocast_dtype``. None: float32. Training is unaffected.
    use_speaker, use_genre, use_segment_distance, use_distance : `bool`, optional (default = `True`)
        Pair features.
    use_agreement : `bool`, optional (default = `False`)
        The pair feature of agreement in gender and number (English; :mod:`.agreement`): third-person
        pronouns carry their class, every other kept span gets the class an agreement head predicts
        from its embedding, trained on the pronouns of its gold cluster. Needs ``fine_scoring`` and
        the documents' words (the reader's ``metadata``).
    agreement_loss_weight : `float`, optional (default = `1.0`)
        Weight of the agreement head's loss (summed cross-entropy over the kept spans), added to the
        antecedent loss when ``use_agreement``.
    num_genres : `int`, optional (default = `8`)
        At least the reader's `num_genres` (7 OntoNotes genres + unknown).
    num_segment_distances : `int`, optional (default = `3`)
        Segment distances are clipped to `0 .. this - 1` (Joshi et al. use `max_training_segments`).
    memory_budget : `int`, optional (default = `2 ** 24`)
        Elements per intermediate block in chunked scoring (larger blocks: fewer, bigger tensor
        operations; peak memory grows with it, not with the document).
    singletons : `bool`, optional (default = `False`)
        Also predict mentions that corefer with nothing, as clusters of one mention (LitBank's
        annotation). Needs gold singletons in training (the reader keeps them).
    mention_loss_weight : `float`, optional (default = `None`)
        Weight of the binary cross-entropy of the kept spans' mention scores against "is a gold
        mention", added to the antecedent loss. None: 1.0 with `singletons`, else 0.0 (no mention loss).
    singleton_threshold : `float`, optional (default = `0.0`)
        With `singletons`, an unlinked kept span is a singleton when its mention score (a logit)
        exceeds this (0.0: probability 0.5).
    min_mention_score : `float`, optional (default = `None`)
        In eval mode (prediction, validation), keep only the candidates whose mention score (a
        logit) exceeds this, still at most `top_span_ratio * W` of them: Maverick's way of
        clustering only the spans predicted to be mentions, so that the antecedent scoring (most
        of the time after the encoder) grows with the number of mentions rather than with the
        document's length. Training keeps `top_span_ratio * W` spans, so that the antecedent
        loss still sees non-mentions. The scores must be trained as mention logits (a mention
        loss: `singletons` or `mention_loss_weight`). None: always `top_span_ratio * W`.
    initializer : `InitializerApplicator`, optional (default = `None`)
        Applied after the default initialisation (task weights normal(0, 0.02), biases 0, as
        Joshi et al.).
    """

    default_predictor = "spanbert_coref"

    def __init__(
        self,
        vocab: Vocabulary,
        encoder: TextFieldEmbedder,
        max_span_width: int = 30,
        feature_size: int = 20,
        ffnn_size: int = 3000,
        ffnn_depth: int = 1,
        dropout: float = 0.3,
        top_span_ratio: float = 0.4,
        max_top_antecedents: int = 50,
        coref_depth: int = 2,
        fine_scoring: bool = True,
        pair_product_dtype: Optional[str] = None,
        use_speaker: bool = True,
        use_genre: bool = True,
        num_genres: int = 8,
        use_segment_distance: bool = True,
        num_segment_distances: int = 3,
        use_distance: bool = True,
        use_agreement: bool = False,
        agreement_loss_weight: float = 1.0,
        memory_budget: int = 2**24,
        singletons: bool = False,
        mention_loss_weight: Optional[float] = None,
        singleton_threshold: float = 0.0,
        min_mention_score: Optional[float] = None,
        initializer: Optional[InitializerApplicator] = None,
        **kwargs,
    ) -> None:
        super().__init__(vocab, **kwargs)
        for name, value in (
            ("max_span_width", max_span_width),
            ("feature_size", feature_size),
            ("ffnn_size", ffnn_size),
            ("ffnn_depth", ffnn_depth),
            ("max_top_antecedents", max_top_antecedents),
            ("coref_depth", coref_depth),
            ("memory_budget", memory_budget),
        ):
            if value < 1:
                raise ConfigurationError(f"spanbert_coref: {name} must be positive, got {value}")
        if not 0 < top_span_ratio <= 1:
            raise ConfigurationError(f"spanbert_coref: top_span_ratio must be in (0, 1], got {top_span_ratio}")
        if not fine_scoring and coref_depth != 1:
            raise ConfigurationError(
                f"spanbert_coref: fine_scoring false needs coref_depth 1 (got {coref_depth}): the "
                "higher-order refinements are driven by the fine antecedent scores"
            )
        if use_agreement and not fine_scoring:
            raise ConfigurationError(
                "spanbert_coref: use_agreement needs fine_scoring (the agreement feature is one of the pair FFNN's)"
            )
        if agreement_loss_weight < 0:
            raise ConfigurationError(f"spanbert_coref: agreement_loss_weight must be >= 0, got {agreement_loss_weight}")
        if mention_loss_weight is None:
            mention_loss_weight = 1.0 if singletons else 0.0
        if mention_loss_weight < 0:
            raise ConfigurationError(f"spanbert_coref: mention_loss_weight must be >= 0, got {mention_loss_weight}")
        if min_mention_score is not None:
            min_mention_score = float(min_mention_score)  # jsonnet writes 0.0 as 0
            if mention_loss_weight == 0:
                raise ConfigurationError(
                    f"spanbert_coref: min_mention_score {min_mention_score} needs mention scores trained as "
                    "mention/non-mention logits: set singletons: true or a positive mention_loss_weight"
                )
        self.encoder = encoder
        hidden = encoder.get_output_dim()
        self._span_embedder = SpanEmbedder(hidden, feature_size, max_span_width, dropout)
        span_dim = self._span_embedder.get_output_dim()
        self._mention_scorer = MentionScorer(self._span_embedder, ffnn_size, ffnn_depth, dropout)
        self._coarse_scorer = CoarseAntecedentScorer(span_dim, feature_size, dropout)
        features = PairFeatures(
            feature_size,
            use_speaker=use_speaker,
            use_genre=use_genre,
            num_genres=num_genres,
            use_segment_distance=use_segment_distance,
            num_segment_distances=num_segment_distances,
            use_distance=use_distance,
            use_agreement=use_agreement,
            dropout=dropout,
        )
        self._agreement_head = AgreementHead(span_dim) if use_agreement else None
        self.agreement_loss_weight = agreement_loss_weight
        self._pairwise_scorer = (
            PairwiseScorer(span_dim, features, ffnn_size, ffnn_depth, dropout) if fine_scoring else None
        )
        if self._pairwise_scorer is not None:
            try:
                self._pairwise_scorer.product_dtype = autocast_dtype_of(pair_product_dtype, "pair_product_dtype")
            except ValueError as error:
                raise ConfigurationError(f"spanbert_coref: {error}") from None
        elif pair_product_dtype is not None:
            raise ConfigurationError(
                "spanbert_coref: pair_product_dtype needs fine_scoring (without it there are no pair products)"
            )
        self._refiner = GatedSpanRefiner(span_dim) if coref_depth > 1 else None
        self.max_span_width = max_span_width
        self.top_span_ratio = top_span_ratio
        self.max_top_antecedents = max_top_antecedents
        self.coref_depth = coref_depth
        self.use_speaker = use_speaker
        self.use_genre = use_genre
        self.num_genres = num_genres
        self.memory_budget = memory_budget
        self.singletons = singletons
        self.mention_loss_weight = mention_loss_weight
        self.singleton_threshold = singleton_threshold
        self.min_mention_score = min_mention_score
        self._conll_scores = ConllCorefScores()
        self._pruned_mention_recall = Average()
        self._predicted_mentions = Average()
        self._initialize_task_weights()
        if initializer is not None:
            initializer(self)

    def _initialize_task_weights(self) -> None:
        for name, module in self.named_modules():
            if name.partition(".")[0] == "encoder":
                continue
            if isinstance(module, (torch.nn.Linear, torch.nn.Embedding)):
                torch.nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, torch.nn.Linear) and module.bias is not None:
                torch.nn.init.zeros_(module.bias)

    # ------------------------------------------------------------------ forward

    def forward(
        self,
        text: TextFieldTensors,
        spans: torch.Tensor,
        span_labels: Optional[torch.Tensor] = None,
        speaker_ids: Optional[torch.Tensor] = None,
        sentence_ids: Optional[torch.Tensor] = None,
        genre: Optional[torch.Tensor] = None,
        metadata: Optional[List[Dict[str, Any]]] = None,
    ) -> Dict[str, Any]:
        """
        # Parameters (``B`` documents, ``N`` candidate spans, ``W`` words)

        text : the ``segmented_wordpiece`` tensors (see that indexer).
        spans : `(B, N, 2)` inclusive word offsets of the candidate spans, -1 padding.
        span_labels : `(B, N)` gold cluster per span (-1: none), optional.
        speaker_ids : `(B, W)` speaker per word (only equality matters).
        sentence_ids : `(B, W)`, accepted and unused (candidates already respect sentences).
        genre : `(B,)` genre id.
        metadata : per document, the reader's dict (``clusters`` is used for the metric).

        # Returns

        ``top_spans`` `(B, k, 2)` kept spans (word offsets, -1 padding), ``antecedent_indices``
        `(B, k, c)` their antecedents (indices into ``top_spans``), ``predicted_antecedents``
        `(B, k)` the chosen slot of ``antecedent_indices`` (-1: no antecedent), ``loss`` with
        ``span_labels``; ``document`` (words) and ``clusters`` with ``metadata``.
        """
        word_maps = self._word_maps(text)
        states = self.encoder(text)  # (B, P, H)
        piece_mask = util.get_text_field_mask(text)  # (B, P) real wordpieces
        batch_size = spans.size(0)
        documents = []
        for index in range(batch_size):
            documents.append(
                self._document(
                    states[index, : int(piece_mask[index].sum())],
                    word_maps,
                    index,
                    spans[index],
                    None if span_labels is None else span_labels[index],
                    None if speaker_ids is None else speaker_ids[index],
                    None if genre is None else genre[index],
                    metadata[index] if metadata is not None else None,
                )
            )
        output = self._pad_outputs(documents, spans.device)
        if span_labels is not None:
            losses = [cast(torch.Tensor, document.loss) for document in documents]  # set as there are span_labels
            output["loss"] = torch.stack(losses).sum()
            for document in documents:
                if document.gold_total:
                    self._pruned_mention_recall(document.gold_kept / document.gold_total)
        if metadata is not None:
            output["document"] = [item.get("words") for item in metadata]
            clusters = self._clusters(documents)
            output["clusters"] = clusters
            gold = [item.get("clusters") for item in metadata]
            if all(item is not None for item in gold):
                self._conll_scores(clusters, cast(List[List[List[Span]]], gold))
                for document_clusters in clusters:
                    self._predicted_mentions(sum(len(cluster) for cluster in document_clusters))
        return output

    @staticmethod
    def _word_maps(text: TextFieldTensors) -> Dict[str, torch.Tensor]:
        for tensors in text.values():
            if all(key in tensors for key in WORD_MAP_KEYS):
                return tensors
        raise ConfigurationError(
            "spanbert_coref needs the word <-> wordpiece maps of a "
            "segmented_wordpiece token indexer in its text field; got "
            f"tensors {[sorted(t) for t in text.values()]}"
        )

    def _describe(self, metadata: Optional[Dict[str, Any]], index: int) -> str:
        if metadata and metadata.get("doc_key") is not None:
            return f"document {metadata['doc_key']!r} part {metadata.get('part', '')!r}"
        return f"document {index} of the batch"

    def _document(
        self,
        states: torch.Tensor,
        word_maps: Dict[str, torch.Tensor],
        index: int,
        spans: torch.Tensor,
        span_labels: Optional[torch.Tensor],
        speaker_ids: Optional[torch.Tensor],
        genre: Optional[torch.Tensor],
        metadata: Optional[Dict[str, Any]],
    ) -> DocumentOutput:
        """One document: ``states`` ``(P, H)``, ``spans`` ``(N, 2)`` (padded), ``span_labels``
        ``(N,)``, ``speaker_ids`` ``(W,)``, ``genre`` ``()``."""
        num_words = int(word_maps["word_mask"][index].sum())
        word_starts = word_maps["word_starts"][index, :num_words]
        word_ends = word_maps["word_ends"][index, :num_words]
        real = spans[:, 0] >= 0
        candidates = spans[real]
        labels = span_labels[real] if span_labels is not None else None
        if candidates.size(0) > 1 and bool((candidates[1:, 0] < candidates[:-1, 0]).any()):
            # chunked candidate scoring is linear only for spans sorted by start
            order = torch.argsort(candidates[:, 0], stable=True)
            candidates = candidates[order]
            labels = labels[order] if labels is not None else None
        self._check_candidates(candidates, num_words, metadata, index)
        widths = candidates[:, 1] - candidates[:, 0]
        piece_starts, piece_ends = word_starts[candidates[:, 0]], word_ends[candidates[:, 1]]

        candidate_scores = self._mention_scorer.score_candidates(
            self._span_embedder, states, piece_starts, piece_ends, widths, self.memory_budget
        )
        kept = self._prune(candidate_scores, candidates, num_words)
        top_spans = candidates[kept]
        if kept.numel() == 0:  # e.g. a one- or two-word document keeps floor(0.4 * W) = 0 spans
            empty = kept.new_zeros((0, 0))
            loss = states.sum() * 0.0 if labels is not None else None
            gold_total = int((labels >= 0).sum()) if labels is not None else 0
            return DocumentOutput(top_spans, empty, kept, kept, states.new_zeros(0), loss, 0, gold_total)
        top_widths = widths[kept]
        span_embeddings = self._span_embedder(states, piece_starts[kept], piece_ends[kept], top_widths)
        mention_scores = self._mention_scorer(span_embeddings, top_widths)
        top = self._coarse_scorer.top_antecedents(
            span_embeddings, mention_scores, self.max_top_antecedents, self.memory_budget
        )
        candidate_classes = agreement_logits = None
        span_metadata = SpanMetadata(
            speakers=self._span_speakers(speaker_ids, top_spans, metadata, index),
            segments=word_maps["piece_segment_ids"][index][piece_starts[kept]],
            genre=self._genre(genre, metadata, index, states.device),
        )
        if self._agreement_head is not None:
            word_classes = word_agreement_classes(self._words(metadata, index, num_words), states.device)
            candidate_classes = fixed_span_classes(candidates, word_classes)  # [N]
            agreement_logits = self._agreement_head(span_embeddings)  # [k, A]
            span_metadata.fixed_classes = candidate_classes[kept]
            span_metadata.attributes = span_attributes(agreement_logits, span_metadata.fixed_classes)
        scores = self._antecedent_scores(span_embeddings, top, span_metadata)
        for _ in range(self.coref_depth - 1):
            assert self._refiner is not None  # made in __init__ when coref_depth > 1
            span_embeddings = self._refiner(span_embeddings, top.indices, scores)
            scores = self._antecedent_scores(span_embeddings, top, span_metadata)

        slots, antecedent_spans = predicted_antecedents(scores, top.indices)
        loss, gold_kept, gold_total = None, 0, 0
        if labels is not None:
            top_labels = labels[kept]
            loss = marginal_log_likelihood_loss(scores, antecedent_labels(top_labels, top.indices, top.mask))
            if self.mention_loss_weight > 0:
                mention_loss = self._mention_loss(
                    states, piece_starts, piece_ends, widths, labels, kept, mention_scores, top_labels
                )
                loss = loss + self.mention_loss_weight * mention_loss
            if agreement_logits is not None and candidate_classes is not None and self.agreement_loss_weight > 0:
                num_clusters = int(labels.max()) + 1 if labels.numel() else 0
                targets = cluster_agreement_targets(candidate_classes, labels, num_clusters)[kept]
                loss = loss + self.agreement_loss_weight * agreement_loss(agreement_logits, targets)
            gold_kept, gold_total = int((top_labels >= 0).sum()), int((labels >= 0).sum())
        return DocumentOutput(
            top_spans, top.indices, slots, antecedent_spans, mention_scores.detach(), loss, gold_kept, gold_total
        )

    def _prune(self, scores: torch.Tensor, candidates: torch.Tensor, num_words: int) -> torch.Tensor:
        """`[k]` indices (document order) of the kept candidates among ``candidates`` `[N, 2]`
        with mention ``scores`` `[N]`: the best non-crossing ones, at most ``top_span_ratio * W``,
        and in eval mode with ``min_mention_score`` only those scoring above it."""
        num_to_keep = int(math.floor(self.top_span_ratio * num_words))
        if self.training or self.min_mention_score is None:
            return prune_non_crossing(scores, candidates[:, 0], candidates[:, 1], num_to_keep)
        eligible = torch.nonzero(scores > self.min_mention_score).squeeze(1)
        kept = prune_non_crossing(scores[eligible], candidates[eligible, 0], candidates[eligible, 1], num_to_keep)
        return eligible[kept]

    def _mention_loss(
        self,
        states: torch.Tensor,
        piece_starts: torch.Tensor,
        piece_ends: torch.Tensor,
        widths: torch.Tensor,
        labels: torch.Tensor,
        kept: torch.Tensor,
        kept_scores: torch.Tensor,
        kept_labels: torch.Tensor,
    ) -> torch.Tensor:
        """
        Binary cross-entropy (summed) of mention scores against "is a gold mention", over the kept
        spans (their non-mentions are the hardest negatives) and the gold mentions pruning dropped:
        without those, a mention the pruner never keeps (a singleton early in training) would never
        be scored up. Shapes: ``N`` candidates (``states`` `[P, H]`, the rest `[N]`), ``k`` kept.
        """
        is_mention = (kept_labels >= 0).to(kept_scores.dtype)
        loss = F.binary_cross_entropy_with_logits(kept_scores, is_mention, reduction="sum")
        dropped = labels >= 0
        dropped[kept] = False
        if bool(dropped.any()):
            index = torch.nonzero(dropped).squeeze(1)
            embeddings = self._span_embedder(states, piece_starts[index], piece_ends[index], widths[index])
            scores = self._mention_scorer(embeddings, widths[index])
            loss = loss + F.binary_cross_entropy_with_logits(scores, torch.ones_like(scores), reduction="sum")
        return loss

    def _antecedent_scores(
        self, span_embeddings: torch.Tensor, top: TopAntecedents, span_metadata: SpanMetadata
    ) -> torch.Tensor:
        """``(k, c + 1)``: dummy 0, then coarse + fine scores (``-inf`` where masked)."""
        if self._pairwise_scorer is None:
            return with_dummy(top.scores)
        fine = self._pairwise_scorer(span_embeddings, top.indices, span_metadata, self.memory_budget)
        return with_dummy(top.scores + fine)

    def _check_candidates(
        self, candidates: torch.Tensor, num_words: int, metadata: Optional[Dict[str, Any]], index: int
    ) -> None:
        if candidates.numel() == 0:
            return
        widths = candidates[:, 1] - candidates[:, 0]
        problems = []
        if int(candidates[:, 1].max()) >= num_words:
            problems.append(f"a candidate span ends at word {int(candidates[:, 1].max())} of {num_words} words")
        if int(widths.min()) < 0:
            problems.append("a candidate span ends before it starts")
        if int(widths.max()) >= self.max_span_width:
            problems.append(
                f"a candidate span is {int(widths.max()) + 1} words wide but the "
                f"model's max_span_width is {self.max_span_width} (use the same "
                f"value in the reader)"
            )
        if problems:
            raise ValueError(f"spanbert_coref, {self._describe(metadata, index)}: " + "; ".join(problems))

    def _words(self, metadata: Optional[Dict[str, Any]], index: int, num_words: int) -> List[str]:
        words = metadata.get("words") if metadata else None
        if words is None or len(words) != num_words:
            found = "no words" if words is None else f"{len(words)} words"
            raise ValueError(
                f"spanbert_coref, {self._describe(metadata, index)}: use_agreement needs the document's "
                f"{num_words} words in metadata['words'] (the spanbert_coref reader's), got {found}"
            )
        return list(words)

    def _span_speakers(
        self,
        speaker_ids: Optional[torch.Tensor],
        top_spans: torch.Tensor,
        metadata: Optional[Dict[str, Any]],
        index: int,
    ) -> torch.Tensor:
        if speaker_ids is None:
            if self.use_speaker:
                raise ValueError(
                    f"spanbert_coref, {self._describe(metadata, index)}: "
                    "use_speaker is set but the batch has no speaker_ids"
                )
            return top_spans.new_zeros(top_spans.size(0))
        return speaker_ids[top_spans[:, 0]]

    def _genre(
        self, genre: Optional[torch.Tensor], metadata: Optional[Dict[str, Any]], index: int, device: torch.device
    ) -> torch.Tensor:
        if genre is None:
            if self.use_genre:
                raise ValueError(
                    f"spanbert_coref, {self._describe(metadata, index)}: use_genre is set but the batch has no genre"
                )
            return torch.zeros((), dtype=torch.long, device=device)
        if self.use_genre and not 0 <= int(genre) < self.num_genres:
            raise ValueError(
                f"spanbert_coref, {self._describe(metadata, index)}: genre id "
                f"{int(genre)} is outside the model's {self.num_genres} genres "
                f"(set num_genres to the reader's num_genres)"
            )
        return genre

    # ------------------------------------------------------------------ outputs

    def _pad_outputs(self, documents: List[DocumentOutput], device: torch.device) -> Dict[str, Any]:
        batch_size = len(documents)
        most_spans = max((d.top_spans.size(0) for d in documents), default=0)
        most_slots = max((d.antecedents.size(1) for d in documents), default=0)
        top_spans = torch.full((batch_size, most_spans, 2), -1, dtype=torch.long, device=device)
        antecedents = torch.zeros((batch_size, most_spans, most_slots), dtype=torch.long, device=device)
        chosen = torch.full((batch_size, most_spans), -1, dtype=torch.long, device=device)
        mention_scores = torch.full((batch_size, most_spans), -math.inf, device=device)
        for index, document in enumerate(documents):
            spans, slots = document.antecedents.shape
            top_spans[index, :spans] = document.top_spans
            antecedents[index, :spans, :slots] = document.antecedents
            chosen[index, :spans] = document.slots
            mention_scores[index, :spans] = document.mention_scores
        output = {"top_spans": top_spans, "antecedent_indices": antecedents, "predicted_antecedents": chosen}
        if self.singletons:
            output["top_span_mention_scores"] = mention_scores
        return output

    def _clusters(self, documents: List[DocumentOutput]) -> List[List[List[Span]]]:
        return [
            clusters_from_antecedents(
                document.top_spans,
                document.antecedent_spans,
                document.mention_scores > self.singleton_threshold if self.singletons else None,
            )
            for document in documents
        ]

    def make_output_human_readable(self, output_dict: Dict[str, Any]) -> Dict[str, Any]:
        """Adds ``clusters`` (per document, lists of inclusive word spans) if ``forward`` did
        not already, from ``top_spans``/``antecedent_indices``/``predicted_antecedents`` (and, with
        ``singletons``, ``top_span_mention_scores``)."""
        if "clusters" not in output_dict:
            output_dict["clusters"] = decode_clusters(
                output_dict["top_spans"],
                output_dict["antecedent_indices"],
                output_dict["predicted_antecedents"],
                output_dict.get("top_span_mention_scores") if self.singletons else None,
                self.singleton_threshold,
            )
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        metrics = self._conll_scores.get_metric(reset)
        metrics["pruned_mention_recall"] = float(self._pruned_mention_recall.get_metric(reset))
        # mentions in the predicted clusters per scored document: 0 is a model that keeps no mentions
        metrics["predicted_mentions"] = float(self._predicted_mentions.get_metric(reset))
        return metrics


def decode_clusters(
    top_spans: torch.Tensor,
    antecedent_indices: torch.Tensor,
    predicted_slots: torch.Tensor,
    mention_scores: Optional[torch.Tensor] = None,
    singleton_threshold: float = 0.0,
) -> List[List[List[Span]]]:
    """
    Clusters per document from padded model outputs.

    # Parameters

    top_spans : `torch.LongTensor`
        `[B, k, 2]` kept spans (word offsets, -1 padding).
    antecedent_indices : `torch.LongTensor`
        `[B, k, c]` antecedents of each kept span (indices into its document's kept spans).
    predicted_slots : `torch.LongTensor`
        `[B, k]` the chosen slot (-1: none).
    mention_scores : `torch.Tensor`, optional (default = `None`)
        `[B, k]` mention scores of the kept spans: unlinked spans scoring above
        `singleton_threshold` become singleton clusters. None: no singletons.
    singleton_threshold : `float`, optional (default = `0.0`)
    """
    batch = []
    if mention_scores is None:
        mention_scores = torch.full(predicted_slots.shape, -math.inf)
        singleton_threshold = math.inf
    for spans, antecedents, slots, scores in zip(
        top_spans.detach().cpu(),
        antecedent_indices.detach().cpu(),
        predicted_slots.detach().cpu(),
        mention_scores.detach().cpu(),
    ):
        real = spans[:, 0] >= 0
        spans, antecedents, slots, scores = spans[real], antecedents[real], slots[real], scores[real]
        if antecedents.size(1) == 0:
            chosen = torch.full_like(slots, -1)
        else:
            chosen = antecedents.gather(1, slots.clamp(min=0).unsqueeze(1)).squeeze(1)
        chosen = torch.where(slots >= 0, chosen, torch.full_like(chosen, -1))
        singletons = scores > singleton_threshold if singleton_threshold < math.inf else None
        batch.append(clusters_from_antecedents(spans, chosen, singletons))
    return batch
