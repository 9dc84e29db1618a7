// entity_pair_relation_classifier on TACRED with SpanBERT-large and entity-aware attention, following LUKE's
// relation classification fine-tuning (Yamada et al. 2020, sec. 4.2 and appendix) instead of SpanBERT's
// entity masks (tacred_spanbert_large.jsonnet):
//   input  : the sentence as it is (tacred reader, entity_scheme "plain", a plain pretrained_transformer
//            indexer: no marker tokens), plus two entities, [HEAD] at the subject and [TAIL] at the object;
//   model  : [head state; tail state] -> dropout 0.1 -> linear over the 42 labels; cross-entropy
//            (no_relation an ordinary class); official TACRED micro F1 for model selection;
//   optim  : AdamW lr 1e-5, betas (0.9, 0.98), eps 1e-6, weight decay 0.01 (none on biases / LayerNorm),
//            linear warm-up over the first 6 % of the steps then linear decay, batch 32, 5 epochs.
// TACRED is LDC-licensed (LDC2018T24): put the official train/dev/test.json into data_dir or override the
// paths. The encoder: see tacred_spanbert_large.jsonnet. Needs a GPU (cuda_device 0, mixed precision).
//   allennlp train training_configs/relation/tacred_luke_spanbert_large.jsonnet -s runs/tacred_luke_large \
//     --include-package spanbert_lib
local optimizer = import "../common/optimizer.libsonnet";
local relations = import "tacred_relations.libsonnet";
local encoder = "pretrained/spanbert-large-cased";
local tokenizer_kwargs = { do_lower_case: false };
local data_dir = "../shared/data/relation/tacred";
local num_train_examples = 68124;
local batch_size = 32;
local num_epochs = 5;
local steps_per_epoch = std.ceil(num_train_examples / batch_size);
{
  dataset_reader: {
    type: "spanbert_tacred",
    model_name: encoder,
    tokenizer_kwargs: tokenizer_kwargs,
    entity_scheme: "plain",
    max_seq_length: 256,
    token_indexers: {
      tokens: { type: "pretrained_transformer", model_name: encoder, tokenizer_kwargs: tokenizer_kwargs },
    },
  },
  train_data_path: data_dir + "/train.json",
  validation_data_path: data_dir + "/dev.json",
  test_data_path: data_dir + "/test.json",
  evaluate_on_test: true,
  vocabulary: { type: "from_instances", tokens_to_add: { labels: relations } },
  model: {
    type: "spanbert_entity_pair_relation_classifier",
    encoder: { type: "entity_aware_transformer", model_name: encoder, entity_aware_attention: true },
    use_entities: true,
    dropout: 0.1,
  },
  data_loader: { batch_size: batch_size, shuffle: true },
  validation_data_loader: { batch_size: 64, shuffle: false },
  trainer: {
    num_epochs: num_epochs,
    optimizer: {
      type: "huggingface_adamw", lr: 1e-5, betas: [0.9, 0.98], eps: 1e-6, weight_decay: 0.01,
      parameter_groups: optimizer.parameter_groups(),
    },
    learning_rate_scheduler: {
      type: "linear_with_warmup",
      warmup_steps: std.floor(0.06 * steps_per_epoch * num_epochs),
    },
    validation_metric: "+f1",
    use_amp: true,
    cuda_device: 0,
  },
}
