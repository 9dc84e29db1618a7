"""
Coreference inference: this project's ``spanbert_coref`` model vs allennlp-models' ``coref``
model (Lee et al. 2018 with coarse-to-fine pruning and second-order inference), same encoder
(MiniLM-L6-H384, ``pretrained/all-MiniLM-L6-v2``) and settings (max span width 30, 0.4 spans
per word, 50 antecedents, 2 inference rounds, FFNN 300, features 20, segments / folding windows
of 256 wordpieces), on documents of about 500, 2,000 and 8,000 words.

Both models are randomly initialised on top of the pretrained encoder (timing and memory do
not depend on training). Every measurement runs in its own subprocess:

* ``seconds``: ``model(**tensors)`` + ``make_output_human_readable`` in eval mode without
  gradients (best of ``--repeats``), after a warm-up forward on a short document;
* ``forward_peak_mb``: the process's peak resident memory DURING that forward (Linux: the
  peak is reset through ``/proc/self/clear_refs`` just before it; elsewhere the whole
  process's peak), and ``process_peak_mb`` (``resource`` max RSS, including loading);
* ``tensorize_seconds``: instance -> tensors (reported, not part of ``seconds``).

Threads: ``--threads`` (default 1) intra-op threads per measurement, the same for both models.
On a machine shared with other jobs (more runnable processes than cores) two threads are
SLOWER than one for both models, as every parallel operation waits for a descheduled
worker; use ``--threads 2`` (or more) on an idle machine.

A subprocess's address space is capped (``--memory-limit-gb``, and never more than the memory
available minus 2 GiB) so an out-of-memory baseline fails alone instead of starving the machine;
it is then reported as ``OOM (> cap)``.

    python benchmarks/coref_inference.py                 # 500, 2000, 8000 words, LitBank text
    python benchmarks/coref_inference.py --words 500 2000 --repeats 2 --json results.json

Text: LitBank documents (``../shared/data/coref/litbank``, or ``$SPANBERT_LIB_EXTERNAL_DATA``)
concatenated in name order and cut at a sentence end; synthetic sentences when absent.
"""

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

from spanbert_lib.evidence.external_data import external_path
from spanbert_lib.evidence.repository import REPO_ROOT
from spanbert_lib.evidence.runs import offline_env

ENCODER = str(REPO_ROOT / "pretrained" / "all-MiniLM-L6-v2")
SETTINGS = dict(
    max_span_width=30, top_span_ratio=0.4, max_antecedents=50, depth=2, ffnn=300, feature_size=20, segment_len=256
)
SYSTEMS = ("spanbert_coref", "allennlp_coref")


# ---------------------------------------------------------------- text


def litbank_dir() -> Optional[Path]:
    path = external_path("coref/litbank")
    return path if path.is_dir() else None


def document_sentences(num_words: int) -> List[List[str]]:
    """Whole sentences adding up to about ``num_words`` words (at least ``num_words``)."""
    sentences: List[List[str]] = []
    total = 0
    directory = litbank_dir()
    if directory is not None:
        from spanbert_lib.coref.conll_format import iter_conll_documents

        for path in sorted(directory.glob("*.conll")):
            for document in iter_conll_documents(path):
                for sentence in document.sentences:
                    if total >= num_words:
                        return sentences
                    sentences.append(list(sentence))
                    total += len(sentence)
    generator = random.Random(0)  # synthetic fallback (or LitBank ran out)
    vocabulary = (
        "the man woman house she he it they said saw old young city river friend "
        "letter morning night because and but then came went told her his"
    ).split()
    while total < num_words:
        sentence = [generator.choice(vocabulary) for _ in range(generator.randint(5, 35))] + ["."]
        sentences.append(sentence)
        total += len(sentence)
    return sentences


# ---------------------------------------------------------------- models


def build_spanbert_coref():
    from allennlp.data import Vocabulary
    from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder

    import spanbert_lib.plugin  # noqa: F401
    from spanbert_lib.common.token_embedders import SegmentedTransformerEmbedder
    from spanbert_lib.common.token_indexers import SegmentedWordpieceIndexer
    from spanbert_lib.coref.dataset_readers import SpanBertCorefReader
    from spanbert_lib.coref.models import SpanBertCoreference

    s = SETTINGS
    reader = SpanBertCorefReader(
        {"tokens": SegmentedWordpieceIndexer(ENCODER, max_segment_len=s["segment_len"])},
        max_span_width=s["max_span_width"],
    )
    embedder = BasicTextFieldEmbedder({"tokens": SegmentedTransformerEmbedder(ENCODER)})
    model = SpanBertCoreference(
        Vocabulary(),
        embedder,
        max_span_width=s["max_span_width"],
        feature_size=s["feature_size"],
        ffnn_size=s["ffnn"],
        top_span_ratio=s["top_span_ratio"],
        max_top_antecedents=s["max_antecedents"],
        coref_depth=s["depth"],
        use_speaker=False,
        use_genre=False,
    )

    def instance(sentences):
        return reader.text_to_instance(sentences)

    return model, instance


