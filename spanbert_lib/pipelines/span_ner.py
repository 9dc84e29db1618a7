"""Entities of raw texts in three lines (:class:`SpanNer`)."""

from dataclasses import dataclass, field
from typing import Any, Dict, List, Tuple

from spanbert_lib.pipelines.text_model import TextModel

Entity = Tuple[int, int, str]


@dataclass
class NerDoc:
    """
    The entities of one text.

    # Parameters

    text : `str`
        The text as given.
    entities : `List[Entity]`
        ``(start, end, label)``: character offsets into ``text``, end exclusive, in order; nested entities overlap.
    scores : `List[float]`
        The probability of each entity's label.
    """

    text: str
    entities: List[Entity] = field(default_factory=list)
    scores: List[float] = field(default_factory=list)

    @property
    def entity_strings(self) -> List[Tuple[str, str]]:
        """``(text, label)`` of each entity."""
        return [(self.text[start:end], label) for start, end, label in self.entities]


class SpanNer(TextModel[NerDoc]):
    """
    A trained ``spanbert_span_ner`` model over raw texts::

        from spanbert_lib import SpanNer
        ner = SpanNer("models/litbank_ner/model.tar.gz")
        doc = ner.predict(["John and his family slept."])[0]
        doc.entities          # [(0, 4, "PER"), (9, 12, "PER"), (9, 19, "PER")]
        doc.entity_strings    # [("John", "PER"), ("his", "PER"), ("his family", "PER")]

    Each sentence is an instance, with its neighbours as context; a sentence longer than an instance is predicted in
    overlapping windows. Parameters: see :class:`~spanbert_lib.pipelines.text_model.TextModel`.
    """

    model_type = "spanbert_span_ner"
    predictor_name = "spanbert_span_ner"

    def predictor_input(self, text: str) -> Dict[str, Any]:
        return {"text": text}

    def result(self, text: str, output: Dict[str, Any]) -> NerDoc:
        entities = [(int(e["char_start"]), int(e["char_end"]), str(e["label"])) for e in output["entities"]]
        return NerDoc(text, entities, [float(e["score"]) for e in output["entities"]])
