"""
Trained models over raw texts in three lines, as ``Predictor.from_path`` is for allennlp and ``FCoref`` for
fastcoref: :class:`Coreference` (clusters) and :class:`SpanNer` (entities), loaded from a model archive or an
installed model package (``allennlp package-model``). Also importable from the top-level package
(``from spanbert_lib import Coreference``).
"""

from spanbert_lib.pipelines.coreference import CorefDoc, Coreference
from spanbert_lib.pipelines.span_ner import NerDoc, SpanNer

__all__ = ["Coreference", "CorefDoc", "SpanNer", "NerDoc"]
