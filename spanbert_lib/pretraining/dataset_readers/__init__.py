"""Raw-text corpus readers for pre-training (registered as ``spanbert_pretraining_corpus`` and
``spanbert_nsp_corpus``) and the corpus helpers they share."""

from spanbert_lib.pretraining.dataset_readers.corpus_files import (  # noqa: F401
    Document,
    expand_text_paths,
    iter_documents,
)
from spanbert_lib.pretraining.dataset_readers.nsp_corpus import NspCorpusReader  # noqa: F401
from spanbert_lib.pretraining.dataset_readers.pretraining_corpus import PretrainingCorpusReader  # noqa: F401
