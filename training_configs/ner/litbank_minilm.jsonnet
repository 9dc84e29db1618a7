// LitBank nested NER, span_ner with MiniLM on one CPU thread, entity-aware attention ON (LUKE).
// Recipe, split, timing and run command: litbank_minilm.libsonnet. The ablation with ordinary attention over
// [words; entities] is litbank_minilm_plain_attention.jsonnet (identical otherwise).
local litbank = import "litbank_minilm.libsonnet";

litbank.config(entity_aware_attention = true)
