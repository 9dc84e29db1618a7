// GLUE sentence-pair classification (MNLI) with SpanBERT-base: allennlp-models' `snli` reader (MultiNLI's
// JSON lines have the same sentence1 / sentence2 / gold_label fields; pairs labelled "-" are skipped), which
// packs "[CLS] premise [SEP] hypothesis [SEP]" with segment ids 0 / 1, and allennlp's `basic_classifier` with a
// linear layer (after dropout 0.1) over the final [CLS] vector (`cls_pooler`). Reused, not rewritten.
//
// Hyperparameters follow SpanBERT's released GLUE fine-tuning command (README, run_glue.py): batch 32,
// max_seq_length 128 (each sentence is cut to 62 wordpieces, so a pair is at most 62 + 62 + 3 = 127), lr 2e-5,
// Adam with weight decay 0.01 (none on biases / LayerNorm), no bias correction, linear warm-up over the first
// 10 % of the steps then linear decay, gradient clipping at 1.0. The released command trains 10 epochs (shown
// for RTE); MNLI has 393k pairs, where 3 epochs is the usual budget - set below; raise num_epochs for small sets.
// The same config serves SNLI and other 3-way (entailment / neutral / contradiction) files in this format; the
// `snli` reader refuses other label sets (e.g. RTE's not_entailment); collapse_labels: true makes it 2-way.
//
// Data: multinli_1.0_train.jsonl and multinli_1.0_dev_matched.jsonl from the MultiNLI 1.0 release.
// Encoder: SpanBERT/spanbert-base-cased in a local folder (no network here); override the model_name of the
// tokenizer, the indexer and the embedder with -o as in sst2_spanbert_base.jsonnet.
local optimizer = import "../common/optimizer.libsonnet";
local transformer = "pretrained/spanbert-base-cased";
local tokenizer_kwargs = { do_lower_case: false };
local data_dir = "data/multinli_1.0";
local num_train_examples = 392702;
local batch_size = 32;
local num_epochs = 3;
local total_steps = std.ceil(num_train_examples / batch_size) * num_epochs;
{
  dataset_reader: {
    type: "snli",
    tokenizer: {
      type: "pretrained_transformer", model_name: transformer, add_special_tokens: false, max_length: 62,
      tokenizer_kwargs: tokenizer_kwargs,
    },
    token_indexers: {
      tokens: { type: "pretrained_transformer", model_name: transformer, tokenizer_kwargs: tokenizer_kwargs },
    },
    combine_input_fields: true,
  },
  train_data_path: data_dir + "/multinli_1.0_train.jsonl",
  validation_data_path: data_dir + "/multinli_1.0_dev_matched.jsonl",
  model: {
    type: "basic_classifier",
    text_field_embedder: {
      token_embedders: {
        tokens: { type: "pretrained_transformer", model_name: transformer, tokenizer_kwargs: tokenizer_kwargs },
      },
    },
    seq2vec_encoder: { type: "cls_pooler", embedding_dim: 768 },
    dropout: 0.1,
    namespace: "tags",
  },
  data_loader: { batch_size: batch_size, shuffle: true },
  validation_data_loader: { batch_size: 64, shuffle: false },
  trainer: {
    num_epochs: num_epochs,
    optimizer: {
      type: "huggingface_adamw", lr: 2e-5, betas: [0.9, 0.999], eps: 1e-6, weight_decay: 0.01, correct_bias: false,
      parameter_groups: optimizer.no_decay_groups(),
    },
    learning_rate_scheduler: { type: "linear_with_warmup", warmup_steps: std.floor(0.1 * total_steps) },
    grad_norm: 1.0,
    validation_metric: "+accuracy",
    use_amp: true,
    cuda_device: 0,
  },
}
