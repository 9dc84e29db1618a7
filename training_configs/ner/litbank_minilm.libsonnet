// span_ner on LitBank nested NER (Bamman et al. 2019; PER FAC GPE LOC VEH ORG, nested) with MiniLM-L6-H384
// (uncased) on ONE CPU thread: a small, runnable stand-in for the LUKE recipe (conll2003_spanbert_large.jsonnet),
// sized for about 15 minutes per run, to compare entity-aware attention (litbank_minilm.jsonnet) with
// ordinary attention over [words; entities] (litbank_minilm_plain_attention.jsonnet). Nothing else differs.
//
// Split: the 80 documents sorted by file name, the first 70 train and the next 10 dev (`#files=START:END`
// slices of the reader). Every candidate span of up to 16 words is one [MASK] entity (LUKE), at most 128
// entities per encoder pass; spans may nest (decoding "nested"); no document context; max_seq_length 256 so that
// no LitBank sentence (the longest is 201 wordpieces) is skipped.
//
// What makes it fit: (1) training scores every gold entity span but only `negative_spans` (24) random
// non-entity spans per sentence (span_ner's `negative_spans_per_instance`; evaluation scores ALL spans), (2) one
// epoch of `batches_per_epoch` (300) bucketed batches of 8, i.e. a random 2,400 of the 6,216 training sentences,
// (3) batches bucketed by their number of spans, so a sentence's passes are not padded to a long sentence's.
// Estimate, from timing the objects this config builds (30 training batches incl. optimizer steps, 12 dev
// batches incl. decoding) on the shared 2-core machine, torch 1 thread:
//                          training (300 batches)     dev (290,565 spans)        + reading/model  = one run
//   entity-aware, load 3   0.92 s/batch: 4.6 min      1,335 spans/s: 3.6 min     0.2 min          ~ 9 min
//   entity-aware, load 5   1.79 s/batch: 9.0 min      940 spans/s: 5.2 min       0.4 min          ~ 14.5 min
//     (the load-5 batch time was measured with 32 negatives a sentence; 24 is a little cheaper)
//   plain attention, load 3  0.67 s/batch: 3.4 min    1,800 spans/s: 2.7 min     0.2 min          ~ 6.5 min
// i.e. at most ~15 minutes per run even on a busy machine.
// Run (each run alone, one thread):
//   OMP_NUM_THREADS=1 allennlp train training_configs/ner/litbank_minilm.jsonnet -s runs/litbank_ner_minilm \
//     --include-package spanbert_lib
local optimizer = import "../common/optimizer.libsonnet";
local encoder = "pretrained/all-MiniLM-L6-v2";
local data = "../shared/data/ner/litbank";
local batch_size = 8;
local batches_per_epoch = 300;
local negative_spans = 24;

{
  config(entity_aware_attention):: {
    local reader = {
      type: "spanbert_span_ner_litbank",
      model_name: encoder,
      max_span_width: 16,
      max_seq_length: 256,
      context_window: 0,
    },
    dataset_reader: reader,
    train_data_path: data + "#files=:70",
    validation_data_path: data + "#files=70:80",
    model: {
      type: "spanbert_span_ner",
      encoder: {
        type: "entity_aware_transformer",
        model_name: encoder,
        entity_aware_attention: entity_aware_attention,
      },
      use_entities: true,
      max_entities_per_pass: 128,
      negative_spans_per_instance: negative_spans,
      dropout: 0.1,
      decoding: "nested",
    },
    data_loader: {
      batch_sampler: { type: "bucket", batch_size: batch_size, sorting_keys: ["spans"] },
      batches_per_epoch: batches_per_epoch,
    },
    validation_data_loader: {
      batch_sampler: { type: "bucket", batch_size: 16, sorting_keys: ["spans"], shuffle: false },
    },
    trainer: {
      num_epochs: 1,
      optimizer: {
        type: "huggingface_adamw",
        // the new parameters (classifier, entity embeddings) learn at lr, 10x faster than the pretrained
        // encoder (5e-5); no weight decay on biases and LayerNorm weights
        lr: 5e-4,
        betas: [0.9, 0.98],
        eps: 1e-6,
        weight_decay: 0.01,
        parameter_groups: optimizer.parameter_groups(5e-5, new_encoder_modules=["entity_embeddings"]),
      },
      learning_rate_scheduler: { type: "linear_with_warmup", warmup_steps: std.floor(0.06 * batches_per_epoch) },
      grad_norm: 1.0,
      validation_metric: "+f1",
      cuda_device: -1,
    },
  },
}
