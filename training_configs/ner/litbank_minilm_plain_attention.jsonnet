// LitBank nested NER, span_ner with MiniLM on one CPU thread, entity-aware attention OFF: ordinary attention
// over [words; entities] (LUKE's ablation). Everything else as litbank_minilm.jsonnet (see
// litbank_minilm.libsonnet for the recipe, split, timing and run command).
local litbank = import "litbank_minilm.libsonnet";

litbank.config(entity_aware_attention = false)
