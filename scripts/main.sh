#!/usr/bin/env bash
# The main job: a real end-to-end SpanBERT pre-training run that shows the model learning, on the
# corpus shipped in fixtures/corpus (text written for this project). Creates/updates ./.venv first.
#   1. trains a cased WordPiece vocabulary on the training text       (allennlp build-wordpiece-vocab)
#   2. prints the span masking statistics and block fill rate          (allennlp masking-stats)
#   3. pre-trains a tiny SpanBERT with MLM + SBO for a fixed number    (allennlp train; tensorboard logs)
#      of steps, validating on the held-out text every 100 steps
#   4. exports the encoder as a Hugging Face directory                 (allennlp export-encoder)
#   5. held-out MLM / SBO accuracy with fixed masks against the unigram baseline, training curves
#      (OUT/training_curves.png), fill-ins of masked spans, OUT/summary.json (scripts/main_job_report.py)
# Environment:
#   CORPUS    file, directory of .txt files, glob or comma list (default fixtures/corpus)
#   HELDOUT   held-out file, left out of training when it is part of CORPUS
#             (default fixtures/corpus/encyclopedia_tarrowby.txt; for another CORPUS its smallest file)
#   DOCUMENTS "blank_line" (documents separated by blank lines: the fixture corpus's convention) or
#             "file" (one document per file, blank lines are paragraphs: books); default blank_line
#             for fixtures/corpus, file for any other CORPUS
#   VOCAB_SIZE (default 1000), STEPS (optimizer steps, a multiple of 100; default 1600), OUT (default outputs/main_job)
set -euo pipefail
start=$(date +%s.%N)
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
# One torch thread: the tiny model's matrices are too small to gain much from a second one, and
# spinning OpenMP threads slow it down several times over on a shared machine.
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
DEFAULT_CORPUS=fixtures/corpus
CORPUS=${CORPUS:-$DEFAULT_CORPUS}
if [ "$CORPUS" = "$DEFAULT_CORPUS" ]; then
  HELDOUT=${HELDOUT:-fixtures/corpus/encyclopedia_tarrowby.txt}
  DOCUMENTS=${DOCUMENTS:-blank_line}
else
  DOCUMENTS=${DOCUMENTS:-file}
fi
OUT=${OUT:-outputs/main_job}
VOCAB_SIZE=${VOCAB_SIZE:-1000}
STEPS=${STEPS:-1600}
CONFIG=training_configs/pretraining/spanbert_tiny_cpu.jsonnet
ALLENNLP=.venv/bin/allennlp
rm -rf "$OUT" && mkdir -p "$OUT"

# The training files: every file of CORPUS except the held-out one, as a comma list.
IFS=$'\t' read -r HELDOUT TRAIN < <(.venv/bin/python - "$CORPUS" "${HELDOUT:-}" <<'EOF'
import sys
from spanbert_lib.pretraining.dataset_readers.corpus_files import expand_text_paths
files = expand_text_paths(sys.argv[1])
heldout = sys.argv[2] or str(min(files, key=lambda f: f.stat().st_size))  # the smallest: least training text lost
train = [str(f) for f in files if f.resolve() != expand_text_paths(heldout)[0].resolve()]
if not train:
    sys.exit(f"error: {sys.argv[1]}: no training file left once {heldout} is held out")
print(heldout, ",".join(train), sep="\t")
EOF
)
echo "training text: $TRAIN"
echo "held-out text: $HELDOUT (not trained on); documents: $DOCUMENTS"
OVERRIDES=$(printf '{"dataset_reader.model_name": "%s", "validation_dataset_reader.model_name": "%s", "model.encoder.model_name": "%s", "dataset_reader.document_separator": "%s", "validation_dataset_reader.document_separator": "%s", "train_data_path": "%s", "validation_data_path": "%s", "trainer.num_epochs": %d}' \
  "$OUT/vocab" "$OUT/vocab" "$OUT/vocab" "$DOCUMENTS" "$DOCUMENTS" "$TRAIN" "$HELDOUT" "$(( STEPS / 100 ))")

echo "== 1/5 WordPiece vocabulary from the training text"
$ALLENNLP build-wordpiece-vocab "$TRAIN" "$OUT/vocab" --vocab-size "$VOCAB_SIZE"

echo "== 2/5 span masking statistics (histogram drawn to $OUT/span_lengths.png)"
$ALLENNLP masking-stats "$CONFIG" "$TRAIN" -o "$OVERRIDES" --max-blocks 5000 --plot "$OUT/span_lengths.png" 2>/dev/null

echo "== 3/5 pre-training a tiny SpanBERT (MLM + SBO), $STEPS steps; tensorboard --logdir $OUT/model/log"
$ALLENNLP train "$CONFIG" -s "$OUT/model" -o "$OVERRIDES" --include-package spanbert_lib 2> "$OUT/train.log" \
  || { tail -40 "$OUT/train.log"; exit 1; }

echo "== 4/5 exporting the encoder"
$ALLENNLP export-encoder "$OUT/model/model.tar.gz" "$OUT/encoder" 2>/dev/null
.venv/bin/python -c "import sys, transformers; m = transformers.AutoModel.from_pretrained(sys.argv[1]); \
print(f'AutoModel.from_pretrained({sys.argv[1]!r}) -> {type(m).__name__}, {sum(p.numel() for p in m.parameters()):,} parameters')" "$OUT/encoder"

echo "== 5/5 held-out evaluation against the unigram baseline"
# CPU seconds of this job so far (user + system of the finished child processes), from bash's `times`
# (run in this shell, not in a $(...) subshell, which would count only its own children).
times > "$OUT/times.txt"
cpu=$(tail -1 "$OUT/times.txt" | awk '{ n = 0; for (i = 1; i <= NF; i++) { split($i, t, "m"); n += t[1] * 60 + t[2] } print n }')
.venv/bin/python scripts/main_job_report.py "$OUT/model" --train "$TRAIN" --heldout "$HELDOUT" --out "$OUT" \
  --job-start "$start" --job-cpu-seconds "$cpu" 2> "$OUT/report.log" || { tail -20 "$OUT/report.log"; exit 1; }
