// A CPU-sized SQuAD 1.1 run with the local MiniLM-L6-H384 encoder (pretrained/all-MiniLM-L6-v2, UNCASED: its
// tokenizer lowercases and strips accents, the answers are still cut from the original-case passage through
// the character offsets). Data: the 24-article SQuAD 1.1 dev part in ../shared/data, never copied: the first
// 18 articles train, the last 6 validate (the reader's "#articles=START:END" path suffix). That file was
// rebuilt with answer_start = the FIRST occurrence of each answer text, hence approximate_answer_starts.
// 3,749 training questions, one epoch. CPU speed-ups: eager attention (PyTorch's CPU SDPA with a padding
// mask and attention dropout takes a slow path) and batches of similar passage lengths: the max-tokens sampler
// sorts by len(context_offsets) = passage wordpieces and caps their sum per batch (about 15 questions; it also
// caps memory: a batch of long multi-window passages is fewer questions). On a busy 2-core machine use one thread:
//   OMP_NUM_THREADS=1 allennlp train training_configs/qa/squad11_minilm.jsonnet -s runs/squad11_minilm
// Result of that command (one thread on a shared, loaded 2-core machine): EM 14.7 / F1 22.0 on the 1,058
// questions of articles 18-23, 24.5 min wall clock (21.4 min of CPU), peak memory 7.9 GB. A small sentence-
// embedding encoder and 3.7k questions for one epoch: a plumbing check, far from the paper's numbers.
local optimizer = import "../common/optimizer.libsonnet";
local encoder = "pretrained/all-MiniLM-L6-v2";
local data = "../shared/data/qa/squad11_dev_part1.json";
local max_passage_wordpieces_per_batch = 3000;
local num_epochs = 1;
local updates = 252 * num_epochs;  // batches per epoch with the setting above
{
  dataset_reader: {
    type: "spanbert_squad",
    model_name: encoder,
    max_seq_length: 384,
    doc_stride: 128,
    max_query_length: 64,
    approximate_answer_starts: true,
  },
  train_data_path: data + "#articles=:18",
  validation_data_path: data + "#articles=18:",
  model: {
    type: "spanbert_qa",
    encoder: { model_name: encoder, from_pretrained_kwargs: { attn_implementation: "eager" } },
    max_answer_length: 30,
    n_best_size: 20,
  },
  data_loader: {
    batch_sampler: {
      type: "max_tokens_sampler",
      max_tokens: max_passage_wordpieces_per_batch,
      sorting_keys: ["context_offsets"],
    },
  },
  validation_data_loader: { batch_size: 32, shuffle: false },
  trainer: {
    num_epochs: num_epochs,
    optimizer: {
      type: "huggingface_adamw",
      lr: 1e-4,
      weight_decay: 0.01,
      parameter_groups: optimizer.parameter_groups(),
    },
    learning_rate_scheduler: { type: "linear_with_warmup", warmup_steps: std.floor(0.1 * updates) },
    grad_norm: 1.0,
    validation_metric: "+f1",
    checkpointer: { keep_most_recent_by_count: 1 },
    cuda_device: -1,
  },
}