def build_allennlp_coref():
    import allennlp_models.coref  # noqa: F401
    from allennlp.data import Vocabulary
    from allennlp.data.token_indexers import PretrainedTransformerMismatchedIndexer
    from allennlp.modules import FeedForward
    from allennlp.modules.seq2seq_encoders import PassThroughEncoder
    from allennlp.modules.text_field_embedders import BasicTextFieldEmbedder
    from allennlp.modules.token_embedders import PretrainedTransformerMismatchedEmbedder
    from allennlp.nn import Activation
    from allennlp_models.coref.models.coref import CoreferenceResolver
    from allennlp_models.coref.util import make_coref_instance

    s = SETTINGS
    indexers = {"tokens": PretrainedTransformerMismatchedIndexer(ENCODER, max_length=s["segment_len"])}
    embedder = BasicTextFieldEmbedder(
        {"tokens": PretrainedTransformerMismatchedEmbedder(ENCODER, max_length=s["segment_len"])}
    )
    hidden = embedder.get_output_dim()
    span_dim = 3 * hidden + s["feature_size"]
    model = CoreferenceResolver(
        Vocabulary(),
        embedder,
        PassThroughEncoder(hidden),
        mention_feedforward=FeedForward(span_dim, 1, s["ffnn"], Activation.by_name("relu")(), 0.3),
        antecedent_feedforward=FeedForward(
            3 * span_dim + s["feature_size"], 1, s["ffnn"], Activation.by_name("relu")(), 0.3
        ),
        feature_size=s["feature_size"],
        max_span_width=s["max_span_width"],
        spans_per_word=s["top_span_ratio"],
        max_antecedents=s["max_antecedents"],
        coarse_to_fine=True,
        inference_order=s["depth"],
    )

    def instance(sentences):
        return make_coref_instance(sentences, indexers, s["max_span_width"])

    return model, instance


# ---------------------------------------------------------------- one measurement


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def _status_mb(field: str) -> Optional[float]:
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _max_rss_mb() -> float:
    scale = 1024 * 1024 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / scale


def measure(system: str, num_words: int, repeats: int, threads: int) -> Dict[str, object]:
    import torch
    from allennlp.data import Batch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    model, make_instance = (build_spanbert_coref if system == "spanbert_coref" else build_allennlp_coref)()
    model.eval()

    def tensors_of(sentences):
        batch = Batch([make_instance(sentences)])
        batch.index_instances(model.vocab)
        return batch.as_tensor_dict()

    def run(tensors):
        with torch.no_grad():
            output = model(**tensors)
            return model.make_output_human_readable(output)

    run(
        tensors_of([["Anna", "told", "Ben", "that", "she", "was", "leaving", "."], ["He", "smiled", "."]])
    )  # warm-up: lazy initialisation, thread pools
    sentences = document_sentences(num_words)
    start = time.perf_counter()
    tensors = tensors_of(sentences)
    tensorize_seconds = time.perf_counter() - start
    num_spans = int((tensors["spans"][0, :, 0] >= 0).sum())
    before_mb = _status_mb("VmRSS")
    reset = _reset_peak_rss()
    best = float("inf")
    output = None
    for _ in range(repeats):
        start = time.perf_counter()
        output = run(tensors)
        best = min(best, time.perf_counter() - start)
    forward_peak = _status_mb("VmHWM") if reset else None
    return {
        "system": system,
        "words": sum(len(s) for s in sentences),
        "candidate_spans": num_spans,
        "clusters": len(output["clusters"][0]),
        "seconds": best,
        "tensorize_seconds": tensorize_seconds,
        "rss_before_forward_mb": before_mb,
        "forward_peak_mb": forward_peak if forward_peak is not None else _max_rss_mb(),
        "forward_peak_increase_mb": (forward_peak - before_mb) if forward_peak and before_mb else None,
        "process_peak_mb": _max_rss_mb(),
        "threads": torch.get_num_threads(),
    }


