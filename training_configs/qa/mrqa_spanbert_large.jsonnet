// SpanBERT-large on one MRQA 2019 dataset (paper Table 2; one model per dataset). Recipe and encoder override:
// spanbert_qa_base.libsonnet. MRQA files are JSON lines (.jsonl or .jsonl.gz, header line first); override
// the data paths, and num_train_questions below (it sets the 10% warmup) for another dataset:
// SQuAD 86,588 (default), NewsQA 74,160, TriviaQA 61,688, SearchQA 117,384, HotpotQA 72,928,
// NaturalQuestions 104,071 training questions - or override trainer.learning_rate_scheduler.warmup_steps.
local base = import "spanbert_qa_base.libsonnet";
local num_train_questions = 86588;
base.config(
  encoder="SpanBERT/spanbert-large-cased",
  reader_type="spanbert_mrqa",
  train_path="data/mrqa/SQuAD.jsonl.gz",
  validation_path="data/mrqa/SQuAD-dev.jsonl.gz",
  num_train_questions=num_train_questions,
)
