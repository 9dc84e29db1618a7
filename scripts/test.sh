#!/usr/bin/env bash
# Runs the whole test suite; creates/updates ./.venv first (scripts/bootstrap.sh).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -m "not slow"`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
exec .venv/bin/python -m pytest -n "${PYTEST_WORKERS:-2}" "$@"
