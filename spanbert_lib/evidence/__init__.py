"""
The harness of the evidence scripts (``scripts/*_side_by_side.py``, ``scripts/coref_litbank_baseline.py``)
and the benchmarks (``benchmarks/*.py``): where the real data is (:mod:`.external_data`), how trainings
are run and measured (:mod:`.runs`), how seeds are summarised (:mod:`.summary`), and a baseline's own
virtual environment (:mod:`.environments`).

Nothing here imports allennlp, torch or a task package: a script imports what it needs.
"""
