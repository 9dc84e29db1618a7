"""
What the anchor adapters (``fastcoref_litbank.py``, ``maverick_litbank.py``, ``spanmarker_litbank.py``) share. They
run in the anchors' own environment (``.venv-baselines/anchors``), never in the library's: this module imports
nothing of ``spanbert_lib`` and nothing of the anchors at import time.
"""

import argparse
import importlib
import json
import os
import random
import resource
import shutil
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterable, Iterator, List, Tuple

REPO_ROOT = Path(__file__).resolve().parents[2]
ENVIRONMENT = ".venv-baselines/anchors"
MAKE_ENVIRONMENT = ".venv/bin/python scripts/baselines/make_env.py"
DEFAULT_ENCODER = str(REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2")


def require_modules(system: str, modules: Iterable[str]) -> None:
    """Exits with one line naming the command that makes the environment when a module cannot be imported."""
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as error:
            sys.exit(
                f"error: {system} is not installed in {sys.executable} ({error}); it runs in the anchors' "
                f"environment: create it with `{MAKE_ENVIRONMENT}`, then run "
                f"`{ENVIRONMENT}/bin/python {Path(sys.argv[0]).as_posix()} ...`"
            )


def offline_environment(cache_dir: Path) -> None:
    """No hub, no wandb, one torch thread unless told otherwise, and a Hugging Face datasets cache of the run's
    own (datasets fingerprints a generator by its arguments, not by the file it reads: a shared cache could hand a
    run another run's data)."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    os.environ["WANDB_MODE"] = "disabled"
    os.environ["WANDB_SILENT"] = "true"
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    os.environ["HF_DATASETS_CACHE"] = str(cache_dir)
    shutil.rmtree(cache_dir, ignore_errors=True)
    cache_dir.mkdir(parents=True)


def seed_everything(seed: int) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))


def base_parser(description: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--train", required=True, help="training JSONL (litbank_export.py)")
    parser.add_argument("--dev", required=True, help="dev JSONL (litbank_export.py); its predictions are written")
    parser.add_argument("--encoder", default=DEFAULT_ENCODER, help="local Hugging Face encoder folder (MiniLM)")
    parser.add_argument("--epochs", type=float, default=6, help="passes over the training data")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True, help="run folder: dev_predictions.jsonl, prediction_seconds.json")
    return parser


def check_inputs(args: argparse.Namespace) -> None:
    for name in ("train", "dev"):
        if not Path(getattr(args, name)).is_file():
            sys.exit(f"error: --{name} {getattr(args, name)} is not a file (write it with litbank_export.py)")
    if not (Path(args.encoder) / "config.json").is_file():
        sys.exit(f"error: --encoder {args.encoder} is no Hugging Face model folder (no config.json)")


def read_jsonl(path) -> List[Dict]:
    with open(path, encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


def write_jsonl(path: Path, records: Iterable[Dict]) -> None:
    with open(path, "w", encoding="utf-8") as stream:
        for record in records:
            stream.write(json.dumps(record, ensure_ascii=False) + "\n")


def write_json(path: Path, value: Dict) -> None:
    path.write_text(json.dumps(value, indent=2) + "\n")


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Stopwatch:
    """Wall and CPU seconds of a ``with`` block (``measure``), recorded under a name."""

    def __init__(self) -> None:
        self.records: Dict[str, Dict[str, float]] = {}

    @contextmanager
    def measure(self, name: str) -> Iterator[None]:
        wall, cpu = time.perf_counter(), cpu_seconds()
        yield
        self.records[name] = {
            "wall_seconds": round(time.perf_counter() - wall, 2),
            "cpu_seconds": round(cpu_seconds() - cpu, 2),
        }


def finish(out: Path, stopwatch: Stopwatch, documents: int, extra: Dict) -> None:
    """Writes ``prediction_seconds.json`` (prediction only) and ``run.json`` (all timings, peak RSS, settings)."""
    write_json(out / "prediction_seconds.json", dict(stopwatch.records["prediction"], documents=documents))
    write_json(
        out / "run.json",
        dict(extra, timings=stopwatch.records, peak_rss_mib=round(peak_rss_mib(), 1), torch_threads=_threads()),
    )


def _threads() -> int:
    import torch

    return torch.get_num_threads()


def clusters_in_words(clusters, word_of_piece) -> List[List[List[int]]]:
    """Clusters of ``(first piece, last piece)`` -> ``[[start word, end word], ...]``; mentions starting or ending on
    a piece of no word (special tokens) are left out, then clusters left empty."""
    out = []
    for cluster in clusters:
        mentions = []
        for start, end in cluster:
            first, last = word_of_piece(int(start)), word_of_piece(int(end))
            if first is None or last is None or first > last:
                continue
            if [first, last] not in mentions:
                mentions.append([first, last])
        if mentions:
            out.append(mentions)
    return out


def segment_bounds(length: int, max_length: int) -> List[Tuple[int, int]]:
    """
    ``(start, end)`` of consecutive pieces of a sequence of ``length`` positions such that each, with ``[CLS]``
    added before a piece not at the start and ``[SEP]`` after a piece not at the end, fits ``max_length``.
    """
    if max_length < 3:
        raise ValueError(f"max_length must be at least 3, got {max_length}")
    bounds, start = [], 0
    while start < length:
        room = max_length - (1 if start > 0 else 0)
        end = length if length - start <= room else start + room - 1
        bounds.append((start, end))
        start = end
    return bounds
