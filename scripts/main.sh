#!/usr/bin/env bash
# The main job: creates/updates ./.venv (scripts/bootstrap.sh), then runs a real end-to-end
# `allennlp train` + `evaluate` + `predict` on fixture data through the spanbert_lib plugin.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
OUT=${OUT:-outputs/main_job}
rm -rf "$OUT"
.venv/bin/allennlp train fixtures/configs/tiny_classifier.jsonnet -s "$OUT/model" --include-package spanbert_lib
.venv/bin/allennlp evaluate "$OUT/model/model.tar.gz" fixtures/classification/dev.jsonl --include-package spanbert_lib
.venv/bin/allennlp predict "$OUT/model/model.tar.gz" fixtures/classification/predict.jsonl --predictor text_classifier \
  --output-file "$OUT/predictions.jsonl" --silent --include-package spanbert_lib
echo "predictions written to $OUT/predictions.jsonl"
