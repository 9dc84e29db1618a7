// A tiny SpanBERT (MLM + SBO, geometric span masking) that pre-trains in about a minute on 2 CPU
// cores. The README's main job (scripts/main.sh) runs it on fixtures/corpus with a WordPiece
// vocabulary trained on that corpus, overriding `tokenizer` / `transformer_model`:
//   allennlp train training_configs/pretraining/spanbert_tiny_cpu.jsonnet -s OUT \
//     -o '{"dataset_reader.tokenizer": "VOCAB_DIR", "model.transformer_model": "VOCAB_DIR"}'
// For a real corpus point train_data_path at it (a file, a directory of .txt files or a glob),
// e.g. ../shared/data/corpus/gutenberg, and grow the dimensions.
local tokenizer = "fixtures/tiny_bert";
local max_length = 128;
{
  dataset_reader: {
    type: "spanbert_pretraining_corpus",
    tokenizer: tokenizer,
    max_sequence_length: max_length,
    document_separator: "blank_line",
  },
  train_data_path: "fixtures/corpus",
  validation_data_path: "fixtures/corpus/miscellany.txt",
  model: {
    type: "spanbert_pretraining",
    transformer_model: tokenizer,
    // Built from scratch with these dimensions; the vocabulary size comes from the tokenizer.
    transformer_config: {
      hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 2, intermediate_size: 128,
      max_position_embeddings: max_length, hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1,
    },
    masker: { type: "geometric_span", geometric_p: 0.2, max_span_length: 10, masking_budget: 0.15 },
    mlm_weight: 1.0,
    sbo_weight: 1.0,
    sbo_position_embedding_dim: 32,
  },
  data_loader: { batch_size: 16, shuffle: true },
  validation_data_loader: { batch_size: 32, shuffle: false },
  trainer: {
    num_epochs: 6,
    optimizer: {
      type: "huggingface_adamw", lr: 2e-3, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0.01,
      parameter_groups: [[["bias", "LayerNorm.weight", "layer_norm.weight", "norm1.weight", "norm2.weight"], { weight_decay: 0.0 }]],
    },
    learning_rate_scheduler: { type: "linear_with_warmup", warmup_steps: 20 },
    grad_norm: 1.0,
    callbacks: [{ type: "tensorboard" }],
    cuda_device: -1,
  },
}
