// SpanBERT-large pre-training: as spanbert_base.jsonnet (read its header for the recipe and
// the overrides), with BERT-large dimensions (24 layers, 1024 hidden, 16 heads, 4096 FFN).
local base = import "spanbert_base.jsonnet";
local per_device_batch = 16;
base + {
  model+: {
    encoder+: {
      config+: { hidden_size: 1024, num_hidden_layers: 24, num_attention_heads: 16, intermediate_size: 4096 },
    },
  },
  data_loader+: { batch_size: per_device_batch },
  validation_data_loader+: { batch_size: per_device_batch },
  trainer+: { num_gradient_accumulation_steps: 16 },  // 16 x 16 = 256 sequences per update on one device
}
