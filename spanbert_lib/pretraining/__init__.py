"""SpanBERT pre-training: span masking, MLM + SBO heads, the pre-training model."""
