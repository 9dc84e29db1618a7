// A tiny SpanBERT (MLM + SBO, geometric span masking) sized to learn within a few minutes on 2 CPU
// cores from scratch (the paper's setting at tiny size; the main job instead adapts a pretrained encoder,
// minilm_adapt_cpu.jsonnet). On fixtures/corpus minus a held-out file, with a WordPiece vocabulary trained
// on that text (allennlp build-wordpiece-vocab), overriding the tokenizer (docs/main_job.md, From scratch):
//   allennlp train training_configs/pretraining/spanbert_tiny_cpu.jsonnet -s OUT -o '{
//     "dataset_reader.model_name": "VOCAB_DIR", "validation_dataset_reader.model_name": "VOCAB_DIR",
//     "model.encoder.model_name": "VOCAB_DIR", "train_data_path": "A.txt,B.txt", "validation_data_path": "HELDOUT.txt"}'
// Training runs for a fixed number of optimizer steps whatever the corpus size:
// `num_epochs` x `batches_per_epoch` (the data loader recycles a small corpus and stops early in a
// large one); every "epoch" ends with a validation pass over at most 256 held-out blocks.
// For a directory of books set `document_separator: "file"` (one document per novel; blank lines
// are paragraph breaks inside it).
local optimizer = import "../common/optimizer.libsonnet";
local tokenizer = "fixtures/tiny_bert";
local max_length = 64;
local reader = {
  type: "spanbert_pretraining_corpus",
  model_name: tokenizer,
  max_sequence_length: max_length,
  document_separator: "blank_line",
};
{
  dataset_reader: reader,
  validation_dataset_reader: reader + { max_instances: 256 },
  train_data_path: "fixtures/corpus/biography_agnes_thornbury.txt,fixtures/corpus/miscellany.txt,fixtures/corpus/story_the_cartographers_daughter.txt",
  validation_data_path: "fixtures/corpus/encyclopedia_tarrowby.txt",
  model: {
    type: "spanbert_pretraining",
    encoder: {
      model_name: tokenizer,
      // Built from scratch with these dimensions; the vocabulary size comes from the tokenizer.
      // Relative position embeddings in attention: with absolute ones the 2-layer model needs far
      // more steps to learn to look at a [MASK]'s neighbours (at-[MASK] accuracy stayed below the
      // unigram baseline after 1,200 steps); no dropout: the model underfits within the budget.
      config: {
        hidden_size: 128, num_hidden_layers: 2, num_attention_heads: 4, intermediate_size: 512,
        max_position_embeddings: max_length, position_embedding_type: "relative_key_query",
        hidden_dropout_prob: 0.0, attention_probs_dropout_prob: 0.0,
      },
    },
    masker: { type: "geometric_span", geometric_p: 0.2, max_span_length: 10, masking_budget: 0.15 },
    mlm_weight: 1.0,
    sbo_weight: 1.0,
    sbo_position_embedding_dim: 32,
  },
  data_loader: { batch_size: 32, shuffle: true, batches_per_epoch: 100 },
  validation_data_loader: { batch_size: 64, shuffle: false },
  trainer: {
    num_epochs: 16,  // x 100 batches = 1600 optimizer steps
    optimizer: {
      // A tiny model trained from scratch takes a high peak learning rate after a short warm-up
      // (5e-3 stays at the unigram baseline: post-LayerNorm BERT collapses). The trials behind
      // these choices are in the README's main-job section.
      type: "huggingface_adamw", lr: 2e-3, betas: [0.9, 0.98], eps: 1e-8, weight_decay: 0.0,
      parameter_groups: optimizer.parameter_groups(),
    },
    learning_rate_scheduler: { type: "linear_with_warmup", warmup_steps: 100 },
    grad_norm: 1.0,
    callbacks: [{ type: "tensorboard" }],
    cuda_device: -1,
  },
}
