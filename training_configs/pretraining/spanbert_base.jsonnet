// SpanBERT-base pre-training (Joshi et al. 2020, sections 3 and 5, Appendix A):
// geometric span masking (p=0.2, max 10 words, 15 % budget, 80/10/10 per span), MLM + SBO,
// single contiguous 512-token blocks, no NSP, cased WordPiece vocabulary.
// Optimisation: AdamW (beta 0.9/0.999, eps 1e-8, decoupled weight decay 0.1), peak lr 1e-4,
// 10k warm-up steps then linear decay, dropout 0.1, 256 sequences per update.
// The paper trains 2.4M updates on English Wikipedia + BooksCorpus; `num_epochs` below sets
// the length of the linear schedule: choose it for your corpus so epochs * updates/epoch ~ 2.4M.
//
// Override on the command line (paths are examples):
//   allennlp train training_configs/pretraining/spanbert_base.jsonnet -s runs/spanbert_base \
//     -o '{"train_data_path": "/data/corpus/train", "validation_data_path": "/data/corpus/dev",
//          "dataset_reader.model_name": "/data/vocab-cased", "model.encoder.model_name": "/data/vocab-cased"}'
// Build the vocabulary with: allennlp build-wordpiece-vocab /data/corpus/train /data/vocab-cased --vocab-size 28996
// Multi-GPU: add "distributed": {"cuda_devices": [0, 1, 2, 3, 4, 5, 6, 7]} and divide
// num_gradient_accumulation_steps by the number of GPUs.
local optimizer = import "../common/optimizer.libsonnet";
local tokenizer = "pretrained/vocab-cased";
local dims = { hidden_size: 768, num_hidden_layers: 12, num_attention_heads: 12, intermediate_size: 3072 };
local per_device_batch = 32;
local accumulation = 8;  // 32 x 8 = 256 sequences per update on one device
{
  dataset_reader: {
    type: "spanbert_pretraining_corpus",
    model_name: tokenizer,
    max_sequence_length: 512,
    document_separator: "blank_line",
  },
  train_data_path: "../shared/data/corpus/gutenberg",
  validation_data_path: "../shared/data/corpus/gutenberg",
  model: {
    type: "spanbert_pretraining",
    encoder: {
      model_name: tokenizer,
      config: dims + {
        max_position_embeddings: 512, hidden_act: "gelu",
        hidden_dropout_prob: 0.1, attention_probs_dropout_prob: 0.1,
      },
    },
    masker: {
      type: "geometric_span", geometric_p: 0.2, max_span_length: 10, masking_budget: 0.15,
      mask_probability: 0.8, random_probability: 0.1,
    },
    mlm_weight: 1.0,
    sbo_weight: 1.0,
    sbo_position_embedding_dim: 200,
  },
  data_loader: { batch_size: per_device_batch, shuffle: true, max_instances_in_memory: 100000, num_workers: 2 },
  validation_data_loader: { batch_size: per_device_batch, shuffle: false, max_instances_in_memory: 10000 },
  trainer: {
    num_epochs: 40,
    num_gradient_accumulation_steps: accumulation,
    optimizer: {
      type: "huggingface_adamw", lr: 1e-4, betas: [0.9, 0.999], eps: 1e-8, weight_decay: 0.1,
      parameter_groups: optimizer.parameter_groups(),
    },
    learning_rate_scheduler: { type: "linear_with_warmup", warmup_steps: 10000 },
    grad_norm: 1.0,
    use_amp: true,
    callbacks: [{ type: "tensorboard" }],
    checkpointer: { save_every_num_seconds: 3600, keep_most_recent_by_count: 3 },
    cuda_device: 0,
  },
}
