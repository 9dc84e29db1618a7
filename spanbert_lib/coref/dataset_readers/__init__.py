"""Coreference dataset readers; importing this package registers ``spanbert_coref``."""

from spanbert_lib.coref.dataset_readers.document_window import (  # noqa: F401
    DocumentWindow,
    document_window,
)
from spanbert_lib.coref.dataset_readers.mention_labels import (  # noqa: F401
    MentionClusterLabels,
    label_candidate_spans,
)
from spanbert_lib.coref.dataset_readers.spanbert_coref import (  # noqa: F401
    CorefReadStats,
    SpanBertCorefReader,
    clusters_in_document,
    conll_paths,
)
from spanbert_lib.coref.dataset_readers.speakers_and_genres import (  # noqa: F401
    ONTONOTES_GENRES,
    GenreIds,
    speaker_ids,
)