def worker_main(args) -> None:
    limit = int(args.memory_limit_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    try:
        result = measure(args.worker, args.words[0], args.repeats, args.threads)
    except (MemoryError, RuntimeError) as error:
        if "memory" not in str(error).lower() and not isinstance(error, MemoryError):
            raise
        result = {"system": args.worker, "words": args.words[0], "oom": True, "error": str(error).splitlines()[0][:200]}
    print("RESULT " + json.dumps(result))


# ---------------------------------------------------------------- driver


def available_gb() -> Optional[float]:
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def run_worker(
    system: str, num_words: int, repeats: int, threads: int, cap_gb: float, timeout: float
) -> Dict[str, object]:
    available = available_gb()
    if available is not None:
        cap_gb = min(cap_gb, max(2.0, available - 2.0))
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        system,
        "--words",
        str(num_words),
        "--repeats",
        str(repeats),
        "--threads",
        str(threads),
        "--memory-limit-gb",
        f"{cap_gb:.2f}",
    ]
    env = dict(offline_env(threads), PYTHONWARNINGS="ignore")
    try:
        completed = subprocess.run(
            command, capture_output=True, text=True, timeout=timeout, cwd=str(REPO_ROOT), env=env
        )
    except subprocess.TimeoutExpired:
        return {"system": system, "words": num_words, "error": f"timed out after {timeout:.0f} s"}
    for line in completed.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT ") :])
            result["memory_cap_gb"] = round(cap_gb, 2)
            return result
    tail = (completed.stderr or completed.stdout).strip().splitlines()[-3:]
    oom = completed.returncode in (-9, 137) or any("memory" in line.lower() for line in tail)
    return {
        "system": system,
        "words": num_words,
        "oom": oom,
        "memory_cap_gb": round(cap_gb, 2),
        "error": f"exit {completed.returncode}: {' | '.join(tail)[:300]}",
    }


def _cell(result: Dict[str, object], key: str, fmt: str) -> str:
    if result.get("oom"):
        return f"OOM(>{result.get('memory_cap_gb')}G)"
    if "error" in result:
        return "error"
    value = result.get(key)
    return format(value, fmt) if isinstance(value, (int, float)) else "-"


def report(results: List[Dict[str, object]]) -> str:
    by_key = {(r["system"], r["words_requested"]): r for r in results}
    sizes = sorted({r["words_requested"] for r in results})
    lines = [
        f"{'words':>6} {'cands':>7} | {'ours s':>7} {'base s':>9} {'speedup':>7} | "
        f"{'ours MB':>8} {'base MB':>9} {'mem ratio':>9} | {'ours +MB':>8} {'base +MB':>9}"
    ]
    for size in sizes:
        ours, base = by_key.get(("spanbert_coref", size), {}), by_key.get(("allennlp_coref", size), {})
        speedup = mem_ratio = "-"
        if isinstance(ours.get("seconds"), float) and isinstance(base.get("seconds"), float):
            speedup = f"{base['seconds'] / ours['seconds']:.2f}x"
        elif isinstance(ours.get("seconds"), float) and base.get("oom"):
            speedup = "n/a"
        if isinstance(ours.get("forward_peak_mb"), float) and isinstance(base.get("forward_peak_mb"), float):
            mem_ratio = f"{ours['forward_peak_mb'] / base['forward_peak_mb']:.2f}"
        elif isinstance(ours.get("forward_peak_mb"), float) and base.get("oom"):
            mem_ratio = f"<{ours['forward_peak_mb'] / (1024 * base['memory_cap_gb']):.2f}"
        words = ours.get("words", base.get("words", size))
        lines.append(
            f"{words:>6} {_cell(ours, 'candidate_spans', 'd'):>7} | "
            f"{_cell(ours, 'seconds', '.2f'):>7} {_cell(base, 'seconds', '.2f'):>9} {speedup:>7} | "
            f"{_cell(ours, 'forward_peak_mb', '.0f'):>8} {_cell(base, 'forward_peak_mb', '.0f'):>9} "
            f"{mem_ratio:>9} | {_cell(ours, 'forward_peak_increase_mb', '.0f'):>8} "
            f"{_cell(base, 'forward_peak_increase_mb', '.0f'):>9}"
        )
    lines.append(
        "speedup = baseline seconds / ours; mem ratio = ours / baseline peak RSS during "
        "the forward (whole process, model included); +MB = rise of RSS during it; "
        "OOM: the baseline could not allocate within the cap (n/a speedup, mem ratio "
        "bounded by the cap)"
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, nargs="+", default=[500, 2000, 8000])
    parser.add_argument("--systems", nargs="+", choices=SYSTEMS, default=list(SYSTEMS))
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1, help="intra-op threads per model")
    parser.add_argument("--memory-limit-gb", type=float, default=16.0)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per measurement")
    parser.add_argument("--json", help="also write the raw results here")
    parser.add_argument("--worker", choices=SYSTEMS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker_main(args)
        return 0
    if not Path(ENCODER).exists():
        print(f"encoder not found at {ENCODER} (run scripts/bootstrap.sh)", file=sys.stderr)
        return 1
    print(
        f"text: {'LitBank' if litbank_dir() else 'synthetic'}; threads: {args.threads}; settings: {SETTINGS}",
        flush=True,
    )
    results = []
    started = time.perf_counter()
    for size in args.words:
        for system in args.systems:
            result = run_worker(system, size, args.repeats, args.threads, args.memory_limit_gb, args.timeout)
            result["words_requested"] = size
            results.append(result)
            shown = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in result.items()}
            print(json.dumps(shown), flush=True)
    print(report(results))
    print(f"total wall time {time.perf_counter() - started:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
