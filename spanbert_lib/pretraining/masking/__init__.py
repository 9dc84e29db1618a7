"""
Masking schemes for SpanBERT pre-training (Joshi et al. 2020): ``geometric_span`` (the
default) and the section 6.1 ablations ``subword``, ``whole_word``, ``named_entity`` and
``noun_phrase``, all behind the :class:`Masker` interface; plus masking statistics.
"""

from spanbert_lib.pretraining.masking.geometric_span import GeometricSpanMasker, truncated_geometric_pmf  # noqa: F401
from spanbert_lib.pretraining.masking.masker import Masker, SpanSelection  # noqa: F401
from spanbert_lib.pretraining.masking.output import (  # noqa: F401
    IGNORE_INDEX,
    REPLACE_KEEP,
    REPLACE_MASK,
    REPLACE_RANDOM,
    MaskingOutput,
)
from spanbert_lib.pretraining.masking.phrase import PhraseMasker  # noqa: F401
from spanbert_lib.pretraining.masking.statistics import MaskingStatistics, plot_span_length_histogram  # noqa: F401
from spanbert_lib.pretraining.masking.subword import SubwordMasker  # noqa: F401
from spanbert_lib.pretraining.masking.whole_word import WholeWordMasker  # noqa: F401
