"""
A Maverick model saved by ``maverick_litbank.py`` (``RUN/model/weights.ckpt``, the Lightning checkpoint of its
``BasePLModule``, weights and hyper-parameters) loaded back by Maverick's own API,
``Maverick(hf_name_or_path=RUN/model, device="cpu")``, and run on word-tokenised documents with singletons predicted
(its LitBank mode). Runs in the anchors' environment (``.venv-baselines/anchors``, README.md); the checkpoint's model
is ``maverick_segments.SegmentedMaverickMes`` over the encoder folder it was trained from (its absolute path is in
the checkpoint), so this folder must be importable: it is when this file runs as a script, and the benchmark,
which loads it by file path, puts it on ``PYTHONPATH``.

It is the runner of ``benchmarks/coref_inference.py``: :func:`load` ``(model_dir, threads)`` returns an object with
``prepare(sentences)`` (Maverick's ``preprocess`` + ``tokenize`` into tensors) and ``predict(prepared)`` (its model's
forward pass, as ``Maverick.predict`` calls it, and the word offsets of the clusters) -> clusters of inclusive
``[start, end]`` word spans. By hand:

    .venv-baselines/anchors/bin/python evidence/baselines/maverick_inference.py RUN/model DATA/coref_dev.jsonl \
        [--limit N]      # prints {"doc_key", "clusters"} per document
"""

import contextlib
import sys
from pathlib import Path
from typing import Any, Dict, List

# anchor_common lives beside this file (see above)
from anchor_common import runner_main

CHECKPOINT = "weights.ckpt"  # the file name Maverick looks for in a model folder or hub repository


def load_maverick(model_dir: Path, device: str = "cpu"):
    """``maverick.Maverick`` on the saved folder (the package resolves ``model_dir/weights.ckpt``)."""
    from maverick import Maverick

    with contextlib.redirect_stdout(sys.stderr):  # it prints where it looked for the checkpoint
        return Maverick(hf_name_or_path=str(model_dir), device=device)


class MaverickRunner:
    """``prepare(sentences)`` / ``predict(prepared)`` around a loaded ``Maverick``, singletons predicted."""

    def __init__(self, maverick, singletons: bool = True) -> None:
        self.maverick = maverick
        self.singletons = singletons

    def prepare(self, sentences: List[List[str]]) -> Dict[str, Any]:
        import torch

        tokens, eos_indices, speakers, _ = self.maverick.preprocess(sentences)
        tokenized = self.maverick.tokenize(tokens, eos_indices, speakers)
        device = self.maverick.device
        return {
            "tokenized": tokenized,
            "input_ids": torch.tensor(tokenized["input_ids"]).unsqueeze(0).to(device),
            "attention_mask": torch.tensor(tokenized["attention_mask"]).unsqueeze(0).to(device),
            "eos_mask": torch.tensor(tokenized["eos_mask"]).unsqueeze(0).to(device),
        }

    def predict(self, prepared: Dict[str, Any]) -> List[List[List[int]]]:
        import torch
        from maverick.common.util import original_token_offsets

        tokenized = prepared["tokenized"]
        with torch.no_grad():  # the arguments Maverick.predict passes, without gold mentions or clusters
            output = self.maverick.model(
                stage="test",
                input_ids=prepared["input_ids"],
                attention_mask=prepared["attention_mask"],
                eos_mask=prepared["eos_mask"],
                tokens=[tokenized["tokens"]],
                subtoken_map=[tokenized["subtoken_map"]],
                new_token_map=[tokenized["new_token_map"]],
                singletons=self.singletons,
                add=None,
                gold_mentions=None,
            )
        clusters = original_token_offsets(
            clusters=output["pred_dict"]["clusters"],
            subtoken_map=tokenized["subtoken_map"],
            new_token_map=tokenized["new_token_map"],
        )
        return [[list(span) for span in cluster] for cluster in clusters]


def load(model_dir: str, threads: int) -> MaverickRunner:
    """The benchmark's entry point: the saved model on the CPU with ``threads`` torch threads."""
    import torch

    torch.set_num_threads(threads)
    return MaverickRunner(load_maverick(Path(model_dir)))


if __name__ == "__main__":
    sys.exit(runner_main(load, __doc__.strip().split("\n\n")[0], "maverick_litbank.py"))
