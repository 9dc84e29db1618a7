"""Constants and helpers shared by the corpus reader tests."""

from pathlib import Path
from typing import List, Union

from tests import REPO_ROOT

FIXTURE_CORPUS = REPO_ROOT / "fixtures" / "corpus"

# [PAD] deliberately not at index 0, so that padding with the pad id is distinguishable from zeros.
HAND_VOCAB = [
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[PAD]",
    "[MASK]",
    "The",
    "the",
    "cat",
    "sat",
    "on",
    "mat",
    ".",
    ",",
    "A",
    "dog",
    "ran",
    "un",
    "##believ",
    "##able",
    "##ab",
    "##ly",
    "fast",
    "Barack",
    "Obama",
    "visited",
    "Paris",
    "in",
    "2010",
    "He",
    "was",
    "happy",
    "It",
    "rained",
]
PAD_ID = HAND_VOCAB.index("[PAD]")
CLS_ID = HAND_VOCAB.index("[CLS]")
SEP_ID = HAND_VOCAB.index("[SEP]")


def pieces(instance, field: str = "input_ids") -> List[str]:
    """The instance's wordpieces as strings of HAND_VOCAB."""
    return [HAND_VOCAB[i] for i in instance[field].tensor.tolist()]


def values(instance, field: str) -> List[int]:
    return instance[field].tensor.tolist()


def write(path: Path, content: Union[str, bytes]) -> Path:
    """Writes UTF-8 text (or raw bytes), creating parent directories; returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path
