from spanbert_lib.pretraining.models.spanbert_pretraining import SpanBertPretrainingModel  # noqa: F401
