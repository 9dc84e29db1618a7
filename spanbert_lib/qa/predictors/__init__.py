"""Predictor for extractive QA and the official SQuAD prediction-file writer."""

from spanbert_lib.qa.predictors.official_files import JsonObjectWriter  # noqa: F401
from spanbert_lib.qa.predictors.spanbert_qa import SpanBertQAPredictor  # noqa: F401
