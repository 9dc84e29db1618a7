// Shared TACRED fine-tuning recipe (SpanBERT, section 4.1; the release's run_tacred.py):
//   input  : entity mask - each mention replaced by one typed marker, "[CLS] [SUBJ-PERSON] was born in
//            [OBJ-CITY] , Michigan [SEP]"; max_seq_length 128 wordpieces (cut around the entities);
//   model  : encoder + dropout 0.1 + linear layer over the final [CLS] vector, cross-entropy over 42 labels
//            (no_relation an ordinary class); model selection on dev F1 (official TACRED scorer);
//   optim  : Adam with BERT's decoupled weight decay 0.01 (none on biases / LayerNorm), no bias correction
//            (BertAdam), lr 2e-5, linear warm-up over the first 10 % of the steps then linear decay to 0,
//            gradient norm clipped at 1.0, batch 32, 10 epochs.
// Arguments: transformer (a local Hugging Face directory), data_dir (holding train/dev/test.json),
// num_train_examples (sets the length of the warm-up), and the few settings the CPU config changes.
local optimizer = import "../common/optimizer.libsonnet";
local relations = import "tacred_relations.libsonnet";

{
  config(transformer, data_dir, num_train_examples, tokenizer_kwargs = {}, batch_size = 32, lr = 2e-5,
           num_epochs = 10, cuda_device = 0, use_amp = false, pooling = "cls"):: {
    local steps_per_epoch = std.ceil(num_train_examples / batch_size),
    dataset_reader: {
      type: "spanbert_tacred",
      model_name: transformer,
      tokenizer_kwargs: tokenizer_kwargs,
      entity_scheme: "entity_mask",
      max_seq_length: 128,
    },
    train_data_path: data_dir + "/train.json",
    validation_data_path: data_dir + "/dev.json",
    test_data_path: data_dir + "/test.json",
    evaluate_on_test: true,
    vocabulary: { type: "from_instances", tokens_to_add: { labels: relations } },
    model: {
      type: "spanbert_relation_classifier",
      encoder: {
        token_embedders: {
          tokens: { type: "entity_marker_aware", model_name: transformer, tokenizer_kwargs: tokenizer_kwargs },
        },
      },
      pooling: pooling,
      dropout: 0.1,
    },
    data_loader: { batch_size: batch_size, shuffle: true },
    validation_data_loader: { batch_size: 32, shuffle: false },
    trainer: {
      num_epochs: num_epochs,
      optimizer: {
        type: "huggingface_adamw", lr: lr, betas: [0.9, 0.999], eps: 1e-6, weight_decay: 0.01, correct_bias: false,
        parameter_groups: optimizer.parameter_groups(),
      },
      learning_rate_scheduler: {
        type: "linear_with_warmup",
        warmup_steps: std.max(1, std.floor(0.1 * steps_per_epoch * num_epochs)),
      },
      grad_norm: 1.0,
      validation_metric: "+f1",
      use_amp: use_amp,
      cuda_device: cuda_device,
    },
  },
}
