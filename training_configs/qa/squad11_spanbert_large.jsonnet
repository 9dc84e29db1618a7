// SpanBERT-large on SQuAD 1.1 (paper Table 1: 94.6 F1 on dev). Recipe and encoder override: spanbert_qa_base.libsonnet.
// The SQuAD files are not on this machine: override train_data_path / validation_data_path.
// Official scores of the saved model: see spanbert_lib/qa/predictors/spanbert_qa.py (allennlp predict + squad-eval).
local base = import "spanbert_qa_base.libsonnet";
base.config(
  encoder="SpanBERT/spanbert-large-cased",
  reader_type="spanbert_squad",
  train_path="data/squad/train-v1.1.json",
  validation_path="data/squad/dev-v1.1.json",
  num_train_questions=87599,
)
