"""
Tiny trained archives (``model.tar.gz``) for the spaCy component and ONNX export tests, built from
the fixture configs in seconds and shared by every test module of a run (under a file lock, so
pytest-xdist workers train them once). The coreference and NER models are trained until they
reproduce their tiny training data, so that the components have real clusters and nested entities.
"""

import json
import os
from pathlib import Path
from typing import Dict

from filelock import FileLock

from tests import REPO_ROOT

CONFIGS = REPO_ROOT / "fixtures" / "configs"

# the coreference training document, two copies; the text the tests run is the same story
COREF_TEXT = "Anna told Ben that she would call him. She called him the next day."
_COREF_SENTENCES = [
    [("Anna", "(0)"), ("told", "-"), ("Ben", "(1)"), ("that", "-"), ("she", "(0)"), ("would", "-")]
    + [("call", "-"), ("him", "(1)"), (".", "-")],
    [("She", "(0)"), ("called", "-"), ("him", "(1)"), ("the", "-"), ("next", "-"), ("day", "-"), (".", "-")],
]
NER_TEXT = "John and his family slept."  # nested PER entities in fixtures/ner/litbank

NAMES = ("coref", "ner", "qa")


def _write_coref_document(path: Path, copies: int = 2) -> Path:
    lines = []
    for copy in range(copies):
        lines.append(f"#begin document (story/{copy}); part 000")
        for sentence in _COREF_SENTENCES:
            lines.extend(f"story/{copy} 0 {i} {word} - * - - - - * {tag}" for i, (word, tag) in enumerate(sentence))
            lines.append("")
        lines.append("#end document")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _runs(directory: Path) -> Dict[str, tuple]:
    coref_data = str(_write_coref_document(directory / "coref.conll"))
    litbank = str(REPO_ROOT / "fixtures" / "ner" / "litbank")
    return {
        "coref": (
            "coref/spanbert_coref_tiny.jsonnet",
            {
                "train_data_path": coref_data,
                "validation_data_path": coref_data,
                "trainer.num_epochs": 12,
                "trainer.optimizer.lr": 0.02,
                "data_loader.shuffle": False,
            },
        ),
        "ner": (
            "ner/span_ner_tiny.jsonnet",
            {
                "dataset_reader.type": "spanbert_span_ner_litbank",
                "dataset_reader.max_span_width": 8,
                "train_data_path": litbank,
                "validation_data_path": litbank,
                "model.decoding": "nested",
                "trainer.num_epochs": 20,
                "trainer.optimizer.lr": 0.01,
            },
        ),
        "qa": ("qa/squad11_tiny.jsonnet", {"trainer.num_epochs": 1}),
    }


def shared_archives(base: Path) -> Dict[str, Path]:
    """
    ``{name: model.tar.gz}`` of the tiny coreference, span NER and QA models, trained once per test
    run under ``base`` (pytest's base temporary directory; its parent under pytest-xdist).
    """
    from allennlp.commands.train import train_model_from_file

    import spanbert_lib.plugin  # noqa: F401

    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "spacy_onnx_tiny_archives"
    shared.mkdir(exist_ok=True)
    with FileLock(str(shared / "lock")):
        for name, (config, overrides) in _runs(shared).items():
            serialization_dir = shared / name
            if not (serialization_dir / "model.tar.gz").exists():
                train_model_from_file(
                    str(CONFIGS / config), str(serialization_dir), overrides=json.dumps(overrides), force=True
                )
    return {name: shared / name / "model.tar.gz" for name in NAMES}
