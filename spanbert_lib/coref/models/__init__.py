"""Coreference models; importing this package registers the ``spanbert_coref`` model."""

from spanbert_lib.coref.models.agreement import (  # noqa: F401
    AGREEMENT_CLASSES,
    AgreementHead,
    agreement_values,
)
from spanbert_lib.coref.models.antecedent_loss import (  # noqa: F401
    antecedent_labels,
    marginal_log_likelihood_loss,
)
from spanbert_lib.coref.models.cluster_decoding import (  # noqa: F401
    cluster_roots,
    clusters_from_antecedents,
    predicted_antecedents,
)
from spanbert_lib.coref.models.coarse_antecedents import (  # noqa: F401
    CoarseAntecedentScorer,
    TopAntecedents,
    bucket_distance,
)
from spanbert_lib.coref.models.feedforward import FeedForwardScorer  # noqa: F401
from spanbert_lib.coref.models.higher_order import (  # noqa: F401
    GatedSpanRefiner,
    attend_antecedents,
    with_dummy,
)
from spanbert_lib.coref.models.mention_scorer import MentionScorer  # noqa: F401
from spanbert_lib.coref.models.pairwise_scorer import (  # noqa: F401
    PairFeatures,
    PairwiseScorer,
    SpanMetadata,
)
from spanbert_lib.coref.models.pruning import (  # noqa: F401
    crossing_pairs,
    greedy_non_crossing,
    prune_non_crossing,
)
from spanbert_lib.coref.models.span_embedder import (  # noqa: F401
    SpanEmbedder,
    flat_span_pieces,
    segment_softmax,
)
from spanbert_lib.coref.models.spanbert_coref import SpanBertCoreference, decode_clusters  # noqa: F401
