"""
The ``spanbert_span_ner`` spaCy component::

    nlp = spacy.blank("en")
    nlp.add_pipe("spanbert_span_ner", config={"archive": "path/model.tar.gz", "set_ents": True})
    doc = nlp("John and his family slept.")
    doc.spans["spanbert_ner"]                   # every entity, nested ones too (labels in Span.label_)
    doc.spans["spanbert_ner"].attrs["scores"]   # the probability of each one's label
    doc.ents                                    # with set_ents: the best entities that do not overlap

Each sentence is an instance of the model, with its neighbours as context; a sentence longer than
an instance is predicted in overlapping windows, as the ``spanbert_span_ner`` predictor does.
"""

from typing import Any, Dict, List, Optional, Set

from spacy.language import Language
from spacy.tokens import Doc, Span, SpanGroup

from spanbert_lib.spacy_components.archive_component import ArchiveComponent
from spanbert_lib.spacy_components.archive_source import ArchiveSource
from spanbert_lib.spacy_components.doc_words import DocWords, token_span


def best_non_overlapping(spans: List[Span], scores: List[float]) -> List[Span]:
    """The highest-scoring spans that share no token, greedily (ties: earlier, then longer, first)."""
    order = sorted(range(len(spans)), key=lambda i: (-scores[i], spans[i].start, -(spans[i].end - spans[i].start)))
    taken: Set[int] = set()
    chosen: List[Span] = []
    for index in order:
        tokens = set(range(spans[index].start, spans[index].end))
        if not tokens & taken:
            chosen.append(spans[index])
            taken |= tokens
    return sorted(chosen, key=lambda span: span.start)


class SpanBertSpanNerComponent(ArchiveComponent):
    """
    Span NER of each Doc (module docstring).

    # Parameters

    nlp, name : as every spaCy component's.
    archive : `str`
        A ``spanbert_span_ner`` model archive.
    cuda_device : `int`
        As ``load_archive``'s (-1: CPU).
    batch_size : `int`
        Most sentences (or windows of long ones) per forward pass; the sentences of all Docs of an
        ``nlp.pipe`` batch are batched together.
    words : `str`
        ``"doc"`` or ``"predictor"`` (see :class:`ArchiveComponent`).
    spans_key : `str`
        The ``doc.spans`` key of the entities.
    set_ents : `bool`
        Also write the best non-overlapping entities into ``doc.ents`` (which replaces the Doc's
        entities, e.g. those of a pipeline's ``ner``).
    overrides : `str`, optional (default = `""`)
        JSON settings of the archive's config changed when loading it (see :class:`ArchiveSource`).
    """

    def __init__(
        self,
        nlp: Language,
        name: str,
        archive: Optional[str],
        cuda_device: int,
        batch_size: int,
        words: str,
        spans_key: str,
        set_ents: bool,
        overrides: str = "",
    ) -> None:
        source = ArchiveSource(
            "spanbert_span_ner", "spanbert_span_ner", "spanbert_span_ner", archive, cuda_device, overrides
        )
        super().__init__(nlp, name, source, batch_size, words)
        self.spans_key = spans_key
        self.set_ents = set_ents

    @property
    def predictor(self) -> Any:
        predictor = self.source.predictor
        predictor.batch_size = self.batch_size
        return predictor

    def predictor_input(self, doc: Doc, words: DocWords) -> Dict[str, Any]:
        if self.words == "predictor":
            return {"text": doc.text}
        return {"sentences": words.tokenized.sentences}

    def set_annotations(self, doc: Doc, words: DocWords, result: Dict[str, Any]) -> None:
        spans, scores = [], []
        for entity in result["entities"]:
            if self.words == "predictor":
                start, end = entity["char_start"], entity["char_end"]
            else:
                start, end = words.char_span(entity["start"], entity["end"])
            span = token_span(doc, start, end, label=entity["label"])
            if span is not None:
                spans.append(span)
                scores.append(float(entity["score"]))
        doc.spans[self.spans_key] = SpanGroup(doc, name=self.spans_key, spans=spans, attrs={"scores": scores})
        if self.set_ents:
            doc.set_ents(best_non_overlapping(spans, scores), default="outside")


@Language.factory(
    "spanbert_span_ner",
    default_config={
        "archive": None,
        "cuda_device": -1,
        "batch_size": 16,
        "words": "doc",
        "spans_key": "spanbert_ner",
        "set_ents": False,
        "overrides": "",
    },
    assigns=["doc.spans", "doc.ents"],
)
def make_span_ner_component(
    nlp: Language,
    name: str,
    archive: Optional[str],
    cuda_device: int,
    batch_size: int,
    words: str,
    spans_key: str,
    set_ents: bool,
    overrides: str,
) -> SpanBertSpanNerComponent:
    """The ``spanbert_span_ner`` factory (``nlp.add_pipe("spanbert_span_ner", config={"archive": ...})``)."""
    return SpanBertSpanNerComponent(nlp, name, archive, cuda_device, batch_size, words, spans_key, set_ents, overrides)
