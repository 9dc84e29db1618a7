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
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple

ENVIRONMENT = ".venv-baselines/anchors"
MAKE_ENVIRONMENT = ".venv/bin/python -m evidence.baselines.make_env"
# the checkout, two folders up: this environment cannot import the harness (evidence.repository)
DEFAULT_ENCODER = str(Path(__file__).resolve().parents[2] / "pretrained" / "all-MiniLM-L6-v2")
DEFAULT_MEMORY_LIMIT_GB = 18.0  # LingMess on LitBank's longest documents: ~10 GB RSS, over 12 GB of address space
_memory_limit_gb = None  # the cap limit_memory set, named when a run goes over it


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


def limit_memory(gigabytes: float) -> None:
    """
    Caps this process's address space at ``gigabytes`` (0: no cap), so that a run needing more fails alone with an
    allocation error (:func:`run_adapter` says so in one line) instead of driving a shared machine into the kernel's
    OOM killer. An undertrained Maverick, for one, proposes nearly every span of a sentence as a mention and its
    pairwise scoring then asks for tens of GB.
    """
    global _memory_limit_gb
    if gigabytes and gigabytes > 0:
        limit = int(gigabytes * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        _memory_limit_gb = gigabytes


def out_of_memory(error: BaseException) -> Optional[str]:
    """One line saying ``error`` is an allocation failure (naming the cap), or None when it is something else."""
    if not isinstance(error, (MemoryError, RuntimeError)):
        return None
    message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    if not isinstance(error, MemoryError) and "alloc" not in message.lower() and "memory" not in message.lower():
        return None
    cap = f"over the --memory-limit-gb cap of {_memory_limit_gb:g} GB" if _memory_limit_gb else "no cap set"
    return f"out of memory ({cap}): {message[:300]}"


def run_adapter(main: Callable[[], int]) -> int:
    """``main()``; running out of memory ends it with one line naming the cap instead of a traceback."""
    try:
        return main()
    except (MemoryError, RuntimeError) as error:
        line = out_of_memory(error)
        if line is None:
            raise
        sys.exit(f"error: {line}")


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
    parser.add_argument(
        "--curve-every",
        type=int,
        default=0,
        help="also predict the dev documents after every N epochs and after the last (RUN/curve/epoch_NNN/): a "
        "learning curve; the time it takes is left out of the training time (default 0: no curve)",
    )
    parser.add_argument(
        "--memory-limit-gb",
        type=float,
        default=DEFAULT_MEMORY_LIMIT_GB,
        help=f"cap on the process's address space (default {DEFAULT_MEMORY_LIMIT_GB:g}; 0: none)",
    )
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


class LearningCurve:
    """
    Dev predictions during training: :meth:`after` predicts the dev documents after every ``every`` epochs (or
    optimizer steps: ``unit="step"``) and after the last (``epochs``) with ``predict()`` (-> one record per dev
    document or sentence, as the adapter's final ``dev_predictions.jsonl``) into ``RUN/curve/<unit>_NNN/`` (a folder
    ``score_predictions.py --run`` scores), with the training CPU seconds spent so far. The seconds the predictions
    take are kept apart (:meth:`deduct` takes them out of the training timing); a prediction that runs out of memory
    is recorded as such and training goes on.
    """

    def __init__(
        self, out: Path, every: int, epochs: int, predict: Callable[[], List[Dict]], unit: str = "epoch"
    ) -> None:
        self.folder, self.every, self.epochs, self.predict, self.unit = out / "curve", every, epochs, predict, unit
        self.points: List[Dict] = []
        self.spent = {"wall_seconds": 0.0, "cpu_seconds": 0.0}  # by this process's predictions
        self._start_cpu = cpu_seconds()
        self._before = {"training_cpu_seconds": 0.0, "spent": {"wall_seconds": 0.0, "cpu_seconds": 0.0}}

    def resume(self, record: Dict, training_cpu_seconds: float) -> None:
        """Carries on a curve an earlier process began (its :meth:`record`), after that many training CPU seconds."""
        self.points = list(record["points"])
        self._before = {"training_cpu_seconds": training_cpu_seconds, "spent": dict(record["prediction_seconds_total"])}

    def due(self, count: int) -> bool:
        return self.every > 0 and (count % self.every == 0 or count == self.epochs)

    def after(self, count: int) -> None:
        """Called after each epoch (or optimizer step, as ``unit`` says) ``count``; predicts when :meth:`due`, once."""
        if not self.due(count) or any(point[self.unit] == count for point in self.points):
            return
        point: Dict = {
            self.unit: count,
            "training_cpu_seconds": round(
                self._before["training_cpu_seconds"] + cpu_seconds() - self._start_cpu - self.spent["cpu_seconds"], 2
            ),
        }
        wall, cpu = time.perf_counter(), cpu_seconds()
        try:
            records = self.predict()
        except (MemoryError, RuntimeError) as error:
            line = out_of_memory(error)
            if line is None:
                raise
            point["error"] = line
        else:
            folder = self.folder / f"{self.unit}_{count:03d}"
            folder.mkdir(parents=True, exist_ok=True)
            write_jsonl(folder / "dev_predictions.jsonl", records)
            point["run"] = str(folder)
        point["prediction_wall_seconds"] = round(time.perf_counter() - wall, 2)
        point["prediction_cpu_seconds"] = round(cpu_seconds() - cpu, 2)
        self.spent["wall_seconds"] += point["prediction_wall_seconds"]
        self.spent["cpu_seconds"] += point["prediction_cpu_seconds"]
        self.folder.mkdir(parents=True, exist_ok=True)
        self.points.append(point)
        write_json(self.folder / "points.json", self.record())  # kept as it grows: an interrupted run keeps its curve
        print(f"curve: {self.unit} {count} {point.get('error', 'predicted')}", flush=True)

    def deduct(self, training: Dict[str, float]) -> Dict[str, float]:
        """``training`` (a :class:`Stopwatch` record) less the seconds the curve's predictions took."""
        return {name: round(value - self.spent[name], 2) for name, value in training.items()}

    def record(self) -> Dict:
        spent = {name: round(value + self._before["spent"][name], 2) for name, value in self.spent.items()}
        return {f"every_{self.unit}s": self.every, "points": self.points, "prediction_seconds_total": spent}


def finish(out: Path, stopwatch: Stopwatch, documents: int, extra: Dict, earlier_peak_rss_mib: float = 0.0) -> None:
    """Writes ``prediction_seconds.json`` (prediction only) and ``run.json`` (all timings, peak RSS - with that of
    the earlier processes of a resumed run -, settings)."""
    write_json(out / "prediction_seconds.json", dict(stopwatch.records["prediction"], documents=documents))
    peak = max(peak_rss_mib(), earlier_peak_rss_mib)
    write_json(
        out / "run.json",
        dict(extra, timings=stopwatch.records, peak_rss_mib=round(peak, 1), torch_threads=_threads()),
    )


def check_same_tensors(trained: Dict, loaded: Dict, where: Path) -> int:
    """Raises unless two state dicts hold the same names and equal tensors (a saved model loaded back as it was
    trained); returns the number of tensors."""
    import torch

    differing = sorted(set(trained) ^ set(loaded)) + sorted(
        name for name in set(trained) & set(loaded) if not torch.equal(trained[name].cpu(), loaded[name].cpu())
    )
    if differing:
        raise RuntimeError(
            f"{where} does not load back as trained: {len(differing)} tensors differ, e.g. {differing[0]}"
        )
    return len(trained)


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


def runner_main(load: Callable, description: str, saved_by: str) -> int:
    """
    The command line of a runner file (``fastcoref_inference.py``, ``maverick_inference.py``): ``MODEL DOCUMENTS
    [--limit N] [--threads T]``, ``load(model_dir, threads)`` then one ``{"doc_key", "clusters"}`` line per document
    of the JSONL ``{doc_key, sentences}`` (``litbank_export.py``'s ``coref_dev.jsonl``).
    """
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("model", help=f"a saved model folder ({saved_by}'s RUN/model)")
    parser.add_argument("documents", help="JSONL of {doc_key, sentences} (litbank_export.py's coref_dev.jsonl)")
    parser.add_argument("--limit", type=int, default=None, help="only the first N documents")
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    runner = load(args.model, args.threads)
    for document in read_jsonl(args.documents)[: args.limit]:
        clusters = runner.predict(runner.prepare(document["sentences"]))
        print(json.dumps({"doc_key": document["doc_key"], "clusters": clusters}))
    return 0
