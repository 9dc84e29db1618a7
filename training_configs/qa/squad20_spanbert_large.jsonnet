// SpanBERT-large on SQuAD 2.0 (paper Table 1: 88.7 F1 on dev). Recipe and encoder override: spanbert_qa_base.libsonnet.
// Unanswerable questions are trained to point at [CLS]; the model answers "" when
// null score - best span score > model.null_score_threshold. Validation reports the official best_f1 and
// best_f1_thresh (that difference used as the no-answer probability): re-run prediction/evaluation with
//   -o '{"model.null_score_threshold": <best_f1_thresh>}'
// to use the tuned threshold.
local base = import "spanbert_qa_base.libsonnet";
base.config(
  encoder="SpanBERT/spanbert-large-cased",
  reader_type="spanbert_squad",
  train_path="data/squad/train-v2.0.json",
  validation_path="data/squad/dev-v2.0.json",
  num_train_questions=130319,
  null_score_threshold=0.0,
)
