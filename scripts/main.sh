#!/usr/bin/env bash
# The main job: a real end-to-end SpanBERT pre-training run on the corpus shipped in
# fixtures/corpus (text written for this project). Creates/updates ./.venv first.
#   1. trains a cased WordPiece vocabulary on the corpus        (allennlp build-wordpiece-vocab)
#   2. prints the statistics of the span masking on that corpus  (allennlp masking-stats)
#   3. pre-trains a tiny SpanBERT with MLM + SBO                  (allennlp train; tensorboard logs)
#   4. exports the encoder as a Hugging Face directory            (allennlp export-encoder)
#   5. prints the loss per epoch and checks it went down
# Environment: CORPUS (file, directory of .txt files or glob; default fixtures/corpus),
# VALIDATION (default fixtures/corpus/miscellany.txt), OUT (default outputs/main_job),
# VOCAB_SIZE (default 3000), EPOCHS (default 6).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
CORPUS=${CORPUS:-fixtures/corpus}
VALIDATION=${VALIDATION:-fixtures/corpus/miscellany.txt}
OUT=${OUT:-outputs/main_job}
VOCAB_SIZE=${VOCAB_SIZE:-3000}
EPOCHS=${EPOCHS:-6}
CONFIG=training_configs/pretraining/spanbert_tiny_cpu.jsonnet
ALLENNLP=.venv/bin/allennlp
rm -rf "$OUT" && mkdir -p "$OUT"
start=$(date +%s)

echo "== 1/5 WordPiece vocabulary from $CORPUS"
$ALLENNLP build-wordpiece-vocab "$CORPUS" "$OUT/vocab" --vocab-size "$VOCAB_SIZE"
OVERRIDES=$(printf '{"dataset_reader.tokenizer": "%s", "model.transformer_model": "%s", "train_data_path": "%s", "validation_data_path": "%s", "trainer.num_epochs": %s}' \
  "$OUT/vocab" "$OUT/vocab" "$CORPUS" "$VALIDATION" "$EPOCHS")

echo "== 2/5 span masking statistics (histogram drawn to $OUT/span_lengths.png)"
$ALLENNLP masking-stats "$CONFIG" "$CORPUS" -o "$OVERRIDES" --plot "$OUT/span_lengths.png" 2>/dev/null

echo "== 3/5 pre-training a tiny SpanBERT (MLM + SBO); tensorboard --logdir $OUT/model/log"
$ALLENNLP train "$CONFIG" -s "$OUT/model" -o "$OVERRIDES" --include-package spanbert_lib 2> "$OUT/train.log" \
  || { tail -40 "$OUT/train.log"; exit 1; }

echo "== 4/5 exporting the encoder"
$ALLENNLP export-encoder "$OUT/model/model.tar.gz" "$OUT/encoder" 2>/dev/null
.venv/bin/python -c "import sys, transformers; m = transformers.AutoModel.from_pretrained(sys.argv[1]); \
print(f'AutoModel.from_pretrained({sys.argv[1]!r}) -> {type(m).__name__}, {sum(p.numel() for p in m.parameters()):,} parameters')" "$OUT/encoder"

echo "== 5/5 loss per epoch"
.venv/bin/python scripts/summarize_pretraining.py "$OUT/model"
echo "main job finished in $(( $(date +%s) - start )) s; outputs in $OUT"
