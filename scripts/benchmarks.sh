#!/usr/bin/env bash
# Runs every benchmark in benchmarks/ (each compares against its reference implementation
# side by side and prints ratios). Creates/updates ./.venv first. Pass a name to run one:
#   bash scripts/benchmarks.sh                       # all
#   bash scripts/benchmarks.sh masking_throughput    # python -m benchmarks.masking_throughput only
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONWARNINGS=ignore
if [ $# -gt 0 ]; then
  benchmarks=("$1")
else
  benchmarks=()
  for file in benchmarks/*.py; do
    name=$(basename "$file" .py)
    # the package and its measuring helper are not benchmarks
    [ "$name" = __init__ ] || [ "$name" = measure ] || benchmarks+=("$name")
  done
fi
for benchmark in "${benchmarks[@]}"; do
  echo "=== benchmarks.$benchmark"
  .venv/bin/python -m "benchmarks.$benchmark"
done
