"""
A fastcoref model saved by ``fastcoref_litbank.py`` (``RUN/model``: ``save_pretrained`` of the model and its
tokenizer) loaded back by fastcoref's own API - ``FCoref(model_name_or_path=RUN/model)`` or
``LingMessCoref(model_name_or_path=RUN/model)``, as the folder's ``config.json`` names the architecture - and run on
word-tokenised documents. Runs in the anchors' environment (``.venv-baselines/anchors``, README.md).

It is the runner of ``benchmarks/coref_inference.py``: :func:`load` ``(model_dir, threads)`` returns an object with
``prepare(sentences)`` (tokenisation and batching, fastcoref's ``_create_dataset`` / ``_prepare_batches``) and
``predict(prepared)`` (the forward pass and fastcoref's antecedent -> cluster decoding) -> clusters of inclusive
``[start, end]`` word spans over the document. By hand:

    .venv-baselines/anchors/bin/python evidence/baselines/fastcoref_inference.py RUN/model DATA/coref_dev.jsonl \
        [--limit N]      # prints {"doc_key", "clusters"} per document

Documents longer than 512 wordpieces are cut into consecutive 512-piece segments (fastcoref's ``LeftOversCollator``)
for both architectures, as in training: ``LingMessCoref`` otherwise pads whole documents for a Longformer, which a
512-position encoder cannot take.
"""

import json
import sys
from pathlib import Path
from typing import Any, Dict, List

# anchor_common lives beside this file: on sys.path when this file runs as a script; the benchmark, which loads it
# by file path, puts this folder on PYTHONPATH
from anchor_common import clusters_in_words, runner_main

ARCHITECTURES = ("FCorefModel", "LingMessModel")
ONE_BATCH = 10**9  # DynamicBatchSampler's max_tokens: a whole document in one batch


def architecture_of(model_dir: Path) -> str:
    """``FCorefModel`` or ``LingMessModel``, from the saved ``config.json``."""
    config = json.loads((Path(model_dir) / "config.json").read_text(encoding="utf-8"))
    names = [name for name in config.get("architectures") or [] if name in ARCHITECTURES]
    if not names:
        raise ValueError(f"{model_dir}/config.json names no fastcoref architecture ({config.get('architectures')})")
    return names[0]


def load_coref(model_dir: Path, device: str = "cpu"):
    """fastcoref's ``FCoref`` / ``LingMessCoref`` on ``model_dir``, documents cut into 512-wordpiece segments."""
    import spacy
    from fastcoref import FCoref, LingMessCoref
    from fastcoref.utilities.collate import LeftOversCollator

    loader = FCoref if architecture_of(model_dir) == "FCorefModel" else LingMessCoref
    # a blank pipeline: the documents come tokenised, and no spaCy model may be downloaded
    coref = loader(model_name_or_path=str(model_dir), device=device, nlp=spacy.blank("en"), enable_progress_bar=False)
    if not isinstance(coref.collator, LeftOversCollator):
        coref.collator = LeftOversCollator(
            tokenizer=coref.tokenizer, device=coref.device, max_segment_len=coref.max_segment_len
        )
    return coref


def batch_clusters(model, batch: Dict[str, Any]) -> List[List[List[List[int]]]]:
    """Word-level clusters of every document of a collated batch, decoded as fastcoref decodes them (mentions linked
    to their best-scoring antecedent; no singletons)."""
    import numpy as np
    import torch
    from fastcoref.utilities.util import create_clusters, create_mention_to_antecedent

    with torch.no_grad():
        outputs = model(batch, gold_clusters=None, return_all_outputs=True)
    span_starts, span_ends, _, coref_logits = (tensor.cpu().numpy() for tensor in outputs[:4])
    doc_indices, mention_to_antecedent = create_mention_to_antecedent(span_starts, span_ends, coref_logits)
    result = []
    for index in range(len(batch["subtoken_map"])):
        clusters = create_clusters(mention_to_antecedent[np.nonzero(doc_indices == index)])
        word_ids, new_token_map = batch["subtoken_map"][index], batch["new_token_map"][index]

        def word_of_piece(piece, word_ids=word_ids, new_token_map=new_token_map):
            if piece >= len(word_ids) or word_ids[piece] is None:
                return None
            return new_token_map[word_ids[piece]]

        result.append(clusters_in_words(clusters, word_of_piece))
    return result


class FastcorefRunner:
    """``prepare(sentences)`` / ``predict(prepared)`` around a loaded ``FCoref`` / ``LingMessCoref``."""

    def __init__(self, coref) -> None:
        self.coref = coref
        self.coref.model.eval()

    def prepare(self, sentences: List[List[str]]) -> List[Dict[str, Any]]:
        words = [word for sentence in sentences for word in sentence]
        dataset = self.coref._create_dataset([words], is_split_into_words=True)
        return list(self.coref._prepare_batches(dataset, ONE_BATCH))

    def predict(self, batches: List[Dict[str, Any]]) -> List[List[List[int]]]:
        [clusters] = [clusters for batch in batches for clusters in batch_clusters(self.coref.model, batch)]
        return clusters


def load(model_dir: str, threads: int) -> FastcorefRunner:
    """The benchmark's entry point: the saved model on the CPU with ``threads`` torch threads."""
    import torch

    torch.set_num_threads(threads)
    return FastcorefRunner(load_coref(Path(model_dir)))


if __name__ == "__main__":
    sys.exit(runner_main(load, __doc__.strip().split("\n\n")[0], "fastcoref_litbank.py"))
