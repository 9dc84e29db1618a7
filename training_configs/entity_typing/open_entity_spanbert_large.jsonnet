// entity_typing on Open Entity (Choi et al. 2018; the 9 general types, LUKE/ERNIE's preprocessed
// train/dev/test.json with character offsets) with SpanBERT-large and entity-aware attention, following LUKE's
// entity typing fine-tuning (Yamada et al. 2020, sec. 4.1 and appendix):
//   input  : the sentence, one [MASK] entity whose mention is the typed span;
//   model  : the entity's final state -> dropout 0.1 -> linear over the 9 types; binary cross-entropy per
//            type; a type is predicted when its logit > 0; loose micro P/R/F1 (model selection on dev F1);
//   optim  : AdamW lr 1e-5, betas (0.9, 0.98), eps 1e-6, weight decay 0.01 (none on biases / LayerNorm),
//            linear warm-up over the first 6 % of the steps then linear decay, batch 4, 2 epochs.
// Data (not in this repository): place train.json / dev.json / test.json under data/open_entity/ or override
// the paths with -o. The encoder: pretrained/spanbert-large-cased (see
// training_configs/relation/tacred_spanbert_large.jsonnet). Needs a GPU (cuda_device 0, mixed precision).
//   allennlp train training_configs/entity_typing/open_entity_spanbert_large.jsonnet -s runs/open_entity_large \
//     --include-package spanbert_lib
local optimizer = import "../common/optimizer.libsonnet";
local encoder = "pretrained/spanbert-large-cased";
local tokenizer_kwargs = { do_lower_case: false };
local num_train_examples = 1998;
local batch_size = 4;
local num_epochs = 2;
local steps_per_epoch = std.ceil(num_train_examples / batch_size);
{
  dataset_reader: {
    type: "spanbert_open_entity",
    model_name: encoder,
    tokenizer_kwargs: tokenizer_kwargs,
    max_seq_length: 256,
  },
  train_data_path: "data/open_entity/train.json",
  validation_data_path: "data/open_entity/dev.json",
  test_data_path: "data/open_entity/test.json",
  evaluate_on_test: true,
  // every type gets an id even if a split lacks it
  vocabulary: {
    type: "from_instances",
    tokens_to_add: { labels: ["entity", "event", "group", "location", "object", "organization", "person", "place",
                              "time"] },
  },
  model: {
    type: "spanbert_entity_typing",
    encoder: { type: "entity_aware_transformer", model_name: encoder, entity_aware_attention: true },
    use_entities: true,
    dropout: 0.1,
    threshold: 0.0,
  },
  data_loader: { batch_size: batch_size, shuffle: true },
  validation_data_loader: { batch_size: 32, shuffle: false },
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
