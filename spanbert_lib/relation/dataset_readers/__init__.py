"""TACRED reading: validation, entity schemes, truncation around entities, the marker-aware indexer."""

from spanbert_lib.relation.dataset_readers.entity_marker_indexer import EntityMarkerAwareIndexer  # noqa: F401
from spanbert_lib.relation.dataset_readers.entity_schemes import ENTITY_SCHEMES, mark_entities  # noqa: F401
from spanbert_lib.relation.dataset_readers.entity_window import window_around  # noqa: F401
from spanbert_lib.relation.dataset_readers.semeval2010 import SemEval2010Task8Reader  # noqa: F401
from spanbert_lib.relation.dataset_readers.tacred import TacredReader  # noqa: F401
from spanbert_lib.relation.dataset_readers.tacred_example import (  # noqa: F401
    TacredExample,
    TacredFormatError,
    parse_tacred_record,
)
