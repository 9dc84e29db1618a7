"""
Coreference metrics with the semantics of the CoNLL-2012 reference scorer v8.01: MUC,
B-cubed, CEAFm, CEAFe, BLANC, micro-averaged over documents; the allennlp metric
``conll_coref_scores``.
"""

from spanbert_lib.coref.metrics.conll_coref_scores import ConllCorefScores  # noqa: F401
from spanbert_lib.coref.metrics.scorer import (  # noqa: F401
    CorefScoreAccumulator,
    TooManyRepeatedMentions,
    prf,
    score_documents,
)
