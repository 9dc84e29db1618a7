"""Loose micro P/R/F1 of entity typing."""

from spanbert_lib.entity_typing.metrics.loose_micro_f1 import LooseMicroF1  # noqa: F401
