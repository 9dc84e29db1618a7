// SpanBERT-base coreference on OntoNotes 5.0 / CoNLL-2012 English (SpanBERT paper section 4.1,
// Appendix B; Joshi et al. 2019 "BERT for Coreference Resolution", independent segments):
// segments of 384 wordpieces, training documents cut to 3 segments, 20 epochs, one document per
// batch, encoder lr 2e-5, task lr 1e-4, FFNN 3000, max span width 30, 0.4 spans per word,
// 50 antecedents, second-order inference, speaker/genre/segment-distance/distance features.
//
// The SpanBERT checkpoint cannot be downloaded here; with network access the hub id below
// works, otherwise point all three `model_name`s at a local directory:
//   allennlp train training_configs/coref/spanbert_base.jsonnet -s runs/coref_base \
//     --include-package spanbert_lib -o '{
//       "dataset_reader.token_indexers.tokens.model_name": "/models/spanbert-base-cased",
//       "validation_dataset_reader.token_indexers.tokens.model_name": "/models/spanbert-base-cased",
//       "model.encoder.token_embedders.tokens.model_name": "/models/spanbert-base-cased",
//       "train_data_path": "/data/conll-2012/train.english.v4_gold_conll",
//       "validation_data_path": "/data/conll-2012/dev.english.v4_gold_conll"}'
// Predictions for the official scorer: python -m spanbert_lib.coref.predictors.conll_predictions
//   runs/coref_base/model.tar.gz test.english.v4_gold_conll test.predicted.conll
local lib = import "spanbert_coref.libsonnet";
local encoder = "SpanBERT/spanbert-base-cased";
local max_segment_len = 384;
local max_training_segments = 3;
local max_span_width = 30;
local num_epochs = 20;
local num_training_documents = 2802;  // CoNLL-2012 English train
{
  dataset_reader: lib.reader(encoder, max_segment_len, max_span_width, max_training_segments),
  validation_dataset_reader: lib.reader(encoder, max_segment_len, max_span_width),
  train_data_path: "data/conll-2012/train.english.v4_gold_conll",
  validation_data_path: "data/conll-2012/dev.english.v4_gold_conll",
  model: {
    type: "spanbert_coref",
    encoder: lib.embedder(encoder),
    max_span_width: max_span_width,
    feature_size: 20,
    ffnn_size: 3000,
    ffnn_depth: 1,
    dropout: 0.3,
    top_span_ratio: 0.4,
    max_top_antecedents: 50,
    coref_depth: 2,
    use_speaker: true,
    use_genre: true,
    num_genres: 8,  // the reader's OntoNotes genres + unknown
    use_segment_distance: true,
    num_segment_distances: max_training_segments,
    use_distance: true,
  },
  data_loader: { batch_size: 1, shuffle: true },
  validation_data_loader: { batch_size: 1, shuffle: false },
  trainer: {
    num_epochs: num_epochs,
    optimizer: lib.optimizer(2e-5, 1e-4),
    learning_rate_scheduler: lib.scheduler(num_training_documents, num_epochs),
    grad_norm: 1.0,
    validation_metric: "+conll_f1",
    cuda_device: 0,
  },
}
