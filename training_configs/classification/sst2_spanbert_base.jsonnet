// GLUE single-sentence classification (SST-2) with SpanBERT-base: allennlp's own `text_classification_json`
// reader and `basic_classifier`, a linear layer (after dropout 0.1) over the final [CLS] vector (`cls_pooler`).
//
// Hyperparameters follow SpanBERT's released GLUE fine-tuning command (README, run_glue.py): batch 32,
// 10 epochs, max_seq_length 128, lr 2e-5, Adam with weight decay 0.01 (none on biases / LayerNorm), no bias
// correction, linear warm-up over the first 10 % of the steps then linear decay, gradient clipping at 1.0.
// The learning rate is the one setting worth a small dev sweep (e.g. 1e-5 / 2e-5 / 3e-5 / 5e-5) per task.
//
// Data: GLUE's SST-2 is TSV ("sentence<TAB>label"); convert it once to JSON lines {"text": ..., "label": ...}:
//   python -c "import csv,json,sys; [print(json.dumps({'text': r['sentence'], 'label': r['label']}))
//              for r in csv.DictReader(open(sys.argv[1]), delimiter='\t', quoting=csv.QUOTE_NONE)]" \
//     SST-2/train.tsv > sst2/train.jsonl        (and dev.tsv -> dev.jsonl)
// Encoder: SpanBERT/spanbert-base-cased in a local folder (no network here; the base release has no vocab.txt -
// use bert-base-cased's, as the authors advise). Override both places that name it with -o, e.g.
//   -o '{"dataset_reader.tokenizer.model_name": D, "dataset_reader.token_indexers.tokens.model_name": D,
//        "model.text_field_embedder.token_embedders.tokens.model_name": D}'
// (or the three tokenizer_kwargs the same way).
local optimizer = import "../common/optimizer.libsonnet";
local transformer = "pretrained/spanbert-base-cased";
local tokenizer_kwargs = { do_lower_case: false };  // the hub copy has no tokenizer_config.json
local data_dir = "data/glue/sst2";
local num_train_examples = 67349;
local batch_size = 32;
local num_epochs = 10;
local total_steps = std.ceil(num_train_examples / batch_size) * num_epochs;
{
  dataset_reader: {
    type: "text_classification_json",
    tokenizer: {
      type: "pretrained_transformer", model_name: transformer, max_length: 128, tokenizer_kwargs: tokenizer_kwargs,
    },
    token_indexers: {
      tokens: { type: "pretrained_transformer", model_name: transformer, tokenizer_kwargs: tokenizer_kwargs },
    },
  },
  train_data_path: data_dir + "/train.jsonl",
  validation_data_path: data_dir + "/dev.jsonl",
  model: {
    type: "basic_classifier",
    text_field_embedder: {
      token_embedders: {
        tokens: { type: "pretrained_transformer", model_name: transformer, tokenizer_kwargs: tokenizer_kwargs },
      },
    },
    seq2vec_encoder: { type: "cls_pooler", embedding_dim: 768 },
    dropout: 0.1,
    namespace: "tags",
  },
  data_loader: { batch_size: batch_size, shuffle: true },
  validation_data_loader: { batch_size: 64, shuffle: false },
  trainer: {
    num_epochs: num_epochs,
    optimizer: {
      type: "huggingface_adamw", lr: 2e-5, betas: [0.9, 0.999], eps: 1e-6, weight_decay: 0.01, correct_bias: false,
      parameter_groups: optimizer.no_decay_groups(),
    },
    learning_rate_scheduler: { type: "linear_with_warmup", warmup_steps: std.floor(0.1 * total_steps) },
    grad_norm: 1.0,
    validation_metric: "+accuracy",
    use_amp: true,
    cuda_device: 0,
  },
}
