from spanbert_lib.pretraining.models.spanbert_pretraining import SpanBertPretraining  # noqa: F401
