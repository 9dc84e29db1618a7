"""Relation classification model and the marker-aware transformer embedder."""

from spanbert_lib.relation.models.entity_marker_embedder import EntityMarkerAwareEmbedder  # noqa: F401
from spanbert_lib.relation.models.entity_pair_classifier import EntityPairRelationClassifier  # noqa: F401
from spanbert_lib.relation.models.relation_classifier import SpanBertRelationClassifier  # noqa: F401
