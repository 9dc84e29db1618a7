"""
The anchors' adapters and what connects them to the library (``README.md`` here). Two sides:

* the main environment (``.venv``) runs ``litbank_export``, ``make_env``, ``predictions_to_conll`` and
  ``score_predictions`` as modules from the repository root (``python -m evidence.baselines.NAME``);
* the anchors' own environment (``.venv-baselines/anchors``) runs the adapters (``fastcoref_litbank.py``,
  ``maverick_litbank.py``, ``spanmarker_litbank.py``) and the inference runners as plain files: this folder is then
  the script's own folder, first on ``sys.path``, and they import their siblings (``anchor_common``,
  ``epoch_checkpoints``, ...) by their bare names. That environment has neither allennlp nor this library.
"""
