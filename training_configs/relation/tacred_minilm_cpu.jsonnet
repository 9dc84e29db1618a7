// The TACRED recipe (tacred.libsonnet) on the 20-example TACRED sample with the one real encoder installable
// here, MiniLM-L6-H384 (uncased, pretrained/all-MiniLM-L6-v2), on the CPU. Changes from the paper: batch 8
// (20 examples) and lr 5e-5 so that the 30 updates move the model at all. A smoke run of the full pipeline,
// not a result: 20 training examples, 18 of them no_relation.
//   allennlp train training_configs/relation/tacred_minilm_cpu.jsonnet -s runs/tacred_minilm
local tacred = import "tacred.libsonnet";

tacred.config(
  transformer = "pretrained/all-MiniLM-L6-v2",
  data_dir = "../shared/data/relation/tacred_sample",
  num_train_examples = 20,
  batch_size = 8,
  lr = 5e-5,
  cuda_device = -1,
)
