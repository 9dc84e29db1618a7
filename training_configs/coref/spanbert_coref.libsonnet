// Shared pieces of the spanbert_coref configs (Lee et al. 2018 higher-order coarse-to-fine model
// on independent segments, Joshi et al. 2019; SpanBERT paper section 4.1 and Appendix B).
local optimizer = import "../common/optimizer.libsonnet";
{
  // One spanbert_coref reader; `window` = max_training_segments (null: whole documents).
  reader(encoder, max_segment_len, max_span_width, window=null):: {
    type: "spanbert_coref",
    token_indexers: {
      tokens: { type: "segmented_wordpiece", model_name: encoder, max_segment_len: max_segment_len },
    },
    max_span_width: max_span_width,
    max_training_segments: window,
  },

  embedder(encoder):: {
    token_embedders: { tokens: { type: "segmented_transformer", model_name: encoder } },
  },

  // Joshi et al.: encoder AdamW with weight decay 0.01 (not on biases / LayerNorm), task
  // parameters plain Adam at their own rate; gradient norm clipped at 1; linear decay to 0
  // after a 10 % warm-up (allennlp applies the warm-up to both groups).
  optimizer(encoder_lr, task_lr):: {
    type: "huggingface_adamw",
    lr: task_lr,
    eps: 1e-6,
    weight_decay: 0.0,
    parameter_groups: optimizer.parameter_groups(encoder_lr, 0.01),
  },

  scheduler(num_training_documents, num_epochs):: {
    type: "linear_with_warmup",
    warmup_steps: std.floor(0.1 * num_training_documents * num_epochs),
  },
}
