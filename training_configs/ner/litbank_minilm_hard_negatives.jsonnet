// LitBank nested NER as litbank_minilm.jsonnet (entity-aware attention; recipe, split and run command in
// litbank_minilm.libsonnet) with the same 24 non-entity spans a training sentence, half of them hard: 12 that
// overlap a gold entity (a boundary a word off, part of a name, a name with its neighbour) and 12 random others.
// The same cost per step; compared with the shipped config by evidence/ner_litbank_side_by_side.py.
local litbank = import "litbank_minilm.libsonnet";

litbank.config(entity_aware_attention = true) + {
  model+: { negative_spans_per_instance: 12, hard_negative_spans_per_instance: 12 },
}
