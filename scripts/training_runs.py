"""
What the evidence scripts (``*_side_by_side.py``, ``coref_litbank_baseline.py``) share about the trainings
they start: one torch thread per training process, the Hugging Face hub never reached, allennlp's seeds.
"""

import os
from typing import Dict


def one_thread_env() -> Dict[str, str]:
    """This process's environment for a training process that uses one torch thread and stays offline."""
    return dict(
        os.environ,
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
    )


def seed_overrides(seed: int) -> Dict[str, int]:
    """allennlp's ``random_seed``, ``numpy_seed`` and ``pytorch_seed`` all set to ``seed``."""
    return {"random_seed": seed, "numpy_seed": seed, "pytorch_seed": seed}
