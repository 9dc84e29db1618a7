"""
The benchmarks: each compares a part of the library against its reference implementation side by side and prints
the ratios, run from the repository root as ``python -m benchmarks.NAME`` (``bash scripts/benchmarks.sh`` runs them
all). They measure through one helper, :mod:`benchmarks.measure`.

Part of the repository, not of the installed library. Standard library only at import time: some benchmarks run
their measuring side in another environment (the anchors' interpreter).
"""

import os

# The benchmarks never reach the Hugging Face hub (the library no longer sets this for the process).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
