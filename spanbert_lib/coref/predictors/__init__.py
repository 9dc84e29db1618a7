"""Coreference predictors; importing this package registers the ``spanbert_coref`` predictor."""

from spanbert_lib.common.predictors.text_views import (  # noqa: F401
    TokenizedText,
    character_clusters,
    join_pretokenized,
    resolved_text,
    tokenize_text,
)
from spanbert_lib.coref.predictors.conll_predictions import (  # noqa: F401
    predict_conll_file,
    predict_documents,
)
from spanbert_lib.coref.predictors.spanbert_coref import SpanBertCorefPredictor  # noqa: F401
