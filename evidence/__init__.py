"""
The evidence harness: the scripts that produce the figures the documentation quotes (side-by-side runs
against other tools, learning curves, the main job, the failure sweep), run from the repository root as
``python -m evidence.NAME``, and what they share: where the real data is (:mod:`.external_data`), how
trainings are run and measured (:mod:`.runs`), how seeds are summarised (:mod:`.summary`), a baseline's own
virtual environment (:mod:`.environments`, :mod:`.anchors`). ``evidence/baselines/`` holds the adapters of
the other tools.

It is part of the repository, not of the installed library: ``spanbert_lib`` never imports it. The shared
modules import neither allennlp, torch nor a task package: a script imports what it needs.
"""

import os

# The scripts never reach the Hugging Face hub (the library no longer sets this for the process).
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
