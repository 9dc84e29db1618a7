#!/usr/bin/env bash
# Interactive demos in one command: creates ./.venv when needed, starts `allennlp serve` at once
# (the span-masking view works immediately) and, in the background, trains small CPU models on
# the real data beside the checkout, one after another:
#
#   coref     spanbert_coref on LitBank (70 documents train, 10 dev), MiniLM, 3 epochs
#   qa        spanbert_qa on 8 articles of the SQuAD 1.1 dev part (2 other articles validate), MiniLM
#   ner       span_ner, nested LitBank entities, MiniLM with entity-aware attention
#   relation  spanbert_relation_classifier on SemEval-2010 Task 8 (5,600 train / 800 dev), MiniLM
#
# each in about 7-15 minutes on 2 CPU cores. The page shows a training model's progress (epoch,
# loss, time left) until its model.tar.gz is written, then its view. Models already trained under
# outputs/demo/ are reused; a training that was interrupted is started again.
#
#   bash scripts/demo.sh                 # http://127.0.0.1:8000/
#   PORT=8080 bash scripts/demo.sh       # HOST=0.0.0.0 to serve beyond this machine
#   DEMO_SMOKE=1 bash scripts/demo.sh    # tiny fixture models in seconds (checks the wiring, not a demo)
#
#   SPANBERT_LIB_EXTERNAL_DATA=/path/to/data  the data folder (default ../shared/data)
#   DEMO_DIR=outputs/demo                     where the models are trained
#   DEMO_THREADS=1                            torch threads per training (the server keeps a core)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONWARNINGS=ignore

DATA=${SPANBERT_LIB_EXTERNAL_DATA:-../shared/data}
DEMO=${DEMO_DIR:-outputs/demo}
HOST=${HOST:-127.0.0.1}
PORT=${PORT:-8000}
THREADS=${DEMO_THREADS:-1}
mkdir -p "$DEMO/logs"

# name|config|overrides (JSON)
if [ "${DEMO_SMOKE:-0}" = 1 ]; then
  DEMO="$DEMO/smoke"
  mkdir -p "$DEMO/logs"
  MODELS=(
    "coref|fixtures/configs/coref/spanbert_coref_tiny.jsonnet|{\"trainer.num_epochs\": 2}"
    "qa|fixtures/configs/qa/squad20_tiny.jsonnet|{\"trainer.num_epochs\": 2}"
    "ner|fixtures/configs/ner/span_ner_tiny.jsonnet|{\"dataset_reader.type\": \"spanbert_span_ner_litbank\", \"train_data_path\": \"fixtures/ner/litbank\", \"validation_data_path\": \"fixtures/ner/litbank\", \"model.decoding\": \"nested\", \"trainer.num_epochs\": 2}"
    "relation|fixtures/configs/relation/tiny_relation_classifier.jsonnet|{\"trainer.num_epochs\": 2}"
  )
else
  for required in coref/litbank qa/squad11_dev_part1.json ner/litbank relation/semeval2010_task8/train.txt; do
    if [ ! -e "$DATA/$required" ]; then
      echo "[demo] $DATA/$required is missing: set SPANBERT_LIB_EXTERNAL_DATA to the data folder (see README)" >&2
      exit 1
    fi
  done
  MODELS=(
    "coref|training_configs/coref/litbank_minilm.jsonnet|{\"train_data_path\": \"$DATA/coref/litbank#files=:70\", \"validation_data_path\": \"$DATA/coref/litbank#files=70:80\", \"trainer.num_epochs\": 3, \"trainer.learning_rate_scheduler.warmup_steps\": 21}"
    "qa|training_configs/qa/squad11_minilm.jsonnet|{\"train_data_path\": \"$DATA/qa/squad11_dev_part1.json#articles=:8\", \"validation_data_path\": \"$DATA/qa/squad11_dev_part1.json#articles=18:20\", \"trainer.learning_rate_scheduler.warmup_steps\": 11}"
    "ner|training_configs/ner/litbank_minilm.jsonnet|{\"train_data_path\": \"$DATA/ner/litbank#files=:70\", \"validation_data_path\": \"$DATA/ner/litbank#files=70:80\"}"
    "relation|training_configs/relation/semeval2010_minilm_cpu.jsonnet|{\"train_data_path\": \"$DATA/relation/semeval2010_task8/train.txt#ids=1-5600\", \"validation_data_path\": \"$DATA/relation/semeval2010_task8/train.txt#ids=5601-6400\"}"
  )
fi

train_all() {
  for entry in "${MODELS[@]}"; do
    IFS='|' read -r name config overrides <<<"$entry"
    run="$DEMO/$name"
    if [ -f "$run/model.tar.gz" ]; then
      echo "[demo] $name: reusing $run/model.tar.gz"
      continue
    fi
    if [ -n "$(ls -A "$run" 2>/dev/null)" ]; then
      echo "[demo] $name: $run holds an interrupted training; starting it again"
      rm -rf "$run"
    fi
    echo "[demo] $name: training ($config), log $DEMO/logs/$name.log"
    started=$(date +%s)
    OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS nice -n 5 .venv/bin/allennlp train "$config" -s "$run" \
      -o "$overrides" >"$DEMO/logs/$name.log" 2>&1 &
    echo $! >"$DEMO/.training.pid"
    if wait $!; then
      echo "[demo] $name: trained in $(( $(date +%s) - started )) s"
    else
      echo "[demo] $name: training failed, see $DEMO/logs/$name.log"
    fi
    rm -f "$DEMO/.training.pid"
  done
}

# `allennlp serve` watches a training only in a directory that exists (an empty one: not started yet)
for entry in "${MODELS[@]}"; do
  IFS='|' read -r name _ _ <<<"$entry"
  mkdir -p "$DEMO/$name"
done
train_all >"$DEMO/logs/demo.log" 2>&1 &
trainer=$!
stop_training() {
  kill "$trainer" 2>/dev/null || true
  if [ -f "$DEMO/.training.pid" ]; then
    kill "$(cat "$DEMO/.training.pid")" 2>/dev/null || true
    rm -f "$DEMO/.training.pid"
  fi
}
trap stop_training EXIT

display_host=$HOST
[ "$HOST" = 0.0.0.0 ] && display_host=127.0.0.1
echo "[demo] http://$display_host:$PORT/  (models train in the background: $DEMO/logs/demo.log; Ctrl-C stops everything)"
serve_args=()
for entry in "${MODELS[@]}"; do
  IFS='|' read -r name _ _ <<<"$entry"
  serve_args+=("--model=$name=$DEMO/$name")
done
.venv/bin/allennlp serve "${serve_args[@]}" --host "$HOST" --port "$PORT"
