// litbank_minilm.jsonnet with the pair feature of agreement in gender and number: third-person
// pronouns carry their class ("he", "her", "they", ...), every other kept span gets the class an
// agreement head predicts from its span embedding, trained on the pronouns of its gold cluster
// (spanbert_lib/coref/models/agreement.py). Measured beside the default config, with the pronouns
// of passages written for this project outside LitBank: docs/coref.md (commands:
// evidence/coref_litbank_side_by_side.py --systems ours ours_agreement, evidence/coref_pronouns.py).
//   allennlp train training_configs/coref/litbank_minilm_agreement.jsonnet -s runs/litbank_agreement //     --include-package spanbert_lib
local litbank = import "litbank_minilm.jsonnet";
litbank + {
  model+: { use_agreement: true },
}
