// spanbert_coref on LitBank (Bamman et al. 2020) with MiniLM-L6-H384 (uncased) on a CPU: a
// small, runnable stand-in for the SpanBERT coreference recipe (training_configs/coref/
// spanbert_base.jsonnet) - same model and optimisation scheme, smaller sizes (segments of 256
// wordpieces, training windows of 2 segments, FFNN 300, 6 epochs). Measured figures, beside
// allennlp-models, fastcoref and Maverick trained the same way: docs/coref.md (command:
// evidence/coref_litbank_side_by_side.py).
//   allennlp train training_configs/coref/litbank_minilm.jsonnet -s runs/litbank_minilm //     --include-package spanbert_lib
// Split: the 80 documents sorted by file name, the first 70 train and the next 10 dev
// (`#files=START:END` slices, see spanbert_lib/common/data_files.py). LitBank has no speakers or
// genres, so those features are off. LitBank annotates singletons (mentions that corefer with
// nothing): `singletons: true` trains the mention scores with a mention loss and predicts them
// as clusters of one mention (OntoNotes configs leave it off, as in Lee et al.).
// `min_mention_score: 0.0`: prediction keeps only the spans whose mention probability is above 0.5
// (the singleton threshold; not tuned), at most 0.4 per word, so that antecedent scoring follows the
// number of mentions instead of the document's length (Maverick's way; docs/coref.md).
local lib = import "spanbert_coref.libsonnet";
local encoder = "pretrained/all-MiniLM-L6-v2";
local max_segment_len = 256;
local max_training_segments = 2;
local max_span_width = 30;
local num_epochs = 6;
local num_training_documents = 70;
{
  dataset_reader: lib.reader(encoder, max_segment_len, max_span_width, max_training_segments),
  validation_dataset_reader: lib.reader(encoder, max_segment_len, max_span_width),
  train_data_path: "../shared/data/coref/litbank#files=:70",
  validation_data_path: "../shared/data/coref/litbank#files=70:80",
  model: {
    type: "spanbert_coref",
    encoder: lib.embedder(encoder),
    max_span_width: max_span_width,
    feature_size: 20,
    ffnn_size: 300,
    ffnn_depth: 1,
    dropout: 0.3,
    top_span_ratio: 0.4,
    max_top_antecedents: 50,
    coref_depth: 2,
    use_speaker: false,
    use_genre: false,
    use_segment_distance: true,
    num_segment_distances: max_training_segments,
    use_distance: true,
    singletons: true,
    min_mention_score: 0.0,
  },
  data_loader: { batch_size: 1, shuffle: true },
  validation_data_loader: { batch_size: 1, shuffle: false },
  trainer: {
    num_epochs: num_epochs,
    optimizer: lib.optimizer(5e-5, 3e-4),
    learning_rate_scheduler: lib.scheduler(num_training_documents, num_epochs),
    grad_norm: 1.0,
    validation_metric: "+conll_f1",
    cuda_device: -1,
  },
}
