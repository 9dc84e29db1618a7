// span_ner on CoNLL-2003 English (flat NER: PER ORG LOC MISC) with SpanBERT-large and entity-aware attention,
// following LUKE's NER fine-tuning (Yamada et al. 2020, sec. 4.3 and appendix):
//   input  : each sentence with as much of its document around it as fits into 512 wordpieces
//            (context_window "fill"); every span of up to 16 words is a candidate and one [MASK] entity;
//   model  : [first word; last word; entity] of each span -> dropout 0.1 -> linear over the labels + "O";
//            cross-entropy over all candidate spans; flat decoding (greedy by probability, no overlaps);
//   optim  : AdamW lr 1e-5, betas (0.9, 0.98), eps 1e-6, weight decay 0.01 (none on biases / LayerNorm),
//            linear warm-up over the first 6 % of the steps then linear decay, gradient norm clipped at 5,
//            batch 8 (2 sentences x 4 accumulation steps), 5 epochs; model selection on dev F1.
// LUKE starts from its own pre-trained entity embeddings; SpanBERT has none, so the [MASK] entity embedding
// and the three extra query matrices per layer start from scratch / from the word query (see
// spanbert_lib/common/modules/entity_aware).
//
// Data (not in this repository; CoNLL-2003 needs the Reuters corpus licence): the usual eng.train / eng.testa /
// eng.testb files in the 4-column CoNLL format, placed under data/conll2003/ or overridden, e.g.
//   allennlp train training_configs/ner/conll2003_spanbert_large.jsonnet -s runs/conll2003_large \
//     --include-package spanbert_lib -o '{"train_data_path": "/data/conll2003/eng.train", ...}'
// The encoder: pretrained/spanbert-large-cased (see training_configs/relation/tacred_spanbert_large.jsonnet
// for how to fetch it; cased vocabulary, so do_lower_case false). Needs a GPU (cuda_device 0, mixed precision).
local optimizer = import "../common/optimizer.libsonnet";
local encoder = "pretrained/spanbert-large-cased";
local tokenizer_kwargs = { do_lower_case: false };
local num_train_sentences = 14041;
local batch_size = 2;
local accumulation = 4;
local num_epochs = 5;
local steps_per_epoch = std.ceil(num_train_sentences / batch_size / accumulation);
{
  dataset_reader: {
    type: "spanbert_span_ner_conll",
    model_name: encoder,
    tokenizer_kwargs: tokenizer_kwargs,
    max_span_width: 16,
    max_seq_length: 512,
    context_window: "fill",
  },
  train_data_path: "data/conll2003/eng.train",
  validation_data_path: "data/conll2003/eng.testa",
  test_data_path: "data/conll2003/eng.testb",
  evaluate_on_test: true,
  model: {
    type: "spanbert_span_ner",
    encoder: { type: "entity_aware_transformer", model_name: encoder, entity_aware_attention: true },
    use_entities: true,
    max_entities_per_pass: 128,
    dropout: 0.1,
    decoding: "flat",
  },
  data_loader: { batch_sampler: { type: "bucket", batch_size: batch_size, sorting_keys: ["spans"] } },
  validation_data_loader: { batch_sampler: { type: "bucket", batch_size: 8, sorting_keys: ["spans"], shuffle: false } },
  trainer: {
    num_epochs: num_epochs,
    num_gradient_accumulation_steps: accumulation,
    optimizer: {
      type: "huggingface_adamw", lr: 1e-5, betas: [0.9, 0.98], eps: 1e-6, weight_decay: 0.01,
      parameter_groups: optimizer.parameter_groups(),
    },
    learning_rate_scheduler: {
      type: "linear_with_warmup",
      warmup_steps: std.floor(0.06 * steps_per_epoch * num_epochs),
    },
    grad_norm: 5.0,
    validation_metric: "+f1",
    use_amp: true,
    cuda_device: 0,
  },
}
