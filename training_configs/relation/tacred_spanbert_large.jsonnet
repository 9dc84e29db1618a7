// SpanBERT-large on TACRED with the paper's recipe (see tacred.libsonnet): entity masks, max_seq_length 128,
// lr 2e-5, batch 32, 10 epochs, linear warm-up over 10 % of the 21,290 steps. Paper: 70.8 test F1.
//
// The encoder cannot be downloaded here (no network). On a machine with network:
//   huggingface-cli download SpanBERT/spanbert-large-cased --local-dir pretrained/spanbert-large-cased
// SpanBERT uses BERT's *cased* vocabulary; if the folder has no vocab.txt, copy bert-large-cased's. The hub copy
// has no tokenizer_config.json, so `do_lower_case: false` is passed explicitly (BertTokenizer would lower-case).
// Another location: override both places that name the encoder, e.g.
//   allennlp train training_configs/relation/tacred_spanbert_large.jsonnet -s runs/tacred_large \
//     -o '{"dataset_reader.model_name": "/models/spanbert-large-cased",
//          "model.encoder.token_embedders.tokens.model_name": "/models/spanbert-large-cased"}'
// TACRED itself is LDC-licensed (LDC2018T24): put the official train/dev/test.json in data_dir or override
// train_data_path / validation_data_path / test_data_path. Needs a GPU (cuda_device 0, mixed precision).
local tacred = import "tacred.libsonnet";

tacred.config(
  transformer = "pretrained/spanbert-large-cased",
  data_dir = "../shared/data/relation/tacred",
  num_train_examples = 68124,
  tokenizer_kwargs = { do_lower_case: false },
  use_amp = true,
)
