"""Relation classification model and the marker-aware transformer embedder."""

from spanbert_lib.relation.models.entity_marker_embedder import EntityMarkerAwareEmbedder  # noqa: F401
from spanbert_lib.relation.models.spanbert_entity_pair_relation_classifier import SpanBertEntityPairRelationClassifier  # noqa: F401
from spanbert_lib.relation.models.spanbert_relation_classifier import SpanBertRelationClassifier  # noqa: F401
