"""Inputs several case modules use: the repository's fixture files (only ever read) and a good QA input line."""

import json
import os
from pathlib import Path

from tests import REPO_ROOT

FIXTURES = REPO_ROOT / "fixtures"
CONFIGS = FIXTURES / "configs"
QA_CONFIG = CONFIGS / "qa" / "squad11_tiny.jsonnet"
PRETRAINING_CONFIG = CONFIGS / "pretraining" / "spanbert_tiny.jsonnet"
SQUAD = FIXTURES / "qa" / "squad11.json"
COREF_KEY = FIXTURES / "coref" / "segmented_document.gold_conll"
MULTI_PART_KEY = FIXTURES / "coref" / "multi_part.gold_conll"
MULTI_PART_RESPONSE = FIXTURES / "coref" / "multi_part.response_conll"
CORPUS = FIXTURES / "corpus"

QUESTION = {"question": "When did the bridge open?", "passage": "The bridge opened in March 1932 after years."}
GOOD_LINE = json.dumps(QUESTION)


def write_pickle_with_code(path: Path) -> Path:
    """A ``.th`` file whose unpickling would call ``os.getcwd`` (any callable would do)."""
    import pickle

    import torch

    class CallsCode:
        def __reduce__(self):
            return (os.getcwd, ())

    torch.save({"weights": CallsCode()}, path, pickle_module=pickle)
    return path
