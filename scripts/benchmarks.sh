#!/usr/bin/env bash
# Runs every benchmark in benchmarks/ (each compares against its reference implementation
# side by side and prints ratios). Creates/updates ./.venv first. Pass a name to run one:
#   bash scripts/benchmarks.sh                       # all
#   bash scripts/benchmarks.sh masking_throughput    # benchmarks/masking_throughput.py only
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONWARNINGS=ignore
if [ $# -gt 0 ]; then
  benchmarks=("benchmarks/$1.py")
else
  benchmarks=(benchmarks/*.py)
fi
for benchmark in "${benchmarks[@]}"; do
  echo "=== $benchmark"
  .venv/bin/python "$benchmark"
done
