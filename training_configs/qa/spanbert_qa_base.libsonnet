// Shared recipe of SpanBERT extractive-QA fine-tuning (paper section 4.1 and Appendix B), used by the
// squad11/squad20/mrqa configs of this folder:
//   * input [CLS] passage [SEP] question [SEP], windows of max_seq_length 512 wordpieces, document stride
//     128 = the STEP between the starts of consecutive windows (BERT/SpanBERT run_squad.py semantics; Hugging
//     Face's `stride` is the overlap instead, see spanbert_lib/qa/dataset_readers/windows.py), questions cut
//     to 64 wordpieces; validation decodes over all windows of a question;
//   * AdamW, lr 2e-5, weight decay 0.01 (not on biases and LayerNorm weights), no bias correction (BERTAdam),
//     batch 32 questions (8 x 4 gradient-accumulation steps; at 512 wordpieces nearly every SQuAD question is
//     one window), 4 epochs, linear warmup over the first 10% of the updates then linear decay to 0;
//   * answers of at most 30 wordpieces, 20-best lists.
//
// The encoder: SpanBERT checkpoints cannot be downloaded on this machine. Put the released cased
// SpanBERT-large (Hugging Face format: config.json, pytorch_model.bin or model.safetensors, vocab.txt) in a
// local directory and point BOTH the reader (tokenizer) and the model at it, e.g.
//   allennlp train training_configs/qa/squad11_spanbert_large.jsonnet -s runs/squad11 \
//     -o '{"dataset_reader.model_name": "/models/spanbert-large-cased",
//          "model.encoder.model_name": "/models/spanbert-large-cased",
//          "train_data_path": "/data/squad/train-v1.1.json", "validation_data_path": "/data/squad/dev-v1.1.json"}'
// The released SpanBERT folders have no tokenizer_config.json, so the tokenizer is told it is cased
// (tokenizer_kwargs.do_lower_case false); drop that for an uncased encoder.
local optimizer = import "../common/optimizer.libsonnet";
{
  config(encoder, reader_type, train_path, validation_path, num_train_questions, null_score_threshold=null):: {
    local batch_size = 8,
    local accumulation = 4,
    local num_epochs = 4,
    local updates = std.ceil(num_train_questions / (batch_size * accumulation)) * num_epochs,
    dataset_reader: {
      type: reader_type,
      model_name: encoder,
      tokenizer_kwargs: { do_lower_case: false },
      max_seq_length: 512,
      doc_stride: 128,
      max_query_length: 64,
      question_first: false,
    },
    train_data_path: train_path,
    validation_data_path: validation_path,
    model: {
      type: "spanbert_qa",
      encoder: { model_name: encoder },
      max_answer_length: 30,
      n_best_size: 20,
      null_score_threshold: null_score_threshold,
    },
    data_loader: { batch_size: batch_size, shuffle: true },
    validation_data_loader: { batch_size: 32, shuffle: false },
    trainer: {
      num_epochs: num_epochs,
      num_gradient_accumulation_steps: accumulation,
      optimizer: {
        type: "huggingface_adamw",
        lr: 2e-5,
        weight_decay: 0.01,
        correct_bias: false,
        parameter_groups: optimizer.parameter_groups(),
      },
      learning_rate_scheduler: { type: "linear_with_warmup", warmup_steps: std.floor(0.1 * updates) },
      grad_norm: 1.0,
      validation_metric: "+f1",
      checkpointer: { keep_most_recent_by_count: 1 },
      use_amp: true,
      cuda_device: 0,
    },
  },
}
