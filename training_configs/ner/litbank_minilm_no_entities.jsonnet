// LitBank nested NER, span_ner with MiniLM on one CPU thread, WITHOUT entity tokens: a span is [x_first; x_last]
// of the encoder's word states (use_entities false, one encoder pass per sentence) - the computation allennlp's own
// pieces give (enumerate_spans + EndpointSpanExtractor "x,y" + a linear layer; benchmarks/span_ner_throughput.py
// checks the logits agree). Everything else as litbank_minilm.jsonnet (litbank_minilm.libsonnet: recipe, split,
// run command); compared with it, ordinary attention and SpanMarker by evidence/ner_litbank_side_by_side.py.
local litbank = import "litbank_minilm.libsonnet";

litbank.config(entity_aware_attention = false) + {
  model+: { use_entities: false },
}
