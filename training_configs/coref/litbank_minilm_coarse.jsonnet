// litbank_minilm.jsonnet with one antecedent score: the coarse score alone (mention scores +
// bilinear term + distance prior, as fastcoref's F-coref scores pairs), one round, no pair FFNN.
// What it trades: the per-pair FFNN and the higher-order refinement, for inference that skips the
// k * 50 products through that FFNN (at 8,000 words the second-largest cost after the encoder;
// benchmarks/coref_inference.py). Measured beside the default config: docs/coref.md (command:
// evidence/coref_litbank_side_by_side.py --systems ours ours_coarse).
//   allennlp train training_configs/coref/litbank_minilm_coarse.jsonnet -s runs/litbank_coarse //     --include-package spanbert_lib
local litbank = import "litbank_minilm.jsonnet";
litbank + {
  model+: { fine_scoring: false, coref_depth: 1 },
}
