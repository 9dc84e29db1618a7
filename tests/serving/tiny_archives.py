"""
Tiny trained archives of every task, built from the fixture configs in a few seconds, for the
serving tests. The coreference and NER models are trained until they reproduce their (tiny)
training data, so that the page has real clusters and nested entities to draw.
"""

import json
from pathlib import Path
from typing import Dict

from tests import REPO_ROOT

CONFIGS = REPO_ROOT / "fixtures" / "configs"

COREF_TEXT = "Anna told Ben that she would call him. She called him the next day."
_COREF_SENTENCES = [
    [
        ("Anna", "(0)"),
        ("told", "-"),
        ("Ben", "(1)"),
        ("that", "-"),
        ("she", "(0)"),
        ("would", "-"),
        ("call", "-"),
        ("him", "(1)"),
        (".", "-"),
    ],
    [("She", "(0)"), ("called", "-"), ("him", "(1)"), ("the", "-"), ("next", "-"), ("day", "-"), (".", "-")],
]
NER_TEXT = "John and his family slept."  # nested PER entities in fixtures/ner/litbank

# SemEval-2010 Task 8 format (ID, tab, quoted sentence; relation; comment; blank line), sentences written here.
_SEMEVAL_RECORDS = [
    ("The <e1>flood</e1> was caused by heavy <e2>rain</e2>.", "Cause-Effect(e2,e1)"),
    ("The <e1>storm</e1> brought a long <e2>drought</e2> to the valley.", "Other"),
    ("The <e1>keys</e1> were kept in a small <e2>box</e2>.", "Content-Container(e1,e2)"),
    ("The <e1>engine</e1> of the <e2>boat</e2> was old.", "Component-Whole(e1,e2)"),
    ("A <e1>virus</e1> caused the <e2>fever</e2>.", "Cause-Effect(e1,e2)"),
    ("The <e1>letter</e1> was about the <e2>harvest</e2>.", "Message-Topic(e1,e2)"),
]


def _write_semeval_file(path: Path) -> Path:
    blocks = [
        f'{i}\t"{sentence}"\n{relation}\nComment:\n' for i, (sentence, relation) in enumerate(_SEMEVAL_RECORDS, 1)
    ]
    path.write_text("\n".join(blocks) + "\n", encoding="utf-8")
    return path


def _write_coref_document(path: Path, copies: int = 2) -> Path:
    lines = []
    for copy in range(copies):
        lines.append(f"#begin document (serving/{copy}); part 000")
        for sentence in _COREF_SENTENCES:
            lines.extend(f"serving/{copy} 0 {i} {word} - * - - - - * {tag}" for i, (word, tag) in enumerate(sentence))
            lines.append("")
        lines.append("#end document")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def build_tiny_archives(directory: Path) -> Dict[str, Path]:
    """Trains every tiny model under ``directory``; returns ``{name: serialization directory}``."""
    from allennlp.commands.train import train_model_from_file

    import spanbert_lib.plugin  # noqa: F401

    coref_data = _write_coref_document(directory / "coref.conll")
    semeval_data = str(_write_semeval_file(directory / "semeval.txt"))
    tiny_bert = str(REPO_ROOT / "fixtures" / "tiny_bert")
    litbank = REPO_ROOT / "fixtures" / "ner" / "litbank"
    runs = {
        "coref": (
            "coref/spanbert_coref_tiny.jsonnet",
            {
                "train_data_path": str(coref_data),
                "validation_data_path": str(coref_data),
                "trainer.num_epochs": 12,
                "trainer.optimizer.lr": 0.02,
                "data_loader.shuffle": False,
            },
        ),
        "qa": ("qa/squad11_tiny.jsonnet", {"trainer.num_epochs": 1}),
        # a threshold no null score can stay under: this SQuAD 2.0 model always abstains
        "qa_abstains": ("qa/squad20_tiny.jsonnet", {"trainer.num_epochs": 1, "model.null_score_threshold": -1e9}),
        "ner": (
            "ner/span_ner_tiny.jsonnet",
            {
                "dataset_reader.type": "spanbert_span_ner_litbank",
                "dataset_reader.max_span_width": 8,
                "train_data_path": str(litbank),
                "validation_data_path": str(litbank),
                "model.decoding": "nested",
                "trainer.num_epochs": 20,
                "trainer.optimizer.lr": 0.01,
            },
        ),
        "relation": ("relation/tiny_relation_classifier.jsonnet", {"trainer.num_epochs": 1}),
        "semeval": (
            REPO_ROOT / "training_configs" / "relation" / "semeval2010_minilm_cpu.jsonnet",
            {
                "dataset_reader.model_name": tiny_bert,
                "model.encoder.token_embedders.tokens.model_name": tiny_bert,
                "train_data_path": semeval_data,
                "validation_data_path": semeval_data,
                "trainer.learning_rate_scheduler.warmup_steps": 1,
            },
        ),
        "typing": ("entity_typing/entity_typing_tiny.jsonnet", {"trainer.num_epochs": 1}),
    }
    archives = {}
    for name, (config, overrides) in runs.items():
        serialization_dir = directory / name
        train_model_from_file(str(CONFIGS / config), str(serialization_dir), overrides=json.dumps(overrides))
        archives[name] = serialization_dir
    return archives
