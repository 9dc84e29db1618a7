// Continued pre-training of a PRETRAINED encoder on your own text with SpanBERT's two heads: the real
// MiniLM-L6-H384 (uncased, pretrained/all-MiniLM-L6-v2, shipped without an MLM head) gets a masked-LM head
// tied to its word embeddings and a span boundary (SBO) head, both new, and the whole model trains end to end
// on geometric span masks. `bash scripts/main.sh` (evidence/main_job.py) runs it on fixtures/corpus minus the
// held-out file, once as here (the ADAPTED encoder) and once with `"model.freeze_encoder": true` (the heads
// on the FROZEN encoder, same steps and masks), then exports the adapted encoder and SBO head
// (`allennlp export-encoder`) and reuses both in span NER. On your own text:
//   allennlp train training_configs/pretraining/minilm_adapt_cpu.jsonnet -s OUT --include-package spanbert_lib \
//     -o '{"train_data_path": "my_corpus/", "validation_data_path": "my_heldout.txt"}'
// Training runs for a fixed number of optimizer steps whatever the corpus size: `num_epochs` x
// `batches_per_epoch` (a small corpus is recycled with fresh masks); every "epoch" ends with a validation pass
// over at most 256 held-out blocks. The encoder is about 10 times slower per step than the from-scratch tiny
// model (spanbert_tiny_cpu.jsonnet), so the budget is a few hundred steps on a CPU (~1 s per step on 2 cores);
// on a GPU raise the steps.
local optimizer = import "../common/optimizer.libsonnet";
local encoder = "pretrained/all-MiniLM-L6-v2";
local reader = {
  type: "spanbert_pretraining_corpus",
  model_name: encoder,
  // 128 wordpieces: enough context around a span (the paper uses 512); a pretrained encoder costs about the
  // same per wordpiece at 64 or 128.
  max_sequence_length: 128,
  document_separator: "blank_line",
};
{
  dataset_reader: reader,
  validation_dataset_reader: reader + { max_instances: 256 },
  train_data_path: "fixtures/corpus/biography_agnes_thornbury.txt,fixtures/corpus/miscellany.txt,fixtures/corpus/story_the_cartographers_daughter.txt",
  validation_data_path: "fixtures/corpus/encyclopedia_tarrowby.txt",
  model: {
    type: "spanbert_pretraining",
    // No `config`: the pretrained weights are loaded.
    encoder: { model_name: encoder },
    freeze_encoder: false,
    // The paper's masking: geometric span lengths (p = 0.2, at most 10 words), 15 % of the wordpieces.
    masker: { type: "geometric_span", geometric_p: 0.2, max_span_length: 10, masking_budget: 0.15 },
    mlm_weight: 1.0,
    sbo_weight: 1.0,
    sbo_position_embedding_dim: 200,
  },
  // Batches of 8 blocks: with ~110 training blocks, more optimizer steps for the same text seen (the heads start
  // from nothing and need updates more than large batches).
  data_loader: { batch_size: 8, shuffle: true, batches_per_epoch: 10 },
  validation_data_loader: { batch_size: 32, shuffle: false },
  trainer: {
    num_epochs: 24,  // x 10 batches = 240 optimizer steps
    optimizer: {
      // The two heads are new and learn at lr (10x the encoder); the pretrained encoder moves at 2e-4 (twice
      // BERT's pre-training rate: a 6-layer, 384-wide encoder and a budget of a few hundred steps), after a warm-up
      // that keeps the random heads' first gradients from disturbing it. RoBERTa/SpanBERT's betas and eps.
      type: "huggingface_adamw", lr: 2e-3, betas: [0.9, 0.98], eps: 1e-6, weight_decay: 0.01,
      parameter_groups: optimizer.parameter_groups(2e-4),
    },
    learning_rate_scheduler: { type: "linear_with_warmup", warmup_steps: 24 },
    grad_norm: 1.0,
    callbacks: [{ type: "tensorboard" }],
    cuda_device: -1,
  },
}
