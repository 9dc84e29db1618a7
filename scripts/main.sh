#!/usr/bin/env bash
# The main job: continue pre-training the real pretrained encoder (MiniLM-L6-H384 uncased,
# pretrained/all-MiniLM-L6-v2) with SpanBERT's MLM and SBO heads on your own text (default: the corpus
# shipped in fixtures/corpus, written for this project), show what adapting the encoder bought over
# heads trained on the frozen encoder, and reuse the adapted encoder and SBO head downstream.
# Creates/updates ./.venv first, then runs python -m evidence.main_job (one progress bar; details in OUT/job.log):
#   1. span masking statistics of the training text                   (OUT/span_lengths.png)
#   2. MLM + SBO heads trained on the FROZEN encoder                   (allennlp train, OUT/frozen)
#   3. the same with the encoder ADAPTED end to end                    (allennlp train, OUT/model)
#   4. held-out MLM / SBO accuracy of both, same fixed masks, against  (evidence/main_job_report.py,
#      the unigram baseline; fill-ins in whole words; training curves  OUT/training_curves.png)
#   5. exports the adapted encoder and the SBO head                    (allennlp export-encoder, OUT/encoder)
#   6. span NER with both (pretrained_span_boundary), trained and      (OUT/ner)
#      evaluated on the LitBank-format fixture; OUT/summary.json
# Environment:
#   CORPUS    file, directory of .txt files, glob or comma list (default fixtures/corpus)
#   HELDOUT   held-out file, left out of training when it is part of CORPUS
#             (default fixtures/corpus/encyclopedia_tarrowby.txt; for another CORPUS its smallest file)
#   DOCUMENTS "blank_line" (documents separated by blank lines: the fixture corpus's convention) or
#             "file" (one document per file, blank lines are paragraphs: books); default blank_line
#             for fixtures/corpus, file for any other CORPUS
#   STEPS     optimizer steps of each pre-training run, a multiple of 10 (default 240)
#   OUT       default outputs/main_job (emptied first; refused when it holds an input of the job)
#   OMP_NUM_THREADS  torch threads (default: the machine's cores, at most 2)
set -euo pipefail
start=$(date +%s.%N)
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
cores=$(nproc)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(( cores < 2 ? cores : 2 ))}
args=(--corpus "${CORPUS:-fixtures/corpus}" --steps "${STEPS:-240}" --out "${OUT:-outputs/main_job}")
[ -n "${HELDOUT:-}" ] && args+=(--heldout "$HELDOUT")
[ -n "${DOCUMENTS:-}" ] && args+=(--documents "$DOCUMENTS")
# CPU seconds of the bootstrap (user + system of the finished child processes), from bash's `times`
# (run in this shell, not in a $(...) subshell, which would count only its own children).
times > /tmp/main_job_times.$$
cpu=$(tail -1 /tmp/main_job_times.$$ | awk '{ n = 0; for (i = 1; i <= NF; i++) { split($i, t, "m"); n += t[1] * 60 + t[2] } print n }')
rm -f /tmp/main_job_times.$$
exec .venv/bin/python -m evidence.main_job "${args[@]}" --job-start "$start" --job-cpu-seconds "$cpu"
