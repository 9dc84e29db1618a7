#!/usr/bin/env bash
# Trains the LitBank coreference and span-NER models from the shipped configs (creates/updates ./.venv first):
#   bash scripts/models.sh coref     # models/litbank_coref/model.tar.gz
#   bash scripts/models.sh ner       # models/litbank_ner/model.tar.gz
#   bash scripts/models.sh all       # both
# Says how long it will take before it starts, shows one progress bar, prints the dev scores and the time taken.
# LitBank is read from $SPANBERT_LIB_EXTERNAL_DATA (default ../shared/data); where to get it: docs/data.md.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false PYTHONWARNINGS=ignore
exec .venv/bin/python -m evidence.litbank_models "${@:-all}"
